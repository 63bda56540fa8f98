"""Cost models against the simulator's own trace, nccl-tests' busbw convention, the alpha-beta fit."""
import numpy as np
import pytest

import gemmlab as gl

C = gl.collectives


@pytest.mark.parametrize("algorithm", C.ALGORITHMS)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 12, 16])
def test_closed_form_matches_the_simulated_trace(algorithm, n):
    pof2 = 1 << (n.bit_length() - 1)
    items = 3 * n * pof2                         # every algorithm's chunks come out equal
    buffers = [np.ones(items, np.float32) * r for r in range(n)]
    res = C.allreduce(buffers, algorithm)
    model = C.allreduce_cost(algorithm, n, buffers[0].nbytes)
    assert res.n_steps == model.steps
    assert C.trace_time(res, 0, 1, 0) == pytest.approx(model.bytes)
    assert C.trace_time(res, 0, 0, 1) == pytest.approx(model.reduce_bytes)
    alpha, beta, gamma = 3e-6, 1 / 40e9, 1 / 200e9
    assert C.trace_time(res, alpha, beta, gamma) == pytest.approx(model.time(alpha, beta, gamma))


@pytest.mark.parametrize("n", [2, 4, 8, 128])
def test_ring_send_formula_matches_the_ledger(n):
    buffers = [np.zeros(16 * n, np.float32) for _ in range(n)]
    S = buffers[0].nbytes
    res = C.ring_allreduce(buffers)
    assert (res.sent_bytes == C.ring_send_bytes(n, S)).all()
    assert (res.sent_bytes + res.recv_bytes == 2 * C.ring_send_bytes(n, S)).all()
    central = C.centralized_allreduce(buffers)
    assert central.sent_bytes[0] + central.recv_bytes[0] == C.centralized_root_bytes(n, S)


def test_the_seed_lesson_figures():
    # lesson 03 states 1.5 S at 4 ranks and 1.984375 S at 128; check them on the simulator
    for n, per_rank in [(4, 1.5), (128, 1.984375)]:
        res = C.ring_allreduce([np.zeros(n * 8, np.float64) for _ in range(n)])
        assert res.sent_bytes[0] / (n * 8 * 8) == per_rank


def test_latency_term_grows_with_n_while_bytes_stay_below_2s():
    S = 2**20
    steps = [C.allreduce_cost("ring", n, S).steps for n in (2, 4, 8, 16, 32)]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)
    assert all(C.allreduce_cost("ring", n, S).bytes < 2 * S for n in range(1, 200))


@pytest.mark.parametrize("n", [2, 3, 8, 64])
def test_busbw_is_what_each_ring_rank_sends_per_second(n):
    S, seconds = 3 * 2**20, 0.0123
    assert C.busbw("allreduce", n, S, seconds) == pytest.approx(
        C.ring_send_bytes(n, S) / seconds / 1e9)
    assert C.algbw(S, seconds) == pytest.approx(S / seconds / 1e9)
    assert C.bus_factor("all-reduce", n) == pytest.approx(2 * (n - 1) / n)
    assert C.bus_factor("allgather", n) == pytest.approx((n - 1) / n)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_busbw_of_reduce_scatter_and_all_gather_takes_the_total_size(n):
    # nccl-tests reports S = N x the per-rank chunk; then busbw is what a ring rank sends per second
    chunk, seconds = 1000, 0.002
    chunks = [np.full(chunk // 4, r, np.float32) for r in range(n)]
    gathered = C.ring_allgather(chunks)
    scattered = C.ring_reduce_scatter([np.concatenate(chunks)] * n)
    total = n * chunk
    for res in (gathered, scattered):
        assert res.sent_bytes.max() == (n - 1) * chunk
        assert C.busbw("allgather", n, total, seconds) == pytest.approx(
            res.sent_bytes.max() / seconds / 1e9)
    # the per-rank chunk would understate it n times
    assert C.busbw("reducescatter", n, chunk, seconds) * n == pytest.approx(
        C.busbw("reducescatter", n, total, seconds))


def test_cost_errors():
    with pytest.raises(ValueError, match="unknown all-reduce"):
        C.allreduce_cost("star", 4, 10)
    with pytest.raises(ValueError, match="ranks"):
        C.allreduce_cost("ring", 0, 10)
    with pytest.raises(ValueError, match="size"):
        C.allreduce_cost("ring", 4, -1)
    with pytest.raises(ValueError, match="unknown collective"):
        C.bus_factor("gossip", 4)
    with pytest.raises(ValueError, match="positive"):
        C.algbw(10, 0)


@pytest.mark.parametrize("algorithm", ["ring", "centralized", "tree"])
def test_fit_recovers_alpha_and_beta(algorithm):
    from gemmlab.collectives.fit import fit_alpha_beta
    rng = np.random.default_rng(0)
    alpha, beta, n = 25e-6, 1 / 3e9, 4
    sizes = np.geomspace(2**10, 2**26, 9)
    times = np.array([C.allreduce_time(algorithm, n, s, alpha, beta) for s in sizes])
    noisy = times * rng.uniform(0.97, 1.03, times.shape)
    fit = fit_alpha_beta(algorithm, n, sizes, noisy)
    assert fit.alpha == pytest.approx(alpha, rel=0.1)
    assert fit.beta == pytest.approx(beta, rel=0.05)
    np.testing.assert_allclose([fit.predict(s) for s in sizes], times, rtol=0.1)


def test_fit_stays_non_negative_and_checks_its_input():
    from gemmlab.collectives.fit import fit_alpha_beta
    sizes = np.array([1e3, 1e5, 1e7])
    fit = fit_alpha_beta("ring", 4, sizes, sizes * 1e-9)     # pure bandwidth: alpha = 0
    assert fit.alpha >= 0 and fit.beta > 0
    with pytest.raises(ValueError, match="two or more sizes"):
        fit_alpha_beta("ring", 4, [1e3, 1e3], [1.0, 1.0])
    with pytest.raises(ValueError, match="positive"):
        fit_alpha_beta("ring", 4, [1e3, 1e4], [1.0, 0.0])


def test_the_pipelined_double_binary_tree_approaches_2s_in_log_n_steps():
    S, n = 2**20, 64                                        # depth floor(log2 64) = 6
    one = C.double_binary_tree_cost(n, S, 1)                # no pipelining: the tree's 2 d S
    assert (one.steps, one.bytes) == (24, 12 * S)           # 2 children: 2 messages per round
    many = C.double_binary_tree_cost(n, S, 1000)
    assert many.steps == 2 * 2 * (6 + 999) and many.bytes == pytest.approx(2.01 * S)
    assert C.double_binary_tree_cost(2, S, 1).steps == 2    # one child: one message per round
    assert many.bytes < C.allreduce_cost("tree", n, S).bytes
    assert C.double_binary_tree_cost(1, S, 8).steps == 0
    with pytest.raises(ValueError):
        C.double_binary_tree_cost(n, S, 0)
