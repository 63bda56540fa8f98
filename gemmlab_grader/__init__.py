"""The grader: grading a class's notebooks (``gemmlab-grade``, ``python -m gemmlab_grader``, or
``gemmlab grade``). It imports gemmlab (the bank, ``judge_question``, the answer kinds); gemmlab
never imports it, and a student's copy of the course (``gemmlab assign --release``) leaves it out.

- :mod:`.grade`: the orchestration (finding submissions, one notebook after another, judging);
  :mod:`.__main__`: the command line.
- :mod:`.runner`: runs one notebook in a fresh kernel, on the student's side of the confinement;
  :mod:`.answers`: collects the answers there and carries values between processes.
- :mod:`.isolate` and :mod:`.worker`: ``judge_code``, a student's code in a confined process of
  its own, judged from here through a proxy (``RemoteFunction``).
- :mod:`.confine` (limits, killing whole process trees), :mod:`.sandbox` (bubblewrap),
  :mod:`.integrity` (the package snapshot and copies, the environment watch),
  :mod:`.withheld_bank` (the bank as a graded notebook sees it), :mod:`.report` (table, CSV, JSON).
"""
