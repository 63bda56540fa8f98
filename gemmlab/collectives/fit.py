"""Estimate alpha (seconds per step) and beta (seconds per byte) from measured all-reduce times.

An algorithm's model time is ``steps * alpha + bytes * beta`` with its ``steps`` and ``bytes``
from :func:`~gemmlab.collectives.cost.allreduce_cost`; for a sweep of sizes at a fixed number of
ranks this is linear in (alpha, beta), so a least-squares fit recovers them. The fit weighs each
point by 1/time (it minimises relative errors), otherwise the largest sizes would decide alone
and alpha would be noise. On a CPU the reduction's cost per byte (gamma) is folded into beta.
"""
from dataclasses import dataclass

import numpy as np

from .cost import allreduce_cost


@dataclass(frozen=True)
class AlphaBetaFit:
    algorithm: str   # what was measured
    model: str       # whose step and byte counts the fit used (an ALGORITHMS name)
    n_ranks: int
    alpha: float     # seconds per step
    beta: float      # seconds per byte on the critical path

    def predict(self, size_bytes):
        """Model time in seconds for an all-reduce of ``size_bytes`` per rank."""
        return allreduce_cost(self.model, self.n_ranks, size_bytes).time(self.alpha, self.beta)

    @property
    def bandwidth(self):
        """1 / beta in GB/s (10^9 bytes per second)."""
        return 1 / self.beta / 1e9 if self.beta > 0 else float("inf")

    def __str__(self):
        return (f"{self.algorithm} on {self.n_ranks} ranks: alpha = {self.alpha * 1e6:.2f} us "
                f"per step, beta = 1 / ({self.bandwidth:.3g} GB/s)")


def _nonnegative_lstsq(design, target):
    """Least squares with both coefficients >= 0 (two unknowns: try the full fit, then each
    coefficient alone, and keep the best admissible one)."""
    best = None
    for cols in ((0, 1), (0,), (1,)):
        coef = np.zeros(2)
        coef[list(cols)] = np.linalg.lstsq(design[:, cols], target, rcond=None)[0]
        if (coef >= 0).all():
            err = float(np.sum((design @ coef - target) ** 2))
            if best is None or err < best[0]:
                best = (err, coef)
    return best[1] if best else np.zeros(2)


def fit_alpha_beta(algorithm, n_ranks, sizes, seconds, model=None):
    """Fit alpha and beta to times measured for ``algorithm`` on ``n_ranks`` at several sizes,
    with the step and byte counts of ``model`` (by default the algorithm's own)."""
    model = algorithm if model is None else model
    sizes, seconds = np.asarray(sizes, dtype=float), np.asarray(seconds, dtype=float)
    if sizes.shape != seconds.shape or sizes.ndim != 1:
        raise ValueError(f"sizes and seconds must be 1-D and of equal length, got shapes "
                         f"{sizes.shape} and {seconds.shape}")
    if len(np.unique(sizes)) < 2:
        raise ValueError("a fit of two unknowns needs measurements at two or more sizes")
    if (seconds <= 0).any():
        raise ValueError("every measured time must be positive")
    costs = [allreduce_cost(model, n_ranks, s) for s in sizes]
    design = np.array([[c.steps, c.bytes] for c in costs], dtype=float) / seconds[:, None]
    alpha, beta = _nonnegative_lstsq(design, np.ones_like(seconds))
    return AlphaBetaFit(algorithm, model, int(n_ranks), float(alpha), float(beta))


# The libraries' own all-reduces ("mpi": MPI's Allreduce, "nccl": NCCL's allReduce) are fitted
# with the ring's step and byte counts, the shape of their large-message algorithms; so is our
# ring driven step by step from Python and our ring over NVLink loads (the same ring, other ways of
# driving it).
LIBRARY_MODELS = {"mpi": "ring", "nccl": "ring", "ring_stepwise": "ring", "ring_nvlink": "ring"}


def fit_records(records):
    """One fit per (algorithm, ranks) among the all-reduce records of ``run_allreduce`` or
    ``run_allreduce_nccl`` (a library's own all-reduce with the model of :data:`LIBRARY_MODELS`);
    records of other collectives (``collective`` other than all-reduce) are left out."""
    groups = {}
    for r in records:
        if r.get("collective", "allreduce") == "allreduce":
            groups.setdefault((r["algorithm"], r["n_ranks"]), []).append(r)
    return [fit_alpha_beta(name, n, [r["size_bytes"] for r in group],
                           [r["seconds"] for r in group], model=LIBRARY_MODELS.get(name, name))
            for (name, n), group in groups.items()]
