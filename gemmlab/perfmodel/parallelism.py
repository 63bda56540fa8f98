"""Models of parallel time: splitting a sum among workers, a reduction tree on p processors,
message cost, speedup and Amdahl's law, and a load/compute pipeline with one or two buffers.

Each model states its protocol in its docstring; the numbers it gives are lower bounds or
idealised times under that protocol, not predictions of a real program.
"""
import math
from dataclasses import dataclass

import numpy as np

from ..numeric_args import fraction, non_negative, positive, whole_number


@dataclass(frozen=True)
class Interval:
    """One bar of a timeline: who (``lane``) does what (``kind``, ``label``) from ``start`` to ``end``."""
    lane: str
    kind: str
    label: str
    start: float
    end: float


# ---- the grouping activity: n workers sum their share, then report to one merger ----

def _worker_names(n):
    return [chr(ord("A") + i) if n <= 26 else str(i) for i in range(n)]


def _rates(rates, n_workers):
    """Per-worker speeds (items per time unit): one number for everyone, or one per worker."""
    rates = np.asarray(rates, dtype=np.float64)
    if rates.ndim == 0:
        rates = np.full(n_workers, float(rates))
    if rates.shape != (n_workers,):
        raise ValueError(f"rates must be one number or one per worker ({n_workers}), got {rates.tolist()}")
    if np.any(~(rates > 0)):
        raise ValueError(f"rates (items per time unit) must be > 0, got {rates.tolist()}")
    return rates


def _shares(work, rates):
    work = np.atleast_1d(np.asarray(work, dtype=np.float64))
    if work.ndim != 1 or work.size == 0 or np.any(~(work >= 0)):
        raise ValueError(f"work must be a list of item counts >= 0, one per worker, got {work.tolist()}")
    return work, _rates(rates, work.size)


def group_sum_time(work, rates=1.0, comm=0.0, add_time=1.0):
    """Time for n workers to sum their shares, then report them one at a time to a merger.

    T = max_i W_i / r_i + n * comm + (n - 1) * add_time: everyone finishes, the n partial sums are
    delivered one after another (``comm`` each), and the merger adds them (n - 1 additions). With
    one worker nothing is delivered or merged: T = W / r, the single-worker baseline.
    """
    work, rates = _shares(work, rates)
    comm, add_time = non_negative("comm", comm), non_negative("add_time", add_time)
    compute = float(np.max(work / rates))
    n = work.size
    return compute if n == 1 else compute + n * comm + (n - 1) * add_time


def group_sum_timeline(work, rates=1.0, comm=0.0, add_time=1.0, names=None):
    """The :func:`group_sum_time` protocol as a list of :class:`Interval` (for a Gantt chart)."""
    work, rates = _shares(work, rates)
    comm, add_time = non_negative("comm", comm), non_negative("add_time", add_time)
    n = work.size
    names = list(names) if names is not None else _worker_names(n)
    if len(names) != n:
        raise ValueError(f"names must give one name per worker ({n}), got {len(names)}")
    finish = work / rates
    done = float(np.max(finish))
    bars = []
    for name, w, f in zip(names, work, finish, strict=True):
        bars.append(Interval(name, "compute", f"{w:g} items", 0.0, float(f)))
        if f < done:
            bars.append(Interval(name, "wait", "idle", float(f), done))
    if n == 1:
        return bars
    for i, name in enumerate(names):
        bars.append(Interval(name, "send", "report", done + i * comm, done + (i + 1) * comm))
    start = done + n * comm
    for i in range(n - 1):
        bars.append(Interval("merger", "merge", "+", start + i * add_time,
                             start + (i + 1) * add_time))
    return bars


def self_schedule(n_items, chunk, rates, claim_cost=0.0):
    """Dynamic scheduling: items are handed out in chunks of ``chunk``, each taken by whichever
    worker is idle first (ties go to the lower index); taking a chunk costs ``claim_cost``.

    Small chunks balance the finish times but pay the claim cost often; large chunks are cheap to
    hand out but leave a tail where some workers wait. Returns a dict with per-worker ``work``
    (items) and ``finish`` times, the overall ``time`` (last finish), and ``bars`` (Intervals).
    """
    n = whole_number("n_items", n_items)
    size = whole_number("chunk", chunk)
    if np.ndim(rates) != 1 or len(rates) == 0:
        raise ValueError(f"rates must list one speed per worker, got {rates!r}")
    rates = _rates(rates, len(rates))
    cost = non_negative("claim_cost", claim_cost)
    names = _worker_names(rates.size)
    free = np.zeros(rates.size)
    work = np.zeros(rates.size, dtype=np.int64)
    bars = []
    for first in range(0, n, size):
        items = min(size, n - first)
        w = int(np.argmin(free))
        start, end = free[w], free[w] + cost + items / rates[w]
        bars.append(Interval(names[w], "compute", f"{items}", float(start), float(end)))
        free[w], work[w] = end, work[w] + items
    return {"work": work.tolist(), "finish": free.tolist(), "time": float(free.max()), "bars": bars}


