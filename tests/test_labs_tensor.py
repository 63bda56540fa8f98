"""06.lab_column, 06.lab_row, 09.lab_ffn and 14.lab_attention: the reference programs pass on the
public and hidden cases; every feedback message has the broken rank program it is for, which
fails with that message in the notebook's check and under the grader."""
import numpy as np
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import get_question
from gemmlab.parallel import gelu, head_attention

# -- 06.lab_column --

def column_all_reduced(comm, X, W_r):
    return comm.all_reduce(X @ W_r)


def column_gathered(comm, X, W_r):
    return comm.all_gather(X @ W_r, axis=1)


def column_gathered_then_sliced(comm, X, W_r):
    width = W_r.shape[1]
    Y = comm.all_gather(X @ W_r, axis=1)
    return Y[:, comm.rank * width:(comm.rank + 1) * width]


def column_transposed(comm, X, W_r):
    return (X @ W_r)[::-1]


# -- 06.lab_row --

def row_concatenated(comm, X_r, W_r):
    return comm.all_gather(X_r @ W_r, axis=1)


def row_partial_only(comm, X_r, W_r):
    return X_r @ W_r


def row_gathered_then_summed(comm, X_r, W_r):
    return comm.all_gather((X_r @ W_r)[None], axis=0).sum(axis=0)


# -- 09.lab_ffn --

def ffn_gather_in_the_middle(comm, X, W_up_r, b_up_r, W_down_r, b_down):
    Z = comm.all_gather(X @ W_up_r + b_up_r, axis=1)
    width = W_up_r.shape[1]
    H_r = gelu(Z)[:, comm.rank * width:(comm.rank + 1) * width]
    return comm.all_reduce(H_r @ W_down_r) + b_down


def ffn_bias_on_every_rank(comm, X, W_up_r, b_up_r, W_down_r, b_down):
    return comm.all_reduce(gelu(X @ W_up_r + b_up_r) @ W_down_r + b_down)


def ffn_concatenated(comm, X, W_up_r, b_up_r, W_down_r, b_down):
    return comm.all_gather(gelu(X @ W_up_r + b_up_r) @ W_down_r, axis=1)


def ffn_all_reduced_z(comm, X, W_up_r, b_up_r, W_down_r, b_down):
    Z = comm.all_reduce(X @ W_up_r + b_up_r)
    return comm.all_reduce(gelu(Z) @ W_down_r) + b_down


def ffn_without_the_up_bias(comm, X, W_up_r, b_up_r, W_down_r, b_down):
    return comm.all_reduce(gelu(X @ W_up_r) @ W_down_r) + b_down


def ffn_partial_only(comm, X, W_up_r, b_up_r, W_down_r, b_down):
    return gelu(X @ W_up_r + b_up_r) @ W_down_r + b_down


# -- 14.lab_attention --

def _heads(comm, X, Wq_r, Wk_r, Wv_r, n_heads):
    local = n_heads // comm.size
    return head_attention(X @ Wq_r, X @ Wk_r, X @ Wv_r, local, local)


def _my_rows(comm, Wo, width):
    return Wo[comm.rank * width:(comm.rank + 1) * width]


def attention_wo_by_columns(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads):
    O = comm.all_gather(_heads(comm, X, Wq_r, Wk_r, Wv_r, n_heads), axis=1)
    c = Wo.shape[1] // comm.size
    cols = slice(comm.rank * c, (comm.rank + 1) * c)
    return comm.all_gather(O @ Wo[:, cols] + b_o[cols], axis=1)


def attention_wo_by_columns_without_gather(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads):
    c = Wo.shape[1] // comm.size
    cols = slice(comm.rank * c, (comm.rank + 1) * c)
    return comm.all_gather(_heads(comm, X, Wq_r, Wk_r, Wv_r, n_heads) @ Wo[:, cols], axis=1) + b_o


