"""The TMA ring as a model: which K slice sits in which buffer, when it is filled and freed, from
the course's load/compute pipeline model (``gl.perfmodel.pipeline_schedule``)."""
from dataclasses import dataclass


@dataclass(frozen=True)
class SlotEvent:
    """One use of a ring buffer: K slice ``slice`` in slot ``slot`` (its ``phase``-th use, so the
    mbarriers' parity is ``phase % 2``). The TMA fills it from ``load_start`` to ``full_at`` (the
    "full" barrier's phase completes), wgmma reads it until ``empty_at`` (the consumers arrive on
    the "empty" barrier and the producer may refill the slot)."""
    slice: int
    slot: int
    phase: int
    load_start: float
    full_at: float
    compute_start: float
    empty_at: float


def ring_events(n, t_load, t_compute, stages, latency=0.0):
    """The slot-by-slot story of ``n`` K slices through a ring of ``stages`` buffers: the copy
    engine issues a slice in ``t_load`` and it lands ``latency`` later, one consumer computes
    slices in order, a slot is refilled only after its last slice has been computed."""
    from ...perfmodel import pipeline_schedule
    bars = pipeline_schedule(n, t_load, t_compute, buffers=stages, latency=latency)
    loads = [b for b in bars if b.kind == "load"]
    computes = [b for b in bars if b.kind == "compute"]
    return [SlotEvent(i, i % stages, i // stages, ld.start, ld.end + latency, cp.start, cp.end)
            for i, (ld, cp) in enumerate(zip(loads, computes, strict=True))]
