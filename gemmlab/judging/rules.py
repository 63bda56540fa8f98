"""What remains of the rule lists: the refusal of a cell's source, for the judging of a cell
(:mod:`gemmlab.judging.cell`), and two names older callers still import.

A code answer is confined by what its question allows (:mod:`gemmlab.judging.allow`): the
namespace its cell runs in, and an allow-list on its source. Nothing is listed as forbidden and
nothing is patched at run time any more.
"""
from dataclasses import dataclass

from .allow import refused


def broken(allows, source):
    """The message naming the first rule ``source`` breaks under ``allows``, or None."""
    return None if allows is None else refused(allows, source)


@dataclass(frozen=True)
class Rules:
    """A lab's old declaration (``gemmlab.labs.kernel_lab.KERNEL_RULES``) and the worker's
    request field: data only, enforced by nothing. Questions declare an ``Allows`` instead."""
    names: tuple = ()

    @classmethod
    def from_data(cls, data):
        return cls(tuple(map(str, (data or {}).get("names", ()))))


def out_of_reach(rules):
    """Nothing to do: what a question does not allow is not in its answer's namespace. Kept until
    the worker (issue 36) loads cells through :func:`gemmlab.judging.source.load_function`."""
