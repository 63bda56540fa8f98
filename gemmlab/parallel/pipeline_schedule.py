"""A pipeline-parallel schedule simulator: GPipe and 1F1B on p stages and m micro-batches.

Each stage runs its forward (F) and backward (B) steps one at a time, in the order its schedule
gives; F(s, i) waits for F(s-1, i), B(s, i) for B(s+1, i) (the last stage's for its own F). The
simulation gives the makespan, each stage's idle share (the bubble, (p-1)/(m+p-1) when F and B
cost the same on every stage) and the most micro-batches whose activations a stage holds at once
(GPipe: m; 1F1B: at most p - s). Huang et al. 2019 (GPipe); Narayanan et al. 2021 (PipeDream-Flush,
"1F1B", in "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM").
"""
from dataclasses import dataclass

from ..numeric_args import whole_number

SCHEDULES = ("gpipe", "1f1b")


@dataclass(frozen=True)
class Schedule:
    """A simulated run: ``ops[s]`` lists (kind, micro-batch, start, end) in stage s's order."""
    name: str
    stages: int
    microbatches: int
    ops: tuple
    makespan: float

    def busy(self, stage):
        return sum(end - start for _, _, start, end in self.ops[stage])

    def bubble_fraction(self, stage=0):
        """Share of the makespan stage ``stage`` sits idle."""
        return 1 - self.busy(stage) / self.makespan

    def peak_in_flight(self, stage):
        """Most micro-batches whose forward has run on ``stage`` and whose backward has not."""
        held = peak = 0
        for kind, _, _, _ in self.ops[stage]:
            held += 1 if kind == "F" else -1
            peak = max(peak, held)
        return peak


def stage_order(name, p, m, s):
    """The order of stage s's steps: [("F", i) | ("B", i)]."""
    if name == "gpipe":
        return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
    if name == "1f1b":
        warm = min(p - s - 1, m)
        order = [("F", i) for i in range(warm)]
        for i in range(m - warm):
            order += [("F", warm + i), ("B", i)]
        return order + [("B", i) for i in range(m - warm, m)]
    raise ValueError(f"unknown schedule {name!r}; expected one of {', '.join(SCHEDULES)}")


def simulate(name, stages, microbatches, t_forward=1.0, t_backward=1.0):
    """Run schedule ``name`` and return its :class:`Schedule`."""
    p = whole_number("stages", stages)
    m = whole_number("microbatches", microbatches)
    orders = [stage_order(name, p, m, s) for s in range(p)]
    done, ops = {}, [[] for _ in range(p)]
    position, free = [0] * p, [0.0] * p
    while any(position[s] < len(orders[s]) for s in range(p)):
        progressed = False
        for s in range(p):
            if position[s] == len(orders[s]):
                continue
            kind, i = orders[s][position[s]]
            need = [("F", s - 1, i)] if kind == "F" and s > 0 else []
            if kind == "B":
                need = [("F", s, i)] + ([("B", s + 1, i)] if s < p - 1 else [])
            if all(n in done for n in need):
                start = max([free[s]] + [done[n] for n in need])
                end = start + (t_forward if kind == "F" else t_backward)
                done[(kind, s, i)] = free[s] = end
                ops[s].append((kind, i, start, end))
                position[s] += 1
                progressed = True
        if not progressed:
            raise RuntimeError(f"schedule {name!r} deadlocks")
    return Schedule(name, p, m, tuple(tuple(o) for o in ops), max(free))


def bubble_formula(stages, microbatches):
    """(p - 1) / (m + p - 1): the idle share when F and B cost the same on every stage."""
    p, m = whole_number("stages", stages), whole_number("microbatches", microbatches)
    return (p - 1) / (m + p - 1)
