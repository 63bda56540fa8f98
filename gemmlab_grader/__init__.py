"""The grader: grading a class's notebooks (``gemmlab-grade``, ``python -m gemmlab_grader``, or
``gemmlab grade``). It imports gemmlab (the bank, ``judge_question``, the answer kinds); gemmlab
never imports it, and a student's copy of the course (``gemmlab assign --release``) leaves it out.
Untrusted notebooks run only inside bubblewrap (:mod:`.sandbox`, the one trust boundary);
``--trusted`` runs the instructor's own notebooks with no sandbox and guards nothing.

- :mod:`.grade`: the orchestration (``--jobs`` notebooks at a time, each inside a boundary;
  judging); :mod:`.submissions`: finding them, lessons, shards; :mod:`.__main__`: the command
  line; :mod:`.merge`: joining shards' outputs.
- :mod:`.execute`: one notebook's run as the grader sees it; :mod:`.runner`: running it in a
  fresh kernel, inside the sandbox; :mod:`.collect`: reading back what it sent;
  :mod:`.answers`: collecting the answers in the kernel.
- :mod:`.isolate`: ``judge_code``, a student's code alone in a sandboxed worker
  (:mod:`gemmlab.judging.worker`), judged from here (:mod:`gemmlab.judging.cell`).
- :mod:`.confine` (limits, ending a tree), :mod:`.folders` (reading and snapshotting folders of any
  depth), :mod:`.integrity` (the package copy), :mod:`.withheld_bank` (the bank as a graded
  notebook sees it), :mod:`.report` and :mod:`.publish` (the reports).
"""
