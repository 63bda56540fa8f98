"""A pipeline-parallel schedule simulator: GPipe, 1F1B and interleaved 1F1B on p stages (devices)
and m micro-batches.

Each device runs its forward (F) and backward (B) steps one at a time, in the order its schedule
gives. The model is cut into p v pieces (v = 1 but for the interleaved schedule, where each device
holds v model chunks: chunk c of device s is piece c p + s); F of a piece waits for F of the piece
before it, B for B of the piece after it (the last piece's for its own F). The simulation gives
the makespan, each device's idle time as a share of the makespan (the bubble fraction,
(p-1)/(m+p-1) when F and B cost the same on every stage) and as a ratio to its busy time
(Megatron-LM's bubble, (p-1)/m, and (p-1)/(v m) interleaved), and the most micro-batches whose
activations a stage holds at once (GPipe: m; 1F1B: at most p - s). Huang et al. 2019 (GPipe);
Narayanan et al. 2021 (PipeDream-Flush, "1F1B", and the interleaved schedule, in "Efficient
Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", section 2.2).
"""
from dataclasses import dataclass

from ..numeric_args import whole_number

SCHEDULES = ("gpipe", "1f1b", "interleaved")


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

    def bubble_over_ideal(self, stage=0):
        """Stage ``stage``'s idle time over its busy time (the ideal time): Megatron-LM's bubble."""
        return (self.makespan - self.busy(stage)) / self.busy(stage)

    def peak_in_flight(self, stage):
        """Most micro-batches whose forward has run on ``stage`` and whose backward has not."""
        held = peak = 0
        for kind, _, _, _ in self.ops[stage]:
            held += 1 if kind == "F" else -1
            peak = max(peak, held)
        return peak


def stage_order(name, p, m, s, v=1):
    """The order of stage s's steps: [("F", i, chunk) | ("B", i, chunk)]."""
    if name == "gpipe":
        return [("F", i, 0) for i in range(m)] + [("B", i, 0) for i in range(m)]
    if name == "1f1b":
        warm = min(p - s - 1, m)
        order = [("F", i, 0) for i in range(warm)]
        for i in range(m - warm):
            order += [("F", warm + i, 0), ("B", i, 0)]
        return order + [("B", i, 0) for i in range(m - warm, m)]
    if name == "interleaved":
        return _interleaved_order(p, m, s, v)
    raise ValueError(f"unknown schedule {name!r}; expected one of {', '.join(SCHEDULES)}")


def _interleaved_order(p, m, s, v):
    """Megatron-LM's interleaved 1F1B: micro-batches go through the v chunks in groups of p;
    (p - s - 1) 2 + (v - 1) p forwards of warm-up, then one forward and one backward in turn."""
    if m % p:
        raise ValueError(f"the interleaved schedule needs the micro-batches ({m}) to be a "
                         f"multiple of the stages ({p})")
    steps = m * v

    def step(k, kind):
        chunk = k % (p * v) // p
        return (kind, k // (p * v) * p + k % p, chunk if kind == "F" else v - 1 - chunk)
    warm = min((p - s - 1) * 2 + (v - 1) * p, steps)
    order = [step(k, "F") for k in range(warm)]
    for k in range(steps - warm):
        order += [step(warm + k, "F"), step(k, "B")]
    return order + [step(k, "B") for k in range(steps - warm, steps)]


def simulate(name, stages, microbatches, t_forward=1.0, t_backward=1.0, chunks=1):
    """Run schedule ``name`` and return its :class:`Schedule`. ``chunks`` (v) is the model chunks
    per device of the interleaved schedule; each chunk's F and B take 1/v of a stage's."""
    p = whole_number("stages", stages)
    m = whole_number("microbatches", microbatches)
    v = whole_number("chunks", chunks)
    if v > 1 and name != "interleaved":
        raise ValueError(f"chunks={v}: only the interleaved schedule splits a device's layers")
    orders = [stage_order(name, p, m, s, v) for s in range(p)]
    last = p * v - 1
    done, ops = {}, [[] for _ in range(p)]
    position, free = [0] * p, [0.0] * p
    while any(position[s] < len(orders[s]) for s in range(p)):
        progressed = False
        for s in range(p):
            if position[s] == len(orders[s]):
                continue
            kind, i, chunk = orders[s][position[s]]
            piece = chunk * p + s
            need = [("F", piece - 1, i)] if kind == "F" and piece > 0 else []
            if kind == "B":
                need = [("F", piece, i)] + ([("B", piece + 1, i)] if piece < last else [])
            if all(n in done for n in need):
                start = max([free[s]] + [done[n] for n in need])
                end = start + (t_forward if kind == "F" else t_backward) / v
                done[(kind, piece, i)] = free[s] = end
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


def bubble_over_ideal_formula(stages, microbatches, chunks=1):
    """(p - 1) / (v m): Megatron-LM's bubble, idle time over ideal time, with v model chunks per
    device (v = 1: plain 1F1B). Equal to f / (1 - f) for the bubble fraction f of v = 1."""
    p, m = whole_number("stages", stages), whole_number("microbatches", microbatches)
    return (p - 1) / (whole_number("chunks", chunks) * m)
