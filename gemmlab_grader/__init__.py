"""The grader: grading a class's notebooks (``gemmlab-grade``, ``python -m gemmlab_grader``, or
``gemmlab grade``). It imports gemmlab (the bank, ``judge_question``, the answer kinds); gemmlab
never imports it, and a student's copy of the course (``gemmlab assign --release``) leaves it out.

- :mod:`.grade`: the orchestration (``--jobs`` notebooks at a time, each inside a boundary;
  restoring what a notebook changed; judging); :mod:`.submissions`: finding them, lessons,
  shards; :mod:`.__main__`: the command line; :mod:`.merge`: joining shards' outputs.
- :mod:`.execute`: one notebook's run as the grader sees it; :mod:`.runner`: running it in a
  fresh kernel, on the student's side of the confinement; :mod:`.collect`: reading back what it
  sent, in a confined process; :mod:`.answers`: collecting the answers in the kernel (values
  travel with :mod:`gemmlab.judging.values`).
- :mod:`.isolate`: ``judge_code``, a student's code alone in a confined worker
  (:mod:`gemmlab.judging.worker`), judged from here (:mod:`gemmlab.judging.cell`).
- :mod:`.confine` (limits, killing whole process trees), :mod:`.sandbox` (bubblewrap),
  :mod:`.folders` (folders of any depth: snapshot, restore, removal), :mod:`.integrity` (the
  package snapshot and copies, the environment and /dev/shm watches), :mod:`.withheld_bank` (the
  bank as a graded notebook sees it), :mod:`.report` (summary, tables, CSVs, JSON) and
  :mod:`.publish` (the HTML page; writing every report).
"""
