"""Which Tensor Core paths of the course run on a GPU, by compute capability, and why not.

    gl.tensorcore.support((7, 5))     # {"wmma_fp16": Path(runs=True, ...), "wmma_bf16": ..., ...}

Answers from the compute capability alone (no GPU needed), from the same rules the kernels' own
checks use (``kernel.why_not``, ``hopper.runs_on``), so a T4 student can read what their GPU
will run before running it, and ``gemmlab doctor`` says it for the GPU in hand.
"""
from dataclasses import dataclass

from . import kernel
from .hopper import build

PATHS = {
    "wmma_fp16": "WMMA kernel, FP16 inputs (lesson 12, part 1)",
    "wmma_bf16": "WMMA kernel, BF16 inputs",
    "hopper": "Hopper ladder: wgmma, TMA, warp specialisation (lesson 12b)",
}


@dataclass(frozen=True)
class Path:
    """One path on one GPU: ``runs``, and ``detail``: how it runs there, or why it does not."""
    name: str
    runs: bool
    detail: str

    def line(self):
        return f"{PATHS[self.name]}: " + ("runs, " if self.runs else "does not run: ") + self.detail


def compute_capability(cc):
    """(major, minor) from (8, 6), [8, 6] or "8.6"; ValueError otherwise."""
    if isinstance(cc, str):
        parts = cc.strip().split(".")
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            return int(parts[0]), int(parts[1])
    elif (isinstance(cc, (tuple, list)) and len(cc) == 2
          and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in cc)):
        return int(cc[0]), int(cc[1])
    raise ValueError(f"expected a compute capability like (8, 6) or '8.6', got {cc!r}")


def support(cc):
    """{path: :class:`Path`} for a GPU of compute capability ``cc``."""
    cc = compute_capability(cc)
    found = {}
    for name, fmt in (("wmma_fp16", "fp16"), ("wmma_bf16", "bf16")):
        why = kernel.why_not(cc, fmt)
        copies = ("cp.async copies into shared memory" if cc >= kernel.BF16_COMPUTE_CAPABILITY
                  else "plain loads and stores into shared memory (cp.async needs 8.0)")
        found[name] = Path(name, why is None, why or f"with {copies}")
    why = build.runs_on(cc)
    found["hopper"] = Path("hopper", why is None, why or "built for sm_90a")
    return found


def report(cc=None, backend="sim"):
    """Lines for ``gemmlab doctor``: the CUDA C++ compiler, then each path on the GPU in hand
    (compute capability ``cc`` as ``gl.device.info()`` gives it), or why none is in use."""
    from .. import cudacompile
    ok, compiler = cudacompile.available()
    lines = [f"CUDA C++ compiler: {compiler}" if ok else f"CUDA C++ compiler: none ({compiler})"]
    if backend != "gpu" or cc is None:
        return lines + [f"{desc}: not here (no GPU in use: the simulator backend, so the lessons "
                        f"use the NumPy emulation)" for desc in PATHS.values()]
    return lines + [p.line() for p in support(cc).values()]
