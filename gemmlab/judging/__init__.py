"""How an answer is judged: the layer below both the labs and the question bank.

- :mod:`.verdict`: the statuses ``PASS``, ``FAIL``, ``NOT_ATTEMPTED``; ``is_missing`` (None or
  ``...``); ``AnswerTypeError``; ``tallied``, the cases a judging run got right (partial credit).
- :mod:`.kinds`: the answer kinds ``Number``, ``Exact``, ``Choice``, ``Shape``, ``Array``,
  ``Function``; :mod:`.question`: ``Question``, ``Wrong``, ``evaluate``.
- :mod:`.source`: how a student's function travels between processes (``code_of``, the fixed
  ``PREAMBLE``, ``load_function``).
- :mod:`.where`: ``where_it_lives``, the protocol by which a check runs a helper next to a
  function that may live in another process (the grader's proxy has a ``call_helper`` method),
  and how the package's helpers and kinds are named across processes.
- :mod:`.allow`: what a code answer may do (``Allows``): the namespace its cell runs in
  (granted builtins, facades, stand-in arguments) and the allow-list on its source
  (``refused``).
- :mod:`.runtime` (+ :mod:`.runtime_child`, sent as text): a Python answer runs in a process of
  its own with the standard library, NumPy where granted and its hand-outs, nothing of gemmlab;
  ``check()`` and the grader judge it from outside. A stateful hand-out (lab 12's ``wmma``)
  stays with the judge: the runtime holds handles, and each call asks the judge (``served``).
- :mod:`.worker` and :mod:`.cell`: the grader runs a cell's code alone in a sandboxed worker
  process and judges it from outside (``judge_cell``); :mod:`.values` carries values between the
  two without pickle. A notebook's ``check()`` calls the same kinds in its own process.

It imports nothing of ``gemmlab.grading``, ``gemmlab.labs`` or the grader: the labs and the bank
build on it, ``check()`` and the grader use it. (A lab's cell is sent to the worker wrapped
in a call of ``gemmlab.grading.answer.load_answer``, which the worker imports: the declarations
live beside the bank.)
"""
from .kinds import Array, Choice, Exact, Function, Number, Shape, describe
from .question import Question, Wrong, evaluate
from .source import PREAMBLE, code_of, load_function
from .verdict import FAIL, NOT_ATTEMPTED, PASS, AnswerTypeError, is_missing
from .where import where_it_lives

__all__ = ["PASS", "FAIL", "NOT_ATTEMPTED", "is_missing", "AnswerTypeError", "Number", "Exact",
           "Choice", "Shape", "Array", "Function", "describe", "Question", "Wrong", "evaluate",
           "PREAMBLE", "code_of", "load_function", "where_it_lives"]
