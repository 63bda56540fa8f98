"""A code answer loaded under its question's declaration (:mod:`gemmlab.judging.allow`), in any
process: the cell a worker runs for a lab (:func:`gemmlab.judging.kinds.declared_cell`) calls
:func:`load_answer` there, so the answer is judged in the namespace its question builds whichever
process runs it. (A Function question's answer runs in :mod:`gemmlab.judging.runtime`.)"""
from ..judging.allow import PLAIN
from ..judging.source import defined
from .allowed import ALLOWS


def load_answer(question_id, source, name, filename="<your cell>"):
    """``{name: value}`` the cell binds under ``question_id``'s declaration (``{}`` if none)."""
    return defined(source, name, filename, ALLOWS.get(question_id, PLAIN))

