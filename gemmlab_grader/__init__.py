"""The grader: grading a class's notebooks (``gemmlab-grade``, ``python -m gemmlab_grader``, or
``gemmlab grade``). It imports gemmlab (the bank, ``judge_question``, the answer kinds); gemmlab
never imports it, and a student's copy of the course (``gemmlab assign --release``) leaves it out.
Untrusted notebooks run only inside bubblewrap (:mod:`.sandbox`, the one trust boundary);
``--trusted`` runs the instructor's own notebooks with no sandbox and guards nothing. Its modules
are listed, one line each, in docs/architecture.md; :mod:`.grade` is the place to start.
"""
