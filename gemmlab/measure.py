"""The one measuring kit: time a GPU launch with CUDA events, say what it ran on, read it back.

Every benchmark of the course (``gemmlab bench``, the Tensor Core runs, the NCCL ranks, the CPU
GEMMs and the MPI all-reduce) times, records and reloads its numbers through this module:

- :func:`flushed_ms`: the fair timer of every speed figure (Triton's ``do_bench`` method): each
  launch timed alone between two CUDA events, with an L2 flush queued before it, so the GPU runs
  the flush while the host queues the launch (host launch cost hidden, as in a model where other
  work keeps the GPU's queue full) and every launch starts with a cold L2, as in a model whose
  weights do not stay in the cache;
- :func:`cuda_event_ms`: milliseconds per launch, from CUDA events (numba's or CuPy's) after a
  warm-up, one value per sample of back-to-back launches (take their median; the NCCL ranks and
  the lab timings use it); :func:`wall_seconds` is the host clock's counterpart for CPU code and
  for the simulator, whose times are not GPU times;
- :func:`machine`: the record written beside every result: date, CPU, package versions and, on
  a GPU, its name, compute capability, SM count, driver and CUDA runtime, plus what the caller
  adds (peaks, NCCL version, MPI library...);
- :func:`recorded`: a result file saved in ``benchmarks/`` (a bare file name is looked up there),
  or None when it has not been recorded yet.
"""
import datetime
import json
import math
import os
import platform
import subprocess
import time
from pathlib import Path

from . import course, device

EVENT_KINDS = ("numba", "cupy")
BATCH_SECONDS = 1e-3      # batch="auto": launches enough to keep the GPU busy this long
AUTO = "auto"
FLUSH_BYTES = 256 << 20   # as do_bench: larger than any GPU's L2 (the H200's is 60 MB)
FLUSHED_METHOD = ("fair timer (gl.measure.flushed_ms, Triton do_bench's method): each launch "
                  "alone between two CUDA events, a 256 MiB memset (L2 flush) queued before it, "
                  "all queued before one synchronisation; median of the launches")


class _Events:
    """CUDA events and a synchronisation from numba (``gl.device.cuda()``) or from CuPy."""

    def __init__(self, kind):
        if kind == "numba":
            cuda = device.cuda()
            self.new, self.sync = cuda.event, cuda.synchronize
            self.elapsed_ms = lambda start, end: start.elapsed_time(end)
        elif kind == "cupy":
            import cupy
            self.new, self.elapsed_ms = cupy.cuda.Event, cupy.cuda.get_elapsed_time
            self.sync = cupy.cuda.get_current_stream().synchronize
        else:
            raise ValueError(f"events={kind!r}: expected one of {', '.join(EVENT_KINDS)}")


def cuda_event_ms(launch, repeats=20, warmup=3, *, events="numba", batch=1, before_sample=None):
    """Milliseconds per call of ``launch()``, one value per sample, timed with CUDA events.

    ``launch()`` runs ``warmup`` times first (compilation, caches, clocks). Then each of the
    ``repeats`` samples is ``batch`` back-to-back calls between two events on the current stream,
    divided by ``batch``. ``batch="auto"`` sizes the batch from one timed call so that a sample
    lasts about :data:`BATCH_SECONDS`: the host's launch overhead then hides behind the GPU's
    queue. ``before_sample()`` runs before each sample's first event, after the stream is idle
    (the NCCL ranks meet at a barrier there). ``events``: "numba" for numba kernels, "cupy" for
    CuPy/cuBLAS/NCCL work.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if batch != AUTO and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        raise ValueError(f"batch must be a whole number >= 1 or {AUTO!r}, got {batch!r}")
    ev = _Events(events)
    for _ in range(warmup):
        launch()
    start, end = ev.new(), ev.new()

    def sample(calls):
        ev.sync()
        if before_sample is not None:
            before_sample()
        start.record()
        for _ in range(calls):
            launch()
        end.record()
        end.synchronize()
        return ev.elapsed_ms(start, end) / calls

    if batch == AUTO:
        single = max(sample(1), 1e-3)
        batch = max(1, math.ceil(BATCH_SECONDS * 1e3 / single))
    return [sample(batch) for _ in range(repeats)]


def l2_flush(events="cupy", nbytes=FLUSH_BYTES):
    """A function that queues a write of ``nbytes`` (a memset of a buffer larger than the L2) on
    the stream the ``events`` kind times, which evicts the previous launch's data from the L2."""
    if events == "cupy":
        import cupy
        buffer = cupy.empty(nbytes, dtype=cupy.uint8)
        return lambda: buffer.fill(0)
    if events == "numba":
        from numba.cuda.cudadrv.driver import device_memset
        buffer = device.cuda().device_array(nbytes, dtype="uint8")
        return lambda: device_memset(buffer, 0, nbytes)
    raise ValueError(f"events={events!r}: expected one of {', '.join(EVENT_KINDS)}")


