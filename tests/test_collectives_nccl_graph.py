"""Our ring recorded as a CUDA graph (``gemmlab.collectives.nccl_graph``).

Everywhere: the programs' names, the error without CuPy. On the gpu backend: a one-rank graph (a
copy) replayed; with N GPUs, the graph ring gives the simulated ring's bits on every GPU at uneven
sizes (chunks of one item included), in float32 and float16, again on every replay, into poisoned
outputs, leaving the input alone. With fewer GPUs those tests skip ("needs N GPUs").
"""
import sys

import numpy as np
import pytest
from multirank import (QueueRing, assert_one_rank_copies, nccl_program, needs_gpus,
                       run_on_ranks)

from gemmlab.collectives import nccl, nccl_graph


def test_programs_are_named():
    assert nccl_graph.ALLREDUCE_ALGORITHMS == ("ring", "ring_stepwise", "ring_nvlink", "nccl")
    with pytest.raises(ValueError, match="all-reduce 'tree': expected one of ring, ring_stepw"):
        nccl_graph.allreduce_program("tree", None, None, None)
    # ring_stepwise and nccl are plain calls of the ring functions: one run on two ranks
    everyone = [np.arange(7, dtype=np.float32) * (r + 1) for r in range(2)]
    outs = QueueRing(2).run(lambda t: nccl_graph.allreduce_program(
        "ring_stepwise", t, everyone[t.rank], np.zeros(7, np.float32))())
    assert all(np.array_equal(o, everyone[0] + everyone[1]) for o in outs)


def test_without_cupy_the_graph_says_what_it_needs(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(nccl.BackendUnavailable, match="needs CuPy with NCCL"):
        nccl_graph.RingGraph(None, [], None)


@needs_gpus(1)
def test_a_one_rank_graph_copies_on_every_replay():
    ring = assert_one_rank_copies(nccl_graph.graph_ring)
    assert ring.graph is None                # released by close_program


GRAPH_PROGRAM = nccl_program("""
    for items, dtype in ((1001, np.float32), (n + 1, np.float32), (3000, np.float16)):
        everyone = [np.random.default_rng([9, r]).standard_normal(items).astype(dtype)
                    for r in range(n)]
        expected = C.ring_allreduce(everyone).outputs[rank]
        mine = cupy.asarray(everyone[rank])
        out = cupy.full_like(mine, np.nan)
        ring = nccl_graph.graph_ring(t, mine, out)
        for replay in range(3):
            out.fill(np.nan)
            ring()
            got = out.get()
            assert np.array_equal(got, expected), (items, dtype, replay)
        print("graph ring exact:", items, np.dtype(dtype).name, flush=True)
        assert np.array_equal(mine.get(), everyone[rank]), "the input was changed"
        ring.close()    # the graph holds NCCL operations: release it before the communicator
""")


@pytest.mark.parametrize("n", [pytest.param(n, marks=needs_gpus(n)) for n in (2, 4, 8)])
def test_graph_ring_gives_the_simulated_bits_on_every_replay(tmp_path, n):
    run_on_ranks(tmp_path, GRAPH_PROGRAM, n)
