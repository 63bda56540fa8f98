"""What remains of the rule lists: the refusal of a cell's source, for the judging of a cell
(:mod:`gemmlab.judging.cell` and ``check()``).

A code answer is confined by what its question allows (:mod:`gemmlab.judging.allow`): the
namespace its cell runs in, and an allow-list on its source. Nothing is listed as forbidden and
nothing is patched at run time any more.
"""
from .allow import refused


def broken(allows, source):
    """The message naming the first rule ``source`` breaks under ``allows``, or None."""
    return None if allows is None else refused(allows, source)