def attention_bias_on_every_rank(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads):
    P = _heads(comm, X, Wq_r, Wk_r, Wv_r, n_heads) @ _my_rows(comm, Wo, Wq_r.shape[1])
    return comm.all_reduce(P + b_o)


def attention_concatenated(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads):
    P = _heads(comm, X, Wq_r, Wk_r, Wv_r, n_heads) @ _my_rows(comm, Wo, Wq_r.shape[1])
    return comm.all_gather(P, axis=1)


def attention_gathers_qkv(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads):
    Q, K, V = (comm.all_gather(X @ W, axis=1) for W in (Wq_r, Wk_r, Wv_r))
    return head_attention(Q, K, V, n_heads, n_heads) @ Wo + b_o


def attention_all_reduces_q(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads):
    local = n_heads // comm.size
    O = head_attention(comm.all_reduce(X @ Wq_r), X @ Wk_r, X @ Wv_r, local, local)
    return comm.all_reduce(O @ _my_rows(comm, Wo, Wq_r.shape[1])) + b_o


def attention_first_rows_everywhere(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads):
    P = _heads(comm, X, Wq_r, Wk_r, Wv_r, n_heads) @ Wo[:Wq_r.shape[1]]
    return comm.all_reduce(P) + b_o


def ffn_gathered_then_biased(comm, X, W_up_r, b_up_r, W_down_r, b_down):
    return comm.all_gather(gelu(X @ W_up_r + b_up_r) @ W_down_r, axis=1) + b_down


def attention_gathered_then_biased(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads):
    P = _heads(comm, X, Wq_r, Wk_r, Wv_r, n_heads) @ _my_rows(comm, Wo, Wq_r.shape[1])
    return comm.all_gather(P, axis=1) + b_o


BROKEN = [
    ("09.lab_ffn", ffn_gathered_then_biased, "the bias cannot be added to what your all-gather "
                                             "returned"),
    ("09.lab_ffn", ffn_gathered_then_biased, "concatenating partial sums"),
    ("14.lab_attention", attention_gathered_then_biased, "concatenating partial sums"),
    ("14.lab_attention", attention_gathers_qkv, "each repeat the work of the whole layer, "
                                                "whatever the bytes moved"),
    ("06.lab_row", row_gathered_then_summed, "an all-gather of whole tensors grows to p/2 times "
                                             "an all-reduce's bytes"),
    ("06.lab_column", column_all_reduced, "all-reducing column-parallel outputs: the Y_r are "
                                          "different output columns"),
    ("06.lab_column", column_gathered, "returned the whole Y"),
    ("06.lab_column", column_gathered_then_sliced, "column parallel needs no communication"),
    ("06.lab_column", column_transposed, "rank 0's result differs from the unsharded float64"),
    ("06.lab_row", row_concatenated, "concatenating partial sums"),
    ("06.lab_row", row_partial_only, "your result is this rank's partial sum"),
    ("06.lab_row", row_gathered_then_summed, "right values, but your ranks called all-gather of"),
    ("09.lab_ffn", ffn_gather_in_the_middle, "a collective the layer does not need: an all-gather"),
    ("09.lab_ffn", ffn_bias_on_every_rank,
     "the bias added on every rank: your Y is off by (p-1) b"),
    ("09.lab_ffn", ffn_concatenated, "concatenating partial sums"),
    ("09.lab_ffn", ffn_all_reduced_z, "all-reducing column-parallel outputs: Z_r = X W_up_r"),
    ("09.lab_ffn", ffn_without_the_up_bias, "differs from the unsharded float64 reference"),
    ("09.lab_ffn", ffn_partial_only, "your result is this rank's partial sum"),
    ("14.lab_attention", attention_wo_by_columns, "W_O split by columns: then each rank needs"),
    ("14.lab_attention", attention_wo_by_columns_without_gather,
     "W_O split by columns does not fit it"),
    ("14.lab_attention", attention_bias_on_every_rank, "the bias added on every rank"),
    ("14.lab_attention", attention_concatenated, "concatenating partial sums"),
    ("14.lab_attention", attention_gathers_qkv, "a collective the layer does not need: 3 "
                                                "all-gathers"),
    ("14.lab_attention", attention_all_reduces_q, "all-reducing column-parallel outputs: Q_r, K_r"),
    ("14.lab_attention", attention_first_rows_everywhere,
     "differs from the unsharded float64 reference"),
]
LABS = ["06.lab_column", "06.lab_row", "09.lab_ffn", "14.lab_attention"]


