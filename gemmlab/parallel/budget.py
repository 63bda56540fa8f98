"""The time budget of one tensor-parallel FFN layer on a 4D grid, per GPU and per microbatch.

This is the course's model (lesson 15, and the one the lab 15.lab_budget checks against). Four
terms, in seconds:

* ``gemm``: the six GEMMs of the layer on one TP rank (forward Z_r = X W_up,r and P_r = H_r
  W_down,r; backward dH_r, dW_down,r, dX_r, dW_up,r), each timed by the roofline,
  max(FLOPs / peak, bytes / HBM bandwidth), with the bytes of the *tiled* traffic model for the
  chosen square tile (``gemm_traffic(..., "tiled", tile=T)``). M = tokens / cp rows (context
  parallelism splits the sequence), f = d_ff / tp hidden features (tensor parallelism).
* ``tp_allreduce``: two ring all-reduces of the M x d_model activations (the forward's exit and
  the backward's dX) over the tp ranks of a TP group.
* ``dp_allreduce``: one ring all-reduce of this rank's weight gradients (W_up,r and W_down,r:
  2 d_model f values) over the ranks that hold the same weights, the dp x cp ranks with this
  rank's tp and pp coordinates (context-parallel ranks hold the same weights, as Megatron-LM
  reduces them), once per training step, so 1/microbatches of it per microbatch.
* ``pp_p2p``: at a stage boundary the M x d_model activations go to the next stage and their
  gradient comes back, two messages of ``alpha + bytes / bandwidth``, shared by the layers/pp
  layers of a stage; 0 when pp = 1.

A collective or message runs over NVLink when every group of its axes lies inside one node of
``gpus_per_node`` consecutive ranks (Megatron's numbering, :class:`RankGrid`), else over
InfiniBand. The ring all-reduce takes ``gl.collectives.allreduce_time("ring", n, S, alpha,
1 / bandwidth)``.
"""
from collections import defaultdict

from ..collectives.cost import allreduce_time
from ..numeric_args import positive, whole_number
from ..perfmodel.hardware import chip
from ..perfmodel.parallelism import message_time
from ..perfmodel.roofline import roofline_time
from ..perfmodel.traffic import gemm_flops, gemm_traffic
from .grid import RankGrid

TERMS = ("gemm", "tp_allreduce", "dp_allreduce", "pp_p2p")

_H200 = chip("H200")
# Lesson 15's running example: the FFN of a large model on the seed's (dp, pp, cp, tp) = (2, 4,
# 2, 8) grid of H200s, BF16, NVLink 450 GB/s per direction, one 400 Gb/s InfiniBand port per GPU.
DEFAULTS = {
    "tokens": 8192, "d_model": 8192, "d_ff": 32768, "layers": 32,
    "tp": 8, "cp": 2, "dp": 2, "pp": 4, "tile": 128, "itemsize": 2,
    "microbatches": 16, "gpus_per_node": 8,
    "peak_flops": _H200.peak("bf16"), "hbm_bandwidth": _H200.bandwidth.value,
    "nvlink_bandwidth": 450e9, "ib_bandwidth": 50e9, "alpha": 5e-6,
}
_WHOLE = ("tokens", "d_model", "d_ff", "layers", "tp", "cp", "dp", "pp", "tile", "itemsize",
          "microbatches", "gpus_per_node")
_DIVIDES = (("cp", "tokens", "context parallelism gives each rank tokens / cp of the sequence"),
            ("tp", "d_ff", "tensor parallelism gives each rank d_ff / tp hidden features"),
            ("pp", "layers", "pipeline parallelism gives each stage layers / pp layers"))


def budget_config(**changes):
    """Lesson 15's configuration with ``changes`` applied, checked: a dict the budget takes."""
    unknown = sorted(set(changes) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown budget settings {unknown}; the settings are "
                         f"{', '.join(DEFAULTS)}")
    cfg = {**DEFAULTS, **changes}
    for key, value in cfg.items():
        (whole_number if key in _WHOLE else positive)(f"budget setting {key}", value)
    for degree, size, why in _DIVIDES:
        if cfg[size] % cfg[degree]:
            raise ValueError(f"{why}: {size} = {cfg[size]} must be divisible by {degree} = "
                             f"{cfg[degree]}")
    return cfg


def rows_per_rank(cfg):
    """M: the tokens of one microbatch that one CP rank holds."""
    return cfg["tokens"] // cfg["cp"]


def features_per_rank(cfg):
    """f: the hidden features of the FFN that one TP rank holds."""
    return cfg["d_ff"] // cfg["tp"]


