"""The kernel labs on a GPU backend.

There ``numba.cuda`` is the real one, and the simulator cannot run in the same process (the
backend is chosen once), so a lab check runs the kernel's cell again in a fresh worker on the
simulator (:func:`gemmlab.judging.cell.judge_alone`, as ``check()`` always does), judged here.
When it passes, the notebook's check then times the student's kernel here, on the GPU, at full
size, beside the course's kernel and cuBLAS measured in the same call, and keeps the figures for
the student's own ladder (:mod:`gemmlab.labs.my_ladder`): :func:`after_check`.
"""
import numpy as np

from .. import bench, device
from ..judging import FAIL, PASS, code_of
from ..judging.cell import judge_alone
from . import my_ladder

MAX_REL_ERR = 1e-4          # float32 GEMM at 4096^3 on random inputs stays far below this


def judge_on_gpu(lab, question, kernel, rng):
    """(status, feedback, picture): the lab's checks with the kernel's cell in a worker on the
    simulator (the picture of the run comes back as plain data), then, for a notebook's check
    (``rng`` None) of a kernel that passed, its speed on this GPU."""
    try:
        source, name = code_of(kernel)
    except (TypeError, ValueError) as exc:
        return FAIL, f"the instrumented checks cannot run: {exc}.", None
    status, text, picture = judge_alone(question, source, name, rng, picture=True)
    if rng is not None:
        return status, text, picture
    return after_check(lab, kernel, status, text) + (picture,)


def after_check(lab, kernel, status, text):
    """After a notebook's check passed on a GPU backend: the kernel's speed here, recorded for
    the student's ladder (a wrong result at full size is a FAIL). A lab with no course kernel
    to time beside (lesson 03's puzzles) is not timed."""
    if status != PASS or device.backend() != "gpu" or lab.rung is None:
        return status, text
    row = measure(lab, kernel)
    if row["rel_err"] > MAX_REL_ERR:
        return FAIL, (f"{text} But on the GPU at {row['n']}^3 the result is wrong: relative "
                      f"error {row['rel_err']:.1e} against a float64 reference.")
    my_ladder.record(lab.name, row)
    return PASS, f"{text}\n{my_ladder.describe(lab.name, row)}"


def measure(lab, kernel, n=None, repeats=10):
    """Time ``kernel(A, B, C)`` with the lab's launch at n^3 (default: this backend's
    ``gemm_n``), and the course's kernel and cuBLAS on the same inputs, with the per-kernel
    timers of :mod:`gemmlab.bench` (``bench.run`` would rebuild the inputs and measure the
    machine's peaks): a dict of TFLOP/s."""
    n = n or device.sizes()["gemm_n"]
    cuda = device.cuda()
    A, B = bench.gemm_inputs(n, n, n, seed=0)
    ref = bench.float64_reference(A, B)
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    dC = cuda.device_array((n, n), dtype=np.float32)
    grid, block = lab.launch(n, n)
    configured = kernel[grid, block]

    def launch():
        configured(dA, dB, dC)
    launch()
    rel_err = bench.relative_error(dC.copy_to_host(), ref)
    ms = bench.time_on_gpu(launch, repeats, 2, "numba")
    rung, tiles = lab.rung
    spec = f"{rung}:" + ",".join(f"{k}={v}" for k, v in tiles.items())
    warmup = 3                                      # bench.run's default
    course_ms = bench.time_course_kernel(spec, dA, dB, dC, ref, repeats, warmup)["ms"]
    cublas_ms = (bench.time_cublas(A, B, ref, repeats, warmup)[0]
                 if bench.cupy_or_none() is not None else None)

    def tflops(ms):
        return None if ms is None else 2.0 * n ** 3 / (ms * 1e-3) / 1e12
    return dict(lab=lab.name, n=n, tflops=tflops(ms), rel_err=rel_err, course=rung,
                course_tiles=tiles, course_tflops=tflops(course_ms),
                cublas_tflops=tflops(cublas_ms), gpu=device.info()["gpu"])