@pytest.mark.parametrize("qid", LABS)
def test_the_reference_passes_the_public_and_hidden_cases(qid):
    q = get_question(qid)
    reference = q.answer()                  # the solutions notebook's program
    assert judge(qid, reference).status == "pass"
    for seed in range(3):
        assert judge(qid, reference, np.random.default_rng(seed)).status == "pass"
    assert {case["p"] for case in q.kind.hidden(np.random.default_rng(0))} == {1, 2, 4}


@pytest.mark.parametrize("qid,program,message", BROKEN,
                         ids=[f"{p.__name__}-{i}" for i, (_, p, _) in enumerate(BROKEN)])
def test_each_mistake_fails_with_its_own_message(qid, program, message):
    for rng in (None, np.random.default_rng(2)):
        result = judge(qid, program, rng)
        assert result.status == "fail"
        assert message in result.feedback, result.feedback


def test_the_ffn_gather_costs_its_real_ratio_of_bytes():
    # public case 1: p = 2, F = 4D: an all-gather of Z (4S, half of it sent) plus the all-reduce
    # (S sent) is 3 times the all-reduce alone
    gathered = judge("09.lab_ffn", ffn_gather_in_the_middle)
    assert "3x the bytes of the one all-reduce" in gathered.feedback
    # the bias is off by (p-1) b: 1 b on the first public case (p = 2), 3 b on the first hidden (4)
    assert "= 1 b" in judge("09.lab_ffn", ffn_bias_on_every_rank).feedback
    hidden = judge("09.lab_ffn", ffn_bias_on_every_rank, np.random.default_rng(0))
    assert "= 3 b" in hidden.feedback


@pytest.mark.parametrize("qid", LABS)
def test_an_untouched_skeleton_is_not_attempted(qid):
    assert judge(qid, lambda comm, *args: ...).status == "not attempted"


