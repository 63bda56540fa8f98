"""What the tests of the multi-rank code share: N ranks as threads with a transport standing in for
NCCL's grouped send/recv (the CPU tests of ``collectives.nccl``, ``nccl_graph`` and
``parallel.tp_nccl_rank`` run the same per-rank code on NumPy arrays through it), the GPU count that
decides which GPU tests run ("needs N GPUs, found M" otherwise), and a program run on N real
ranks that must reach its end on every rank."""
import queue
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.collectives import jobs, nccl


def _gpus():
    """GPUs the NCCL tests may use, and why there are none."""
    if gl.device.backend() != "gpu":
        return 0, "needs the gpu backend (GEMMLAB_BACKEND=gpu) and CuPy"
    try:
        return nccl.visible_gpus(), "no GPU visible"
    except nccl.BackendUnavailable as err:
        return 0, str(err)


GPUS, NO_GPU = _gpus()


def needs_gpus(n):
    """Skip unless ``n`` GPUs are visible, saying how many were found."""
    return pytest.mark.skipif(GPUS < n, reason=f"needs {n} GPUs, found {GPUS}" if GPUS else NO_GPU)


_NCCL_PREAMBLE = """\
import sys
from pathlib import Path
import cupy
import numpy as np
import gemmlab.collectives as C
from gemmlab.collectives import jobs, nccl, nccl_graph, nvlink_ring

comm = jobs.world()
t = nccl.connect(comm)
n, rank = comm.Get_size(), comm.Get_rank()
"""
_NCCL_ENDING = """
t.close()
Path(sys.argv[1], f"rank{rank}.ok").write_text("ok")
"""


def nccl_program(body):
    """A program for :func:`run_on_ranks` on GPUs: ``body`` (Python source) runs on every rank with
    ``cupy``, ``np``, ``C`` (gemmlab.collectives), ``nccl``, ``nccl_graph``, ``nvlink_ring``, the
    rank's NCCL transport ``t``, ``comm``, ``n`` and ``rank``; then the transport is closed and the
    rank reports that it reached its end."""
    return _NCCL_PREAMBLE + textwrap.dedent(body) + _NCCL_ENDING


def assert_one_rank_copies(make, calls=3):
    """On one GPU (a one-rank communicator), the all-reduce program ``make(transport, x, out)``
    builds must copy x into out on every call; it is released (``close_program``) before the
    communicator closes, and returned."""
    import cupy

    from gemmlab.collectives.nccl_graph import close_program
    transport = nccl.connect()
    try:
        x = cupy.arange(1001, dtype=cupy.float32).reshape(7, 143)
        out = cupy.full_like(x, np.nan)
        program = make(transport, x, out)
        for _ in range(calls):
            out.fill(np.nan)
            assert program() is out and cupy.array_equal(out, x)
        close_program(program)
        return program
    finally:
        transport.close()


def run_on_ranks(tmp_path, program, n, timeout=180):
    """Run ``program`` (Python source) on ``n`` ranks through the launcher, with its folder as
    argument; every rank must write ``rank<r>.ok`` there at its end."""
    script = Path(tmp_path) / "program.py"
    script.write_text(program)
    jobs.mpirun(n, [script, tmp_path], timeout=timeout)
    assert sorted(p.name for p in Path(tmp_path).glob("*.ok")) == [f"rank{r}.ok" for r in range(n)]


class QueueRing:
    """N ranks as threads. A message travels as a copy through one FIFO per (sender, receiver)
    pair, which is what NCCL's grouped send/recv gives the ring: the i-th message a sends to b is
    the i-th that b receives from a. Counts the bytes each rank sends and receives."""

    def __init__(self, n):
        self.n = n
        self.boxes = {(a, b): queue.Queue() for a in range(n) for b in range(n)}
        self.sent, self.received = [0] * n, [0] * n

    def run(self, work):
        """``work(transport)`` on every rank, each in its own thread; the per-rank results."""
        with ThreadPoolExecutor(self.n) as pool:
            futures = [pool.submit(work, QueueTransport(self, r)) for r in range(self.n)]
            return [f.result(timeout=60) for f in futures]


class QueueTransport:
    def __init__(self, ring, rank):
        self.ring, self.rank, self.size = ring, rank, ring.n

    def sendrecv(self, send, dest, recv, source):
        if send.size:
            self.ring.boxes[(self.rank, dest)].put(send.copy())
            self.ring.sent[self.rank] += send.nbytes
        if recv.size:
            got = self.ring.boxes[(source, self.rank)].get(timeout=20)
            assert got.shape == recv.shape and got.dtype == recv.dtype, "mismatched message"
            recv[...] = got
            self.ring.received[self.rank] += got.nbytes


def random_buffers(n, shape, seed, dtype=np.float32):
    """One random array per rank, different on every rank."""
    return [np.random.default_rng([seed, r]).standard_normal(shape).astype(dtype)
            for r in range(n)]