def gemm_shapes(M, D, f):
    """(forward, backward) GEMM shapes (m, n, k) of one TP rank's FFN: forward Z_r (M x f, over
    D) and P_r (M x D, over f); backward dH_r, dW_down,r, dX_r, dW_up,r."""
    return [(M, f, D), (M, D, f)], [(M, f, D), (f, D, M), (M, D, f), (D, f, M)]


def gemm_seconds(shapes, cfg, model="tiled"):
    """Roofline time of the GEMMs, their bytes counted by ``model`` ("tiled" with cfg's tile)."""
    tile = cfg["tile"] if model == "tiled" else None
    return sum(roofline_time(gemm_flops(m, n, k),
                             gemm_traffic(m, n, k, model, cfg["itemsize"], tile=tile),
                             cfg["peak_flops"], cfg["hbm_bandwidth"]) for m, n, k in shapes)


def inside_one_node(cfg, axes):
    """Whether every group along ``axes`` (ranks equal in the other coordinates) lies inside one
    node of ``gpus_per_node`` consecutive ranks."""
    grid = RankGrid(tp=cfg["tp"], cp=cfg["cp"], dp=cfg["dp"], pp=cfg["pp"])
    nodes = defaultdict(set)
    for rank in range(grid.size):
        coords = grid.coords(rank)._asdict()
        key = tuple(v for a, v in coords.items() if a not in axes)
        nodes[key].add(rank // cfg["gpus_per_node"])
    return all(len(found) == 1 for found in nodes.values())


def link_bandwidth(cfg, axes):
    """NVLink's bandwidth when every group along ``axes`` fits in one node, else InfiniBand's."""
    return cfg["nvlink_bandwidth"] if inside_one_node(cfg, axes) else cfg["ib_bandwidth"]


# The four terms; their keyword arguments default to the model's choices (the lab's checks pass
# other values to recognise a student's known mistakes).

def gemm_term(cfg, M, f, model="tiled", passes=("forward", "backward")):
    """The layer's GEMMs on one TP rank: M rows, f hidden features."""
    forward, backward = gemm_shapes(M, cfg["d_model"], f)
    shapes = (forward if "forward" in passes else []) + (backward if "backward" in passes else [])
    return gemm_seconds(shapes, cfg, model)


def tp_term(cfg, M, count=2, bandwidth=None, bytes_factor=1):
    """``count`` ring all-reduces of the M x d_model activations over a TP group."""
    nbytes = bytes_factor * M * cfg["d_model"] * cfg["itemsize"]
    bandwidth = bandwidth or link_bandwidth(cfg, ("tp",))
    return count * allreduce_time("ring", cfg["tp"], nbytes, cfg["alpha"], 1 / bandwidth)


def dp_term(cfg, f, axes=("dp", "cp"), bandwidth=None, microbatches=None):
    """This rank's weight gradients (2 d_model f values) all-reduced over the ranks along
    ``axes``, shared by the step's microbatches."""
    ranks = 1
    for axis in axes:
        ranks *= cfg[axis]
    nbytes = 2 * cfg["d_model"] * f * cfg["itemsize"]
    bandwidth = bandwidth or link_bandwidth(cfg, axes)
    seconds = allreduce_time("ring", ranks, nbytes, cfg["alpha"], 1 / bandwidth)
    return seconds / (cfg["microbatches"] if microbatches is None else microbatches)


def pp_term(cfg, M, messages=2, bandwidth=None, layers_per_stage=None):
    """``messages`` point-to-point messages of the M x d_model activations at a stage boundary,
    shared by the layers of a stage; 0 without pipeline parallelism."""
    if cfg["pp"] == 1:
        return 0.0
    bandwidth = bandwidth or link_bandwidth(cfg, ("pp",))
    share = cfg["layers"] // cfg["pp"] if layers_per_stage is None else layers_per_stage
    nbytes = M * cfg["d_model"] * cfg["itemsize"]
    return messages * message_time(nbytes, cfg["alpha"], bandwidth) / share


def layer_budget(cfg):
    """The four terms of one FFN layer's time per GPU and microbatch, in seconds (a dict with
    the keys of :data:`TERMS`); ``cfg`` as :func:`budget_config` returns it."""
    cfg = budget_config(**cfg)
    M, f = rows_per_rank(cfg), features_per_rank(cfg)
    return {"gemm": gemm_term(cfg, M, f), "tp_allreduce": tp_term(cfg, M),
            "dp_allreduce": dp_term(cfg, f), "pp_p2p": pp_term(cfg, M)}
