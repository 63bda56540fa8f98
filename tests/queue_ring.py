"""N ranks as threads, with a transport standing in for NCCL's grouped send/recv: the CPU tests of
the ring over NCCL (``collectives.nccl``, ``nccl_graph``) and of the layers over NCCL
(``parallel.nccl``) run the same per-rank code on NumPy arrays through it."""
import queue
from concurrent.futures import ThreadPoolExecutor

import numpy as np


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
