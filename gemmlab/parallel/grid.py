"""The 4D rank grid: every rank gets one coordinate per parallelism (TP, CP, DP, PP).

The total is the product of the four degrees. Ranks are numbered with one axis varying fastest:
Megatron-LM's default is tp, then cp, then dp, then pp, so a TP group (the ranks that differ only
in their tp coordinate) is a run of consecutive ranks, which places the chattiest groups inside a
node. A group along an axis is built by fixing the other three coordinates and walking that one.
"""
from collections import namedtuple
from html import escape
from numbers import Integral

AXES = ("tp", "cp", "dp", "pp")
MEGATRON_ORDER = AXES
AXIS_NAMES = {"tp": "tensor", "cp": "context", "dp": "data", "pp": "pipeline"}

Coords = namedtuple("Coords", AXES)


def _is_whole(value):
    return isinstance(value, Integral) and not isinstance(value, bool)


def _degree(axis, value):
    if not _is_whole(value) or value < 1:
        raise ValueError(f"{axis} is the {AXIS_NAMES[axis]}-parallel degree: expected a whole "
                         f"number >= 1, got {value!r}")
    return value


def _order(order):
    """The four axes in ``order``, fastest first. Megatron-LM's own default string,
    'tp-cp-ep-dp-pp', names expert parallelism too; "ep" is accepted and dropped, since this grid
    has no experts (an axis of size 1 changes no rank's number)."""
    names = order.split("-") if isinstance(order, str) else list(order)
    axes = [n for n in names if n != "ep"]
    if sorted(axes) != sorted(AXES) or names.count("ep") > 1:
        raise ValueError(f"order must name each of {', '.join(AXES)} once (and may name ep once), "
                         f"fastest-varying first (e.g. 'tp-cp-dp-pp', or Megatron-LM's default "
                         f"'tp-cp-ep-dp-pp'), got {order!r}")
    return tuple(axes)


class RankGrid:
    """Ranks 0 .. tp*cp*dp*pp - 1 laid out on a 4D grid; ``order`` lists the axes fastest first
    (Megatron-LM's 'tp-cp-ep-dp-pp' is accepted, with ``ep`` of size 1)."""

    def __init__(self, tp=1, cp=1, dp=1, pp=1, order=MEGATRON_ORDER, ep=1):
        if ep != 1:
            raise ValueError(f"ep={ep!r}: expert parallelism is not modelled by this grid "
                             f"(Megatron-LM lays experts out on a second grid of its own); use ep=1")
        self.sizes = {a: int(_degree(a, v)) for a, v in zip(AXES, (tp, cp, dp, pp), strict=True)}
        self.order = _order(order)
        self.strides, stride = {}, 1
        for axis in self.order:
            self.strides[axis] = stride
            stride *= self.sizes[axis]
        self.size = stride

    def __len__(self):
        return self.size

    def __repr__(self):
        degrees = ", ".join(f"{a}={self.sizes[a]}" for a in AXES)
        return f"RankGrid({degrees}, order={'-'.join(self.order)!r})"

    def _check_axis(self, axis):
        if axis not in AXES:
            raise ValueError(f"axis must be one of {', '.join(AXES)}, got {axis!r}")

    def _check_rank(self, rank):
        if not _is_whole(rank) or not 0 <= rank < self.size:
            raise ValueError(f"rank must be a whole number from 0 to {self.size - 1} "
                             f"(this grid has {self.size} ranks), got {rank!r}")

    def coords(self, rank):
        """The (tp, cp, dp, pp) coordinates of ``rank``."""
        self._check_rank(rank)
        return Coords(**{a: int(rank) // self.strides[a] % self.sizes[a] for a in AXES})

    def rank(self, tp=0, cp=0, dp=0, pp=0):
        """The rank at the given coordinates (each from 0 to its degree - 1)."""
        coords = dict(zip(AXES, (tp, cp, dp, pp), strict=True))
        for axis, value in coords.items():
            if not _is_whole(value) or not 0 <= value < self.sizes[axis]:
                raise ValueError(f"{axis} coordinate must be a whole number from 0 to "
                                 f"{self.sizes[axis] - 1}, got {value!r}")
        return sum(int(coords[a]) * self.strides[a] for a in AXES)

    def group(self, axis, rank):
        """The ranks in ``rank``'s group along ``axis``: the other three coordinates fixed, this
        one walked from 0 up (so ``rank`` sits at position ``coords(rank).<axis>``)."""
        self._check_axis(axis)
        fixed = self.coords(rank)._asdict()
        return [self.rank(**{**fixed, axis: i}) for i in range(self.sizes[axis])]

    def groups(self, axis):
        """Every group along ``axis``, each a list of ranks; together they cover each rank once."""
        self._check_axis(axis)
        seen, result = set(), []
        for rank in range(self.size):
            if rank not in seen:
                members = self.group(axis, rank)
                seen.update(members)
                result.append(members)
        return result

    def _repr_html_(self):
        rows = "".join(
            f"<tr><td>{r}</td>" + "".join(f"<td>{c}</td>" for c in self.coords(r)) + "</tr>"
            for r in range(min(self.size, 64)))
        more = f"<p>... {self.size - 64} more ranks</p>" if self.size > 64 else ""
        head = "".join(f"<th>{a}</th>" for a in ("rank",) + AXES)
        return (f"<p>{escape(repr(self))}: {self.size} ranks</p>"
                f"<table><tr>{head}</tr>{rows}</table>{more}")
