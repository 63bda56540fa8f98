"""Our ring over NVLink loads (``gemmlab.collectives.nvlink_ring``).

Everywhere: the step table against the ring's schedule, worked by hand for two ranks and run in
lock step on NumPy arrays for 2..8 ranks at uneven sizes (where it must give the simulated ring's
bits, since it adds in the same order); the error without CuPy. On the gpu backend: one rank (a
copy), the refusals (a closed ring, a NumPy array, a type the kernel does not add, misaligned
buffers); with N GPUs, new inputs
on every call (a stale read of a peer's memory would show), several types and uneven sizes
against the simulated ring's bits, the input left alone. With fewer GPUs those tests skip.
"""
import sys

import numpy as np
import pytest
from multirank import assert_one_rank_copies, nccl_program, needs_gpus, run_on_ranks

import gemmlab.collectives as C
from gemmlab.collectives import nccl, nvlink_ring
from gemmlab.collectives.ring_steps import RingPlan


def test_the_step_table_of_two_ranks_worked_by_hand():
    plan = RingPlan.split(2, 10, 4)
    # rank 0 first receives chunk 0 from rank 1's input and adds its own; then rank 1's summed
    # chunk 1 arrives from rank 1's output and is stored
    assert nvlink_ring.step_table(plan, 0).tolist() == [[0, 1, 1], [1, 0, 0]]
    assert nvlink_ring.step_table(plan, 1).tolist() == [[1, 1, 1], [0, 0, 0]]


@pytest.mark.parametrize("n", [2, 3, 4, 8])
@pytest.mark.parametrize("extra", [-1, 0, 1, 997])
def test_the_schedule_in_lock_step_gives_the_simulated_bits(n, extra):
    items = max(1, n + extra)
    rng = np.random.default_rng([n, items])
    everyone = [rng.standard_normal(items).astype(np.float32) for _ in range(n)]
    plan = RingPlan.split(n, items, 4)
    got = nvlink_ring.emulate(plan, everyone)
    expected = C.ring_allreduce(everyone).outputs
    for rank in range(n):
        np.testing.assert_array_equal(got[rank], expected[rank])
        table = nvlink_ring.step_table(plan, rank)
        assert table.shape == (2 * (n - 1), 3)
        assert table[:, 1].sum() == 1 and table[0, 1] == 1      # only step 0 reads an input
        assert table[:, 2].tolist() == [1] * (n - 1) + [0] * (n - 1)


def test_without_cupy_it_says_what_it_needs(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(nccl.BackendUnavailable, match="needs CuPy with NCCL"):
        nvlink_ring.NvlinkRing(None, np.zeros(3, np.float32))


@needs_gpus(1)
def test_one_rank_copies_and_bad_buffers_are_refused():
    import cupy
    ring = assert_one_rank_copies(nvlink_ring.NvlinkRing)
    with pytest.raises(RuntimeError, match="was closed"):
        ring()
    # refused before the transport is used
    with pytest.raises(TypeError, match="runs on CuPy arrays .* got a numpy.ndarray"):
        nvlink_ring.NvlinkRing(None, np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="adds float16, float32, float64, int32, int64; got "
                                        "complex64"):
        nvlink_ring.NvlinkRing(None, cupy.zeros(3, dtype=cupy.complex64))
    whole = cupy.zeros(1000, dtype=cupy.float32)
    with pytest.raises(ValueError, match="same offset modulo 16 bytes"):
        nvlink_ring.NvlinkRing(None, whole[1:], cupy.zeros(999, dtype=cupy.float32))


NVLINK_PROGRAM = nccl_program("""
    cases = ((1001, np.float32), (n + 1, np.float32), (1, np.float32), (3000, np.float16),
             (77777, np.float64), (12345, np.int32), (999, np.int64), ((1 << 22) + 3, np.float32))
    for items, dtype in cases:
        mine = cupy.zeros(items, dtype=dtype)
        out = cupy.zeros(items, dtype=dtype)
        ring = nvlink_ring.NvlinkRing(t, mine, out)
        for call in range(4):                  # new inputs on every call
            rng = [np.random.default_rng([items, call, r]) for r in range(n)]
            if np.dtype(dtype).kind == "f":
                everyone = [g.standard_normal(items).astype(dtype) for g in rng]
            else:
                everyone = [g.integers(-1000, 1000, items).astype(dtype) for g in rng]
            expected = C.ring_allreduce(everyone).outputs[rank]
            mine[...] = cupy.asarray(everyone[rank])
            out.fill(7)
            ring()
            assert np.array_equal(out.get(), expected), (items, dtype, call)
            assert np.array_equal(mine.get(), everyone[rank]), "the input was changed"
        ring.close()
        print("nvlink ring exact:", items, np.dtype(dtype).name, flush=True)
    strided = (cupy.arange(2 * 501, dtype=cupy.float32) + rank)[::2]
    ring = nvlink_ring.NvlinkRing(t, strided)          # not contiguous: the ring reads a copy
    summed = ring().get()
    assert np.array_equal(summed, n * np.arange(0, 1002, 2) + n * (n - 1) // 2), summed
    ring.close()
""")


@pytest.mark.parametrize("n", [pytest.param(n, marks=needs_gpus(n)) for n in (2, 4, 8)])
def test_nvlink_ring_gives_the_simulated_bits_on_every_call(tmp_path, n):
    run_on_ranks(tmp_path, NVLINK_PROGRAM, n)
