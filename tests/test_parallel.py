"""Sharded layers against unsharded float64 references, communication logs against the ring's
byte formula, and the 4D rank grid against its definition (coordinates, groups, orders)."""
import math

import numpy as np
import pytest

import gemmlab as gl

par = gl.parallel


def _rand(rng, *shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def _close(got, ref):
    """FP32 tolerance against a float64 reference, scaled to the reference's magnitude."""
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(ref).max()))


def _ring_bytes(nbytes, p):
    """What one rank sends in a ring all-reduce of an nbytes buffer split into p equal chunks."""
    return 2 * (p - 1) * nbytes // p


# --- column and row parallel ------------------------------------------------------------------

@pytest.mark.parametrize("M,K,N,p", [(7, 9, 15, 3), (5, 10, 20, 5), (3, 6, 4, 1)])
def test_column_parallel_shards_concatenate_to_y(M, K, N, p):
    rng = np.random.default_rng(M * K * N + p)
    X, W = _rand(rng, M, K), _rand(rng, K, N)
    shards = par.column_parallel(X, W, p)
    assert len(shards) == p and all(s.shape == (M, N // p) for s in shards)
    _close(np.concatenate(shards, axis=1), X.astype(np.float64) @ W.astype(np.float64))


@pytest.mark.parametrize("M,K,N,p", [(7, 15, 9, 3), (5, 20, 11, 5), (4, 6, 3, 2)])
def test_row_parallel_partials_sum_to_y(M, K, N, p):
    rng = np.random.default_rng(M * K * N + p)
    X, W = _rand(rng, M, K), _rand(rng, K, N)
    partials = par.row_parallel(X, W, p)
    assert len(partials) == p and all(P.shape == (M, N) for P in partials)
    _close(np.sum(partials, axis=0, dtype=np.float64), X.astype(np.float64) @ W.astype(np.float64))


def test_non_divisible_sizes_say_what_must_divide_what():
    X, W = np.ones((8, 12)), np.ones((12, 20))
    with pytest.raises(ValueError, match=r"N = 20 must be divisible by p = 3 \(20 % 3 = 2\)"):
        par.column_parallel(X, W, 3)
    with pytest.raises(ValueError, match=r"K = 12 must be divisible by p = 5"):
        par.row_parallel(X, W, 5)


@pytest.mark.parametrize("X,W,p,error,text", [
    (np.ones((8, 12)), np.ones((20, 12)), 4, ValueError, "contraction dimension K"),
    (np.ones(12), np.ones((12, 20)), 4, ValueError, "must be a matrix"),
    (np.ones((8, 12), bool), np.ones((12, 20)), 4, TypeError, "real numbers"),
    (np.ones((8, 12)), np.ones((12, 20)), 0, ValueError, "whole number >= 1"),
    (np.ones((8, 12)), np.ones((12, 20)), 2.0, ValueError, "whole number >= 1"),
    (np.ones((8, 12)), np.ones((12, 20)), True, ValueError, "whole number >= 1"),
])
def test_bad_inputs_are_explained(X, W, p, error, text):
    with pytest.raises(error, match=text):
        par.column_parallel(X, W, p)


def test_ledger_matches_the_shapes_the_layers_produce():
    rng = np.random.default_rng(1)
    M, K, N, p = 5, 12, 18, 3
    X, W = _rand(rng, M, K), _rand(rng, K, N)
    ledger = par.shape_ledger(X, W, p)
    col, row = ledger["column"], ledger["row"]
    assert col.W_r == par.split_columns(W, p)[0].shape
    assert col.local == par.column_parallel(X, W, p)[0].shape and col.X_r == X.shape
    assert row.W_r == par.split_rows(W, p)[0].shape
    assert row.local == par.row_parallel(X, W, p)[0].shape
    assert row.X_r == np.split(X, p, axis=1)[0].shape
    assert (col.merge, row.merge) == ("concat", "sum")
    html = ledger._repr_html_()
    assert html.startswith("<table>") and "12x6" in html and "4x18" in html
    assert "row parallel" in str(ledger)
    with pytest.raises(KeyError, match="'column' or 'row'"):
        ledger["diagonal"]
    with pytest.raises(ValueError, match="contraction"):
        par.shape_ledger((5, 12), (13, 18), 3)


@pytest.mark.parametrize("layout", ["in_out", "out_in"])
@pytest.mark.parametrize("axis", [0, 1])
def test_parallel_kind_names_the_split_the_numbers_show(layout, axis):
    rng = np.random.default_rng(2)
    K, N, p = 6, 9, 3
    W = _rand(rng, K, N)
    stored = W if layout == "in_out" else np.ascontiguousarray(W.T)
    blocks = [par.math_weight(b, layout) for b in np.split(stored, p, axis=axis)]
    as_columns = all(np.array_equal(b, c) for b, c in zip(blocks, par.split_columns(W, p), strict=True))
    as_rows = all(np.array_equal(b, r) for b, r in zip(blocks, par.split_rows(W, p), strict=True))
    assert as_columns != as_rows
    assert par.parallel_kind(layout, axis) == ("column" if as_columns else "row")


def test_weight_layout_errors():
    with pytest.raises(ValueError, match="'out_in'"):
        par.math_weight(np.ones((3, 4)), "pytorch")
    with pytest.raises(ValueError, match="0 or 1"):
        par.parallel_kind("out_in", 2)


def test_the_merge_mistakes_give_the_wrong_shapes():
    rng = np.random.default_rng(3)
    X, W, p = _rand(rng, 4, 6), _rand(rng, 6, 9), 3
    assert par.concat_partial_sums(X, W, p).shape == (4, 9 * p)
    assert par.sum_column_shards(X, W, p).shape == (4, 9 // p)


# --- Megatron FFN -----------------------------------------------------------------------------

@pytest.mark.parametrize("p", [1, 2, 4])
def test_megatron_ffn_matches_reference_with_one_allreduce(p):
    rng = np.random.default_rng(10 + p)
    M, D, F = 5, 8, 24
    X, W_up, W_down = _rand(rng, M, D), _rand(rng, D, F, scale=0.5), _rand(rng, F, D, scale=0.5)
    b_up, b_down = _rand(rng, F), _rand(rng, D)
    res = par.megatron_ffn(X, W_up, W_down, p, b_down=b_down, b_up=b_up)
    ref = par.ffn_reference(X, W_up, W_down, b_up=b_up, b_down=b_down)
    for Y in res.outputs:
        _close(Y, ref)
    assert res.local_shapes("W_up") == [(D, F // p)] * p
    assert res.local_shapes("Z") == [(M, F // p)] * p == res.local_shapes("H")
    assert res.local_shapes("W_down") == [(F // p, D)] * p
    assert res.local_shapes("P") == [(M, D)] * p
    assert res.comm.collectives() == ["all-reduce"]
    assert res.comm[0].payload_bytes == M * D * 4
    assert res.comm.sent_per_rank() == (_ring_bytes(M * D * 4, p),) * p


def test_ffn_reduce_scatter_leaves_row_blocks_for_half_the_bytes():
    rng = np.random.default_rng(20)
    M, D, F, p = 8, 5, 12, 4
    X, W_up, W_down, b = _rand(rng, M, D), _rand(rng, D, F), _rand(rng, F, D), _rand(rng, D)
    ref = par.ffn_reference(X, W_up, W_down, b_down=b)
    scattered = par.megatron_ffn(X, W_up, W_down, p, b_down=b, reduce="reduce-scatter")
    assert [Y.shape for Y in scattered.outputs] == [(M // p, D)] * p
    _close(np.concatenate(scattered.outputs), ref)
    reduced = par.megatron_ffn(X, W_up, W_down, p, b_down=b)
    assert 2 * scattered.comm.sent_per_rank()[0] == reduced.comm.sent_per_rank()[0]
    with pytest.raises(ValueError, match="reduce-scatter"):
        par.megatron_ffn(X, W_up, W_down, p, reduce="gather")


@pytest.mark.parametrize("p", [2, 3])
def test_swiglu_ffn_matches_reference(p):
    rng = np.random.default_rng(30 + p)
    M, D, F = 4, 7, 18
    X, W_g, W_u, W_d = _rand(rng, M, D), _rand(rng, D, F), _rand(rng, D, F), _rand(rng, F, D)
    b = _rand(rng, D)
    res = par.megatron_swiglu_ffn(X, W_g, W_u, W_d, p, b_down=b)
    ref = par.swiglu_reference(X, W_g, W_u, W_d, b_down=b)
    for Y in res.outputs:
        _close(Y, ref)
    assert res.local_shapes("H") == [(M, F // p)] * p
    assert res.comm.collectives() == ["all-reduce"]


def test_activations_against_their_definitions():
    x = np.linspace(-6, 6, 101)
    exact_gelu = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(par.gelu(x), exact_gelu, atol=1e-3)
    np.testing.assert_allclose(par.silu(x), x / (1 + np.exp(-x)), rtol=1e-12)
    assert par.gelu(np.float32([1.5])).dtype == np.float32
    assert np.all(np.isfinite(par.silu(np.array([-1e4, 1e4]))))


def test_ffn_backward_reference_matches_finite_differences():
    rng = np.random.default_rng(35)
    X, W_up, W_down, dY = (rng.standard_normal(s) for s in ((3, 4), (4, 8), (8, 5), (3, 5)))
    grads = par.ffn_backward_reference(X, W_up, W_down, dY)
    eps = 1e-6
    for which, grad in enumerate(grads):
        for index in [(0, 0), (1, 2), (2, 3)]:
            args = [X.copy(), W_up.copy(), W_down.copy()]
            args[which][index] += eps
            up = np.sum(par.ffn_reference(*args) * dY)
            args[which][index] -= 2 * eps
            down = np.sum(par.ffn_reference(*args) * dY)
            assert abs((up - down) / (2 * eps) - grad[index]) < 1e-5 * max(1, abs(grad[index]))


@pytest.mark.parametrize("p", [2, 4])
def test_ffn_backward_needs_one_allreduce_for_dx_and_none_for_weights(p):
    rng = np.random.default_rng(36 + p)
    M, D, F = 4, 8, 16
    X, W_up, W_down, dY = (_rand(rng, *s) for s in ((M, D), (D, F), (F, D), (M, D)))
    dX_ref, dW_up_ref, dW_down_ref = par.ffn_backward_reference(X, W_up, W_down, dY)
    res = par.megatron_ffn_backward(X, W_up, W_down, dY, p)
    for dX in res.outputs:
        _close(dX, dX_ref)
    _close(np.concatenate(res.local["dW_up"], axis=1), dW_up_ref)
    _close(np.concatenate(res.local["dW_down"], axis=0), dW_down_ref)
    assert res.comm.collectives() == ["all-reduce"]
    assert res.comm[0].payload_bytes == X.nbytes
    with pytest.raises(ValueError, match="Y's shape"):
        par.megatron_ffn_backward(X, W_up, W_down, dY.T, p)
    x = np.linspace(-4, 4, 9)
    np.testing.assert_allclose(par.gelu_grad(x), (par.gelu(x + 1e-6) - par.gelu(x - 1e-6)) / 2e-6,
                               atol=1e-6)


def test_ffn_non_divisible_hidden_size():
    with pytest.raises(ValueError, match="F = 10 must be divisible by p = 4"):
        par.megatron_ffn(np.ones((2, 3)), np.ones((3, 10)), np.ones((10, 3)), 4)
    with pytest.raises(ValueError, match="W_up's columns to equal W_down's rows"):
        par.megatron_ffn(np.ones((2, 3)), np.ones((3, 8)), np.ones((6, 3)), 2)
    with pytest.raises(ValueError, match="b_down must be a vector of 3"):
        par.megatron_ffn(np.ones((2, 3)), np.ones((3, 8)), np.ones((8, 3)), 2, b_down=np.ones(8))


def test_bias_on_every_rank_is_off_by_p_minus_one_biases():
    rng = np.random.default_rng(40)
    p = 4
    X, W_up, W_down, b = _rand(rng, 3, 4), _rand(rng, 4, 8), _rand(rng, 8, 4), _rand(rng, 4)
    wrong = par.ffn_bias_on_every_rank(X, W_up, W_down, p, b).outputs[0]
    right = par.megatron_ffn(X, W_up, W_down, p, b_down=b).outputs[0]
    _close(wrong - right, (p - 1) * b.astype(np.float64) * np.ones((3, 1)))


def test_allgather_in_the_middle_is_right_but_costs_an_extra_collective():
    rng = np.random.default_rng(41)
    M, D, F, p = 3, 4, 16, 4
    X, W_up, W_down = _rand(rng, M, D), _rand(rng, D, F), _rand(rng, F, D)
    res = par.ffn_allgather_in_middle(X, W_up, W_down, p)
    for Y in res.outputs:
        _close(Y, par.ffn_reference(X, W_up, W_down))
    assert res.comm.collectives() == ["all-gather", "all-reduce"]
    gather = res.comm[0]
    assert gather.payload_bytes == M * (F // p) * 4
    assert gather.sent_bytes == ((p - 1) * M * (F // p) * 4,) * p
    lean = par.megatron_ffn(X, W_up, W_down, p).comm.sent_per_rank()
    assert res.comm.sent_per_rank()[0] == lean[0] + gather.sent_bytes[0]


# --- Megatron attention -----------------------------------------------------------------------

def _naive_attention(X, Wq, Wk, Wv, Wo, h, h_kv, causal):
    """Head by head, token by token, in float64: an independent reference."""
    X, Wq, Wk, Wv, Wo = (a.astype(np.float64) for a in (X, Wq, Wk, Wv, Wo))
    S, d_h = X.shape[0], Wq.shape[1] // h
    heads = []
    for i in range(h):
        j = i // (h // h_kv)
        q = X @ Wq[:, i * d_h:(i + 1) * d_h]
        k, v = X @ Wk[:, j * d_h:(j + 1) * d_h], X @ Wv[:, j * d_h:(j + 1) * d_h]
        out = np.zeros((S, d_h))
        for t in range(S):
            visible = t + 1 if causal else S
            s = q[t] @ k[:visible].T / math.sqrt(d_h)
            w = np.exp(s - s.max())
            out[t] = (w / w.sum()) @ v[:visible]
        heads.append(out)
    return np.concatenate(heads, axis=1) @ Wo


def _attention_weights(rng, d, h, h_kv):
    d_h = d // h
    return (_rand(rng, d, h * d_h, scale=0.3), _rand(rng, d, h_kv * d_h, scale=0.3),
            _rand(rng, d, h_kv * d_h), _rand(rng, h * d_h, d))


@pytest.mark.parametrize("h,h_kv,p,causal,mode", [
    (4, 4, 2, False, "split"), (8, 8, 4, True, "split"), (6, 6, 3, True, "split"),
    (8, 4, 2, True, "split"), (8, 2, 4, False, "replicated"), (8, 1, 4, True, "replicated"),
    (4, 4, 1, False, "split"),
])
def test_megatron_attention_matches_a_head_by_head_reference(h, h_kv, p, causal, mode):
    rng = np.random.default_rng(h * 10 + h_kv + p)
    S, d = 7, 3 * h
    X = _rand(rng, S, d)
    Wq, Wk, Wv, Wo = _attention_weights(rng, d, h, h_kv)
    b_o = _rand(rng, d)
    res = par.megatron_attention(X, Wq, Wk, Wv, Wo, h, p, n_kv_heads=h_kv, causal=causal, b_o=b_o)
    ref = _naive_attention(X, Wq, Wk, Wv, Wo, h, h_kv, causal) + b_o
    _close(par.attention_reference(X, Wq, Wk, Wv, Wo, h, h_kv, causal, b_o), ref)
    for Y in res.outputs:
        _close(Y, ref)
    d_h = d // h
    assert res.info["kv_mode"] == mode
    assert res.info["q_heads"] == [list(range(r * h // p, (r + 1) * h // p)) for r in range(p)]
    assert res.local_shapes("Q") == [(S, h // p * d_h)] * p
    assert res.local_shapes("Wo") == [(h // p * d_h, d)] * p
    assert res.local_shapes("P") == [(S, d)] * p
    group = h // h_kv
    for q_heads, kv_heads in zip(res.info["q_heads"], res.info["kv_heads"], strict=True):
        assert sorted({i // group for i in q_heads}) == kv_heads
    assert res.comm.collectives() == ["all-reduce"]
    assert res.comm.sent_per_rank() == (_ring_bytes(S * d * 4, p),) * p


def test_attention_layout_errors():
    rng = np.random.default_rng(50)
    X = _rand(rng, 5, 12)
    Wq, Wk, Wv, Wo = _attention_weights(rng, 12, 6, 3)
    with pytest.raises(ValueError, match="n_heads = 6 must be divisible by p = 4"):
        par.megatron_attention(X, Wq, Wk, Wv, Wo, 6, 4, n_kv_heads=3)
    with pytest.raises(ValueError, match="n_kv_heads = 3 K/V heads do not fit p = 2"):
        par.megatron_attention(X, Wq, Wk, Wv, Wo, 6, 2, n_kv_heads=3)
    with pytest.raises(ValueError, match="n_kv_heads must divide n_heads"):
        par.megatron_attention(X, Wq, Wk, Wv, Wo, 6, 2, n_kv_heads=4)
    with pytest.raises(ValueError, match="Wk must have"):
        par.megatron_attention(X, Wq, Wk, Wv, Wo, 6, 2)
    with pytest.raises(ValueError, match="do not split into n_heads = 5"):
        par.megatron_attention(X, Wq, Wk, Wv, Wo, 5, 1)


def test_attention_bias_on_every_rank():
    rng = np.random.default_rng(51)
    h, p = 4, 4
    X = _rand(rng, 5, 8)
    Wq, Wk, Wv, Wo = _attention_weights(rng, 8, h, h)
    b = _rand(rng, 8)
    wrong = par.attention_bias_on_every_rank(X, Wq, Wk, Wv, Wo, h, p, b).outputs[0]
    right = par.megatron_attention(X, Wq, Wk, Wv, Wo, h, p, b_o=b).outputs[0]
    _close(wrong - right, (p - 1) * b.astype(np.float64) * np.ones((5, 1)))


# --- the 4D rank grid -------------------------------------------------------------------------

def _brute_force_coords(sizes, order):
    """Enumerate the grid with nested loops, the first axis of ``order`` innermost."""
    coords = [{}]
    for axis in order:
        coords = [{**c, axis: i} for i in range(sizes[axis]) for c in coords]
    return coords


@pytest.mark.parametrize("sizes,order", [
    (dict(tp=2, cp=3, dp=2, pp=2), "tp-cp-dp-pp"),
    (dict(tp=4, cp=1, dp=3, pp=2), "tp-dp-pp-cp"),
    (dict(tp=2, cp=2, dp=3, pp=1), ("dp", "tp", "pp", "cp")),
])
def test_rank_grid_numbering_and_groups(sizes, order):
    grid = par.RankGrid(**sizes, order=order)
    names = order.split("-") if isinstance(order, str) else order
    expected = _brute_force_coords(sizes, names)
    assert grid.size == len(grid) == math.prod(sizes.values()) == len(expected)
    for rank, c in enumerate(expected):
        assert grid.coords(rank)._asdict() == c
        assert grid.rank(**c) == rank
    for axis in par.AXES:
        groups = grid.groups(axis)
        assert sorted(r for g in groups for r in g) == list(range(grid.size))
        for group in groups:
            assert len(group) == sizes[axis]
            coords = [grid.coords(r)._asdict() for r in group]
            assert [c[axis] for c in coords] == list(range(sizes[axis]))
            assert len({tuple(v for a, v in c.items() if a != axis) for c in coords}) == 1
            assert all(grid.group(axis, r) == group for r in group)


def test_megatron_order_puts_tp_groups_on_consecutive_ranks():
    grid = par.RankGrid(tp=8, cp=2, dp=4, pp=2)
    assert grid.order == ("tp", "cp", "dp", "pp")
    assert grid.size == 8 * 2 * 4 * 2
    assert all(g == list(range(g[0], g[0] + 8)) for g in grid.groups("tp"))
    assert grid.group("cp", 0) == [0, 8]
    assert grid.group("pp", 3) == [3, 3 + 8 * 2 * 4]


def test_rank_grid_errors():
    with pytest.raises(ValueError, match="tensor-parallel degree"):
        par.RankGrid(tp=0)
    with pytest.raises(ValueError, match="each of tp, cp, dp, pp once"):
        par.RankGrid(tp=2, order="tp-dp-pp")
    grid = par.RankGrid(tp=2, dp=2)
    with pytest.raises(ValueError, match="from 0 to 3"):
        grid.coords(4)
    with pytest.raises(ValueError, match="dp coordinate must be a whole number from 0 to 1"):
        grid.rank(dp=2)
    with pytest.raises(ValueError, match="axis must be one of"):
        grid.group("ep", 0)
    assert grid.coords(np.int64(3)) == (1, 0, 1, 0)
    assert "<table>" in grid._repr_html_()