# ---- work, span and a greedy schedule of a balanced reduction tree ----

def reduction_schedule(n_values, processors):
    """Greedy level-by-level schedule of a balanced pairwise-sum tree of ``n_values`` numbers.

    Level by level, the m values left are added in pairs (m // 2 additions; an odd one is carried
    to the next level); a level's additions are packed p at a time into rounds, and a level starts
    only when the previous one is done. Returns a dict with ``work`` W (additions, n - 1), ``span``
    D (levels), ``rounds`` (time with one addition per round and processor), ``lower_bound``
    max(W / p, D), ``parallelism`` W / D and ``schedule`` (per round, the (level, index) additions).
    """
    n = whole_number("n_values", n_values)
    p = whole_number("processors", processors)
    schedule, level, remaining = [], 0, n
    while remaining > 1:
        adds = remaining // 2
        for first in range(0, adds, p):
            schedule.append([(level, i) for i in range(first, min(first + p, adds))])
        remaining -= adds
        level += 1
    work, span = n - 1, level
    return {"work": work, "span": span, "rounds": len(schedule),
            "lower_bound": max(work / p, span), "parallelism": work / span if span else 0.0,
            "schedule": schedule}


# ---- messages ----

def message_time(nbytes, latency, bandwidth, messages=1):
    """Time to send ``nbytes`` split evenly into ``messages`` messages sent one after another:
    each pays the start-up latency L, and the bytes pay Q / beta: messages * L + nbytes / beta."""
    nbytes = non_negative("nbytes", nbytes)
    return (whole_number("messages", messages) * non_negative("latency", latency)
            + nbytes / positive("bandwidth", bandwidth))


# ---- speedup, efficiency, Amdahl ----

def speedup(time_before, time_after):
    """How many times faster: T_before / T_after."""
    return positive("time_before", time_before) / positive("time_after", time_after)


def efficiency(time_before, time_after, workers):
    """Speedup per worker: 1.0 means every added worker paid off in full."""
    return speedup(time_before, time_after) / whole_number("workers", workers)


def amdahl(serial_fraction, speedup, overhead=0.0):
    """Overall speedup when a fraction ``1 - s`` of the baseline time runs ``speedup`` times faster
    and the rest (``s``) does not: 1 / (s + (1 - s) / speedup + overhead), where ``overhead`` is
    added time as a fraction of the baseline. ``speedup=math.inf`` gives the limit 1 / (s + h),
    which is infinite when nothing is left (s = 0 and no overhead)."""
    s = fraction("serial_fraction", serial_fraction)
    p = positive("speedup", speedup)
    h = non_negative("overhead", overhead)
    accelerated = 0.0 if math.isinf(p) else (1 - s) / p
    remaining = s + accelerated + h
    return math.inf if remaining == 0 else 1.0 / remaining     # all of it made infinitely fast


# ---- a two-stage pipeline: load a batch, then compute on it ----

def pipeline_schedule(n, t_load, t_compute, buffers=1, latency=0.0):
    """Load/compute timeline of ``n`` batches with ``buffers`` input buffers, as :class:`Interval`.

    One loader and one compute unit work independently. Batch i is loaded as soon as the loader is
    free and a buffer is free (the compute of batch i - buffers has finished), and computed as soon
    as it is loaded and the compute unit is free. One buffer serialises everything; two let the
    load of the next batch hide under the compute of the current one.

    ``latency``: time a load stays in flight after the loader has issued it (a copy engine such
    as Hopper's TMA keeps many loads in flight): the loader is busy ``t_load`` per batch, the
    batch can be computed ``latency`` later. The load bars show the loader's busy time.
    """
    n = whole_number("n", n)
    load, comp = positive("t_load", t_load), positive("t_compute", t_compute)
    b = whole_number("buffers", buffers)
    delay = non_negative("latency", latency)
    load_end, comp_end, bars = [], [], []
    for i in range(n):
        start = max(load_end[-1] if load_end else 0.0, comp_end[i - b] if i >= b else 0.0)
        load_end.append(start + load)
        bars.append(Interval("load", "load", f"#{i + 1}", start, start + load))
        start = max(load_end[i] + delay, comp_end[-1] if comp_end else 0.0)
        comp_end.append(start + comp)
        bars.append(Interval("compute", "compute", f"batch #{i + 1}", start, start + comp))
    return bars


def pipeline_time(n, t_load, t_compute, buffers=1, latency=0.0):
    """When the last batch finishes; buffers=1 gives n(L + C), 2 gives L + (n - 1) max(L, C) + C
    (both with ``latency`` 0; see :func:`pipeline_schedule`)."""
    return max(bar.end for bar in pipeline_schedule(n, t_load, t_compute, buffers, latency))
