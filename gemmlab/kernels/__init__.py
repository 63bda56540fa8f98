"""The GEMM kernel ladder in numba.cuda, one module per rung, and its registry.

Each rung computes ``C_out = alpha A B + beta C_in`` on float32 row-major matrices of any shape.
A rung module exposes ``PARAMS`` (its tile constants), ``plan(**tiles)`` (validates them and says
how to launch: block, grid, shared memory) and ``kernel(**tiles)`` (the compiled kernel, cached per
constants). Default tiles per backend live in ``gemmlab.device.SIZES["tiles_<name>"]``: small on
the simulator, large on a GPU. ``gemmlab.kernels.cpu`` holds the CPU baselines; they are not rungs.

    >>> gl.kernels.names()
    ['naive', 'tiled', 'outer', 'pingpong', 'twolevel']
"""
import difflib
import importlib
import numbers
from dataclasses import dataclass

from .. import device
from ._common import warp_patch  # noqa: F401  (public: lesson 11's shared-memory model uses it)


@dataclass(frozen=True)
class Rung:
    name: str
    lesson: str           # the notebook that introduces it
    description: str

    @property
    def module(self):
        return importlib.import_module(f".{self.name}", __name__)

    @property
    def params(self):
        return self.module.PARAMS

    def default_tiles(self):
        """This backend's default tile constants (from ``gemmlab.device.SIZES``)."""
        return dict(device.sizes()[f"tiles_{self.name}"])

    def resolve(self, tiles):
        """The defaults updated with ``tiles``; unknown names and non-integers are rejected."""
        unknown = sorted(set(tiles) - set(self.params))
        if unknown:
            raise ValueError(f"kernel {self.name!r} has no tile parameter {', '.join(unknown)}; "
                             f"its parameters are {', '.join(self.params)}")
        for key, value in tiles.items():
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"tile parameter {key} must be a whole number, "
                                f"got {type(value).__name__} {value!r}")
        return {**self.default_tiles(), **{k: int(v) for k, v in tiles.items()}}

    def plan(self, **tiles):
        """Validated launch plan for complete tiles; raises ValueError past GPU limits."""
        plan = self.module.plan(**tiles)
        plan.check_limits(self.name, tiles)
        return plan

    def kernel(self, **tiles):
        return self.module.kernel(**tiles)


LADDER = (
    Rung("naive", "05", "one thread per output; its dot product read straight from DRAM"),
    Rung("tiled", "05", "T x T shared-memory tiles, one output per thread"),
    Rung("outer", "10", "register blocking: a TM x TN micro-tile per thread, outer-product updates"),
    Rung("pingpong", "08", "outer + two shared buffers, next K-tile prefetched through registers"),
    Rung("twolevel", "11", "pingpong + two register sets of A/B fragments (k+1 read during k)"),
)
_BY_NAME = {r.name: r for r in LADDER}


def names():
    """The rungs, in course order."""
    return [r.name for r in LADDER]


def get(name):
    """The rung called ``name``; a ValueError lists the valid names (and the closest one)."""
    if name not in _BY_NAME:
        close = difflib.get_close_matches(str(name), _BY_NAME, n=1)
        also = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown kernel {name!r}; the kernels are {', '.join(names())}.{also}")
    return _BY_NAME[name]