# Issue 54: the ranks share the cell's globals, so a module-level dict can carry the sum while
# the all-reduce adds zeros, or each rank's share of the answer (Y/p): values and collectives
# look right, and only what each rank gave the all-reduce tells. The same with the partial sums
# carried point to point around the all-reduce (AROUND_*), which needs no shared memory at all.
SHARED_ROW = '''SHARED = {}


def row_rank(comm, X_r, W_r):
    SHARED[comm.rank] = X_r @ W_r
    comm.all_reduce(0 * SHARED[comm.rank])   # every rank has written its part
    return sum(SHARED[r] for r in range(comm.size))
'''
SHARED_FFN = '''SHARED = {}


def ffn_rank(comm, X, W_up_r, b_up_r, W_down_r, b_down):
    SHARED[comm.rank] = gl.parallel.gelu(X @ W_up_r + b_up_r) @ W_down_r
    comm.all_reduce(0 * SHARED[comm.rank])
    return sum(SHARED[r] for r in range(comm.size)) + b_down
'''
SHARED_ATTENTION = '''SHARED = {}


def attention_rank(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads):
    p, r, width = comm.size, comm.rank, Wq_r.shape[1]
    O_r = gl.parallel.head_attention(X @ Wq_r, X @ Wk_r, X @ Wv_r, n_heads // p, n_heads // p)
    parts = SHARED.setdefault((float(X.sum()), p), {})     # this case's parts
    parts[r] = O_r @ Wo[r * width:(r + 1) * width]
    while len(parts) < p:                                    # wait for the other ranks' parts
        pass
    return comm.all_reduce(sum(parts.values()) / p) + b_o
'''
AROUND_ROW = '''def row_rank(comm, X_r, W_r):
    P = X_r @ W_r
    Y = P
    for k in range(1, comm.size):           # the partials travel point to point ...
        Y = Y + comm.sendrecv(P, (comm.rank + k) % comm.size, (comm.rank - k) % comm.size)
    comm.all_reduce(0 * P)                  # ... and the all-reduce sums zeros
    return Y
'''
AROUND_FFN = '''def ffn_rank(comm, X, W_up_r, b_up_r, W_down_r, b_down):
    P = gl.parallel.gelu(X @ W_up_r + b_up_r) @ W_down_r
    Y = P
    for k in range(1, comm.size):
        Y = Y + comm.sendrecv(P, (comm.rank + k) % comm.size, (comm.rank - k) % comm.size)
    comm.all_reduce(0 * P)
    return Y + b_down
'''
AROUND_ATTENTION = '''def attention_rank(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads):
    p, r, width = comm.size, comm.rank, Wq_r.shape[1]
    O_r = gl.parallel.head_attention(X @ Wq_r, X @ Wk_r, X @ Wv_r, n_heads // p, n_heads // p)
    P = O_r @ Wo[r * width:(r + 1) * width]
    Y = P
    for k in range(1, p):
        Y = Y + comm.sendrecv(P, (r + k) % p, (r - k) % p)
    return comm.all_reduce(Y / p) + b_o     # a share of the answer
'''
ATTACKS = [("06.lab_row", SHARED_ROW, "rank 0's all-reduce input is not its partial product "
                                      "X_0 @ W_0: it is all zeros"),
           ("09.lab_ffn", SHARED_FFN, "rank 0's all-reduce input is not its partial product "
                                      "H_0 @ W_down_0: it is all zeros"),
           ("14.lab_attention", SHARED_ATTENTION, "rank 0's all-reduce input is not its partial "
                                                  "product O_0 @ W_O,0: it is the sum over all "
                                                  "ranks divided by p = "),
           ("06.lab_row", AROUND_ROW, "rank 0's all-reduce input is not its partial product "
                                      "X_0 @ W_0: it is all zeros"),
           ("09.lab_ffn", AROUND_FFN, "rank 0's all-reduce input is not its partial product "
                                      "H_0 @ W_down_0: it is all zeros"),
           ("14.lab_attention", AROUND_ATTENTION, "rank 0's all-reduce input is not its partial "
                                                  "product O_0 @ W_O,0: it is the sum over all "
                                                  "ranks divided by p = ")]


@pytest.mark.parametrize("qid,source,message", ATTACKS,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(ATTACKS)])
def test_a_sum_carried_past_the_all_reduce_fails_on_each_ranks_contribution(qid, source,
                                                                              message):
    from gemmlab_grader.isolate import judge_code
    import gemmlab as gl
    name = source.split("def ", 1)[1].split("(", 1)[0]
    namespace = {"np": np, "gl": gl}
    exec(source, namespace)
    checked = judge(qid, namespace[name])
    graded = judge_code(qid, source, name, seed=4, timeout=240)
    for result in (checked, graded):
        assert result.status == "fail", result.feedback
    assert message in checked.feedback, checked.feedback
    # graded, each rank is a process of its own: the shared dict holds only its own part, so
    # the ranks that wait for the others' parts never finish
    graded_says = "did not finish within" if source is SHARED_ATTENTION else message
    assert graded_says in graded.feedback, graded.feedback


def test_a_rank_may_add_its_share_of_the_bias_before_the_sum():
    """The bias carries nothing of the other ranks: rank 0 adding it before the all-reduce is
    still its own partial product."""
    def bias_on_rank_0(comm, X, W_up_r, b_up_r, W_down_r, b_down):
        P_r = gelu(X @ W_up_r + b_up_r) @ W_down_r
        return comm.all_reduce(P_r + b_down if comm.rank == 0 else P_r)
    assert judge("09.lab_ffn", bias_on_rank_0).status == "pass"
