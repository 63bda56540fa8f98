"""Simulated collectives: sums against float64/exact references, traces, byte ledgers, errors."""

import ml_dtypes
import numpy as np
import pytest

import gemmlab as gl

C = gl.collectives
ALLREDUCES = sorted(C.ALLREDUCE)


def _buffers(rng, n, shape, dtype=np.float64):
    return [rng.standard_normal(shape).astype(dtype) for _ in range(n)]


@pytest.mark.parametrize("algorithm", ALLREDUCES)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
@pytest.mark.parametrize("length", [0, 1, 7, 101])
def test_every_rank_gets_the_sum(algorithm, n, length):
    rng = np.random.default_rng([n, length])
    buffers = _buffers(rng, n, length)
    kept = [b.copy() for b in buffers]
    res = C.allreduce(buffers, algorithm)
    reference = np.sum(buffers, axis=0, dtype=np.float64)
    assert res.n_ranks == n
    for out in res.outputs:
        assert out.shape == (length,) and out.dtype == np.float64
        np.testing.assert_allclose(out, reference, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(out, res.outputs[0])    # the same bits on every rank
    for b, k in zip(buffers, kept, strict=True):
        np.testing.assert_array_equal(b, k)                   # the inputs are left alone


@pytest.mark.parametrize("algorithm", ALLREDUCES)
@pytest.mark.parametrize("dtype, rtol", [(np.int8, 0), (np.int32, 0), (np.uint16, 0),
                                         (np.float16, 1e-2), (np.float32, 1e-5),
                                         (np.complex64, 1e-5), (ml_dtypes.bfloat16, 5e-2)])
def test_any_numeric_dtype_and_shape(algorithm, dtype, rtol):
    rng = np.random.default_rng(7)
    n, shape = 6, (3, 5)
    if np.dtype(dtype).kind in "iu":
        buffers = [rng.integers(0, 20, shape).astype(dtype) for _ in range(n)]
    elif np.dtype(dtype).kind == "c":
        buffers = [(rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
                   for _ in range(n)]
    else:
        buffers = [rng.uniform(1, 2, shape).astype(dtype) for _ in range(n)]
    reference = np.sum([b.astype(np.complex128) for b in buffers], axis=0)
    for out in C.allreduce(buffers, algorithm).outputs:
        assert out.shape == shape and out.dtype == np.dtype(dtype)
        np.testing.assert_allclose(out.astype(np.complex128), reference, rtol=rtol)


@pytest.mark.parametrize("n, length", [(4, 16), (4, 18), (7, 100), (5, 3), (3, 0)])
def test_ring_trace_is_the_textbook_schedule(n, length):
    buffers = _buffers(np.random.default_rng(1), n, length, np.float32)
    res = C.ring_allreduce(buffers)
    bounds = np.cumsum([0] + [len(p) for p in np.array_split(np.arange(length), n)])
    assert res.n_steps == 2 * (n - 1)
    for step in range(res.n_steps):
        moves = res.transfers(step)
        assert sorted(t.src for t in moves) == list(range(n))      # every rank sends once
        assert sorted(t.dst for t in moves) == list(range(n))      # and receives once
        for t in moves:
            assert t.dst == (t.src + 1) % n
            assert t.phase == ("reduce-scatter" if step < n - 1 else "all-gather")
            assert t.bytes == (bounds[t.chunk + 1] - bounds[t.chunk]) * 4
    # each chunk travels N-1 times in each phase, so all ranks together send 2(N-1) S
    assert res.total_bytes() == 2 * (n - 1) * length * 4
    # rank r sends every chunk but its own in the reduce-scatter, and every chunk but r+1's in
    # the all-gather; it receives every chunk but r-1's, then every chunk but its own
    size = np.diff(bounds) * 4
    for r in range(n):
        assert res.sent_bytes[r] == 2 * size.sum() - size[r] - size[(r + 1) % n]
        assert res.recv_bytes[r] == 2 * size.sum() - size[r] - size[(r - 1) % n]


def test_reduce_scatter_chunk_travels_around_the_ring_collecting_every_rank():
    n = 6
    res = C.ring_allreduce(_buffers(np.random.default_rng(2), n, 60))
    for chunk in range(n):
        hops = sorted((t for t in res.steps if t.phase == "reduce-scatter" and t.chunk == chunk),
                      key=lambda t: t.step)
        assert len(hops) == n - 1
        path = [hops[0].src] + [t.dst for t in hops]
        assert sorted(path) == list(range(n))          # it visits every rank exactly once
        assert all(a.dst == b.src for a, b in zip(hops, hops[1:], strict=False))
        assert path[-1] == chunk                       # and ends, complete, at rank `chunk`


def test_ledger_is_the_sum_of_the_trace():
    res = C.tree_allreduce(_buffers(np.random.default_rng(3), 11, 9))
    sent, recv = np.zeros(11, int), np.zeros(11, int)
    for t in res.steps:
        sent[t.src] += t.bytes
        recv[t.dst] += t.bytes
    np.testing.assert_array_equal(res.sent_bytes, sent)
    np.testing.assert_array_equal(res.recv_bytes, recv)


@pytest.mark.parametrize("n", [2, 4, 9])
def test_ring_balances_the_load_the_centralized_root_carries(n):
    length = 12 * n
    buffers = _buffers(np.random.default_rng(n), n, length, np.float32)
    S = buffers[0].nbytes
    ring, central = C.ring_allreduce(buffers), C.centralized_allreduce(buffers, root=1)
    np.testing.assert_array_equal(ring.sent_bytes, 2 * (n - 1) * S // n)
    assert central.sent_bytes[1] == central.recv_bytes[1] == (n - 1) * S
    others = [r for r in range(n) if r != 1]
    assert (central.sent_bytes[others] == S).all() and (central.recv_bytes[others] == S).all()
    assert ring.total_bytes() == central.total_bytes()   # same total: the ring spreads it out


@pytest.mark.parametrize("n, rows", [(4, 10), (3, 3), (5, 2), (1, 4)])
def test_reduce_scatter_then_allgather_rebuilds_the_sum(n, rows):
    rng = np.random.default_rng([n, rows])
    buffers = [rng.integers(-50, 50, (rows, 3)) for _ in range(n)]
    total = np.sum(buffers, axis=0)
    rs = C.ring_reduce_scatter(buffers)
    assert rs.n_steps == n - 1
    for mine, expected in zip(rs.outputs, np.array_split(total, n), strict=True):
        np.testing.assert_array_equal(mine, expected)
    ag = C.ring_allgather(rs.outputs)
    assert ag.n_steps == n - 1
    for out in ag.outputs:
        np.testing.assert_array_equal(out, total)


def test_allgather_takes_unequal_pieces_and_scalars():
    pieces = [np.arange(k, dtype=np.int16) + 10 * k for k in (3, 0, 5, 1)]
    for out in C.ring_allgather(pieces).outputs:
        np.testing.assert_array_equal(out, np.concatenate(pieces))
    for out in C.ring_allgather([np.float32(r) for r in range(3)]).outputs:
        np.testing.assert_array_equal(out, np.arange(3, dtype=np.float32))


@pytest.mark.parametrize("fn", [C.ring_allreduce, C.centralized_allreduce, C.tree_allreduce,
                                C.recursive_doubling_allreduce, C.rabenseifner_allreduce,
                                C.ring_reduce_scatter])
def test_bad_buffers_raise_clear_errors(fn):
    with pytest.raises(ValueError, match="rank 2.*shape"):
        fn([np.zeros(4), np.zeros(4), np.zeros(5)])
    with pytest.raises(TypeError, match="rank 1.*dtype"):
        fn([np.zeros(4), np.zeros(4, np.float32)])
    with pytest.raises(ValueError, match="at least one rank"):
        fn([])
    with pytest.raises(TypeError, match="list with one array per rank"):
        fn(np.zeros((3, 4)))
    with pytest.raises(TypeError, match="numbers"):
        fn([np.array(["a", "b"]), np.array(["c", "d"])])
    with pytest.raises(TypeError, match="numbers"):
        fn([np.ones(2, bool), np.ones(2, bool)])


def test_other_bad_arguments():
    with pytest.raises(ValueError, match="root"):
        C.centralized_allreduce([np.zeros(2)] * 3, root=3)
    with pytest.raises(ValueError, match="scalars"):
        C.ring_reduce_scatter([np.float64(1), np.float64(2)])
    with pytest.raises(ValueError, match="axis 0"):
        C.ring_allgather([np.zeros((2, 3)), np.zeros((2, 4))])
    with pytest.raises(ValueError, match="unknown all-reduce"):
        C.allreduce([np.zeros(2)], "butterfly")


def test_simulator_handles_128_ranks_of_1_mib():
    # How fast it does so is a benchmark's business; here: the right sums and the ring's traffic
    n, items = 128, (1 << 20) // 4 + 3              # 1 MiB of float32 per rank, unequal chunks
    rng = np.random.default_rng(5)
    buffers = [rng.integers(-8, 9, items).astype(np.float32) for _ in range(n)]
    res = C.ring_allreduce(buffers)
    exact = np.sum(buffers, axis=0, dtype=np.float64)   # small integers: every order is exact
    np.testing.assert_array_equal(res.outputs[0], exact)
    np.testing.assert_array_equal(res.outputs[-1], exact)
    assert res.n_steps == 2 * (n - 1) and res.total_bytes() == 2 * (n - 1) * items * 4
