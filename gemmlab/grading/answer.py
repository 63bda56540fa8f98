"""A code answer loaded under its question's declaration (:mod:`gemmlab.judging.allow`), in any
process: the cell a worker runs for a Function question
(:meth:`gemmlab.judging.kinds.Function.worker_source`) calls :func:`load_answer` there, so the
answer is judged in the namespace its question builds whichever process runs it."""
from ..judging.allow import PLAIN
from ..judging.source import defined
from .allowed import ALLOWS


def load_answer(question_id, source, name, filename="<your cell>"):
    """``{name: value}`` the cell binds under ``question_id``'s declaration (``{}`` if none)."""
    return defined(source, name, filename, ALLOWS.get(question_id, PLAIN))