def flushed_ms(launch, repeats=50, warmup=5, *, events="cupy", flush=None):
    """Milliseconds of each of ``repeats`` launches of ``launch()``, timed the fair way (Triton's
    ``do_bench``): ``warmup`` untimed launches, then for each sample ``flush()`` (default
    :func:`l2_flush`), a start event, ONE launch and an end event, all queued with no
    synchronisation until the last end event. The flush keeps the GPU busy while the host queues
    the next launch, so the host's launch cost (Python, CuPy, cuBLAS's setup, our ctypes call)
    stays out of every figure alike, and each launch reads its inputs from device memory, not
    from the L2 the previous launch warmed. Take the median of the samples."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    ev = _Events(events)
    flush = flush if flush is not None else l2_flush(events)
    for _ in range(warmup):
        launch()
    ev.sync()
    starts, ends = [ev.new() for _ in range(repeats)], [ev.new() for _ in range(repeats)]
    for start, end in zip(starts, ends, strict=True):
        flush()
        start.record()
        launch()
        end.record()
    ends[-1].synchronize()
    return [ev.elapsed_ms(start, end) for start, end in zip(starts, ends, strict=True)]


def wall_seconds(call, repeats, warmup=0):
    """Seconds of each of ``repeats`` calls of ``call()`` on the host clock, after ``warmup``
    untimed calls: for CPU code, and for the simulator (Python time, NOT GPU time)."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


# ------------------------------------------------------------------------------ machine record

def cpu_model():
    """The CPU's model name as the operating system reports it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _major_minor(version):
    """CUDA's integer version (12080) or numba's tuple ((12, 8)) as "12.8"."""
    if isinstance(version, tuple):
        return ".".join(map(str, version))
    return f"{version // 1000}.{version % 1000 // 10}"


def _driver_version():
    """The driver's own version as nvidia-smi prints it ("580.159.04"), or None without it."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[0].strip() if out.returncode == 0 and lines else None


def _gpu_by_numba():
    """What numba sees beyond ``gl.device.info()``: SMs, CUDA driver API and runtime."""
    from numba.cuda.cudadrv import driver, runtime
    return {"sm_count": device.cuda().get_current_device().MULTIPROCESSOR_COUNT,
            "cuda_driver_api": _major_minor(driver.driver.get_version()),
            "cuda_runtime": _major_minor(runtime.runtime.get_version())}


def _gpu_by_cupy():
    import cupy
    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    return {"gpu": name.decode() if isinstance(name, bytes) else str(name),
            "compute_capability": f"{props['major']}.{props['minor']}",
            "sm_count": props["multiProcessorCount"],
            "cuda_driver_api": _major_minor(rt.driverGetVersion()),
            "cuda_runtime": _major_minor(rt.runtimeGetVersion())}


def machine(gpu="numba", **extra):
    """What a measurement ran on, for the record beside its numbers: date (UTC), CPU, OS and
    package versions; with ``gpu="numba"`` the backend of ``gl.device`` and, on a GPU, the GPU's
    name, compute capability, SMs, driver and CUDA runtime as numba sees them; ``gpu="cupy"``
    asks CuPy instead (processes that never import numba.cuda: the NCCL ranks, the Tensor Core
    runs); ``gpu=None`` for CPU-only benchmarks. ``extra`` items are added last (the caller's own
    facts: peaks, BLAS, MPI library, NCCL version...)."""
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "cpu": cpu_model(), "logical_cores": os.cpu_count(), "os": platform.platform(),
              **device.versions()}
    if gpu == "numba":
        record.update(device.info())
        if record["backend"] == "gpu":
            record.update(_gpu_by_numba(), driver=_driver_version())
    elif gpu == "cupy":
        record.update(backend="gpu", **_gpu_by_cupy(), driver=_driver_version())
    elif gpu is not None:
        raise ValueError(f"gpu={gpu!r}: expected 'numba', 'cupy' or None")
    record.update(extra)
    return record


# ---------------------------------------------------------------------------- recorded results

def recorded(name, required=()):
    """The JSON result file ``name`` as saved, or None when it has not been recorded yet.

    A bare file name ("gpu_ladder.json") is looked up in the course's ``benchmarks/`` (the
    repository's, or the installed course's: ``gemmlab.course``); any
    other path is taken as it is. ``required``: top-level keys the file must have. A file that
    is not valid JSON, or lacks one of them, raises a ValueError naming it.
    """
    path = Path(name)
    if len(path.parts) == 1:
        path = course.path("benchmarks") / path      # raises if this install lacks the folder
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not a valid JSON result file: {err}") from None
    missing = [key for key in required if not isinstance(data, dict) or key not in data]
    if missing:
        raise ValueError(f"{path} is not the result file expected here: it has no "
                         f"{', '.join(repr(k) for k in missing)} section")
    return data
