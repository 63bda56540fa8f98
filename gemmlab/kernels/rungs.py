"""The registry of the GEMM ladder: one :class:`Rung` per kernel module, in the order of the lessons.

A rung module exposes ``PARAMS`` (its tile constants), ``TILES`` (their defaults on the simulator
and on a GPU), ``plan(**tiles)`` (validates them and says how to launch: block, grid, shared
memory) and ``kernel(**tiles)`` (the compiled kernel, cached per constants). The rungs are
imported here by name, so an editor's "go to definition" leads from this table to each kernel.
"""
import difflib
import inspect
import numbers
import textwrap
from dataclasses import dataclass
from types import ModuleType

from .. import device
from . import naive, outer, pingpong, tiled, twolevel, unrolled

STEP_START = "# ---- step: "    # a marker line in a rung's source: "# ---- step: prefetch"
STEP_END = "# ---- end: "       # and its closing line:                 "# ---- end: prefetch"


@dataclass(frozen=True)
class Rung:
    module: ModuleType    # the rung's own file: PARAMS, TILES, plan(), kernel()
    lesson: str           # the notebook that introduces it
    description: str

    @property
    def name(self):
        return self.module.__name__.rsplit(".", 1)[1]

    @property
    def params(self):
        return self.module.PARAMS

    def default_tiles(self, backend=None):
        """The default tile constants on ``backend`` ("sim" or "gpu"; default: the one in use),
        as written in the rung's own file."""
        backend = backend or device.backend()
        if backend not in device.BACKENDS:
            raise ValueError(f"backend {backend!r}: expected one of {', '.join(device.BACKENDS)}")
        return dict(self.module.TILES[backend])

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

    def steps(self):
        """The names of the steps marked in the rung's source, in source order."""
        return [line.strip()[len(STEP_START):].strip() for line in self._source_lines()
                if line.strip().startswith(STEP_START)]

    def step_source(self, step):
        """The source lines between ``# ---- step: <step>`` and ``# ---- end: <step>`` in the
        rung's file, dedented, without the marker lines of this or any nested step."""
        lines = self._source_lines()
        start = [i for i, line in enumerate(lines) if line.strip() == STEP_START + step]
        end = [i for i, line in enumerate(lines) if line.strip() == STEP_END + step]
        if not start:
            raise ValueError(f"kernel {self.name!r} has no step {step!r}; its steps are "
                             f"{', '.join(self.steps()) or 'none'}")
        if len(start) != 1 or len(end) != 1 or end[0] < start[0]:
            raise ValueError(f"{self.module.__file__}: step {step!r} needs exactly one start "
                             f"marker followed by one end marker")
        body = [line for line in lines[start[0] + 1:end[0]]
                if not line.strip().startswith((STEP_START, STEP_END))]
        return textwrap.dedent("".join(body)).rstrip("\n")

    def _source_lines(self):
        return inspect.getsource(self.module).splitlines(keepends=True)


# In the order the lessons teach them; each rung is the one before it plus one lesson's idea.
LADDER = (
    Rung(naive, "05", "one thread per output; its dot product read straight from DRAM"),
    Rung(tiled, "05", "T x T shared-memory tiles, one output per thread"),
    Rung(pingpong, "08", "tiled + two shared buffers, next K-tile prefetched through registers"),
    Rung(outer, "10", "pingpong's K loop + register blocking: a TM x TN micro-tile per thread, "
                      "outer-product updates"),
    Rung(twolevel, "11", "outer + two register sets of A/B fragments (k+1 read during k)"),
    Rung(unrolled, "11", "twolevel's data flow with the k loop written out, 128-bit global loads "
                         "and two blocks per SM"),
)
_BY_NAME = {r.name: r for r in LADDER}


def names():
    """The rungs, in the order the lessons teach them."""
    return [r.name for r in LADDER]


def get(name):
    """The rung called ``name``; a ValueError lists the valid names (and the closest one)."""
    if not isinstance(name, str):
        raise TypeError(f"kernel must be the name of a rung, e.g. 'tiled', got "
                        f"{type(name).__name__} {name!r}; the kernels are {', '.join(names())}")
    if name not in _BY_NAME:
        close = difflib.get_close_matches(str(name), _BY_NAME, n=1)
        also = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown kernel {name!r}; the kernels are {', '.join(names())}.{also}")
    return _BY_NAME[name]


def show_step(name, step):
    """Print the step ``step`` of rung ``name`` as its source marks it, e.g.
    ``show_step("pingpong", "k_tile")``: the code a lesson talks about, read from the kernel."""
    print(get(name).step_source(step))
