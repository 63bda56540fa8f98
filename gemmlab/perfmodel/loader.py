"""A training loop as a timeline: CPU workers prepare batches, each batch is copied to the GPU,
then the GPU computes on it (lesson 00).

It separates the two overlaps a PyTorch training loop can have, which are easy to confuse:

* **CPU-side prefetch** (``DataLoader(num_workers=w, prefetch_factor=f)``): worker processes
  prepare later batches while the GPU works, at most ``w * f`` batches ahead;
* **copy/compute overlap**: the host-to-device copy of batch i + 1 runs while the GPU computes
  batch i. That needs page-locked (pinned) host memory, so the copy can run asynchronously, a
  copy issued on its own CUDA stream ahead of time, and a second device buffer.

Protocol (times are per batch and fixed): with ``workers=0`` the main process prepares a batch
only after the previous step finished. Without ``overlap_copy`` a copy waits for the previous
compute (one stream: copies and kernels run in order) and the compute follows its copy. With
``overlap_copy`` the copy of batch i waits only for its data, the copy engine and a free device
buffer (two buffers: the compute of batch i - 2 must be done).
"""
from ..numeric_args import positive, whole_number
from .parallelism import Interval


def training_timeline(n_batches, t_prepare, t_copy, t_compute, workers=0, prefetch=2,
                      overlap_copy=False):
    """The loop's timeline as :class:`Interval` bars on the lanes "worker k" (or "main process"),
    "copy to GPU" and "GPU compute"."""
    n = whole_number("n_batches", n_batches)
    prep, copy, comp = (positive(name, value) for name, value in
                        (("t_prepare", t_prepare), ("t_copy", t_copy), ("t_compute", t_compute)))
    workers = whole_number("workers (0: the main process loads)", workers, least=0)
    in_flight = workers * whole_number("prefetch", prefetch)
    worker_free = [0.0] * max(workers, 1)
    copy_start, copy_end, comp_end, bars = [], [], [], []
    for i in range(n):
        if workers:
            lane, slot = f"worker {i % workers}", i % workers
            start = max(worker_free[slot], copy_start[i - in_flight] if i >= in_flight else 0.0)
        else:
            lane, slot = "main process", 0
            start = comp_end[-1] if comp_end else 0.0
        ready = start + prep
        worker_free[slot] = ready
        bars.append(Interval(lane, "load", f"#{i + 1}", start, ready))
        if overlap_copy:
            start = max(ready, copy_end[-1] if copy_end else 0.0, comp_end[i - 2] if i >= 2 else 0.0)
        else:
            start = max(ready, comp_end[-1] if comp_end else 0.0)
        copy_start.append(start)
        copy_end.append(start + copy)
        bars.append(Interval("copy to GPU", "send", f"#{i + 1}", start, start + copy))
        start = max(copy_end[i], comp_end[-1] if comp_end else 0.0)
        comp_end.append(start + comp)
        bars.append(Interval("GPU compute", "compute", f"#{i + 1}", start, start + comp))
    return bars


def timeline_end(bars):
    """When the last bar of a timeline ends."""
    return max(bar.end for bar in bars)


def idle_time(bars, lane):
    """Time ``lane`` spends waiting between the start of the run and its last bar."""
    own = sorted((bar.start, bar.end) for bar in bars if bar.lane == lane)
    if not own:
        raise ValueError(f"no bars on lane {lane!r}")
    return own[-1][1] - sum(end - start for start, end in own)
