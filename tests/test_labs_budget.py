"""15.lab_budget: a student's budget, written here from the contract independently of the model,
passes on the public and hidden configurations; each mistake the check names has its broken
budget, failing with its message."""
import math

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import judge
from gemmlab.grading.bank import get_question
from gemmlab.labs import budget as lab
from gemmlab.labs.solutions import solution

REFERENCE = solution("15.lab_budget", name="layer_budget")

QID = "15.lab_budget"


def _inside_one_node(cfg, axes):
    grid = gl.parallel.RankGrid(tp=cfg["tp"], cp=cfg["cp"], dp=cfg["dp"], pp=cfg["pp"])
    nodes = {}
    for rank in range(grid.size):
        key = tuple(v for a, v in grid.coords(rank)._asdict().items() if a not in axes)
        nodes.setdefault(key, set()).add(rank // cfg["gpus_per_node"])
    return all(len(found) == 1 for found in nodes.values())


def student(traffic="tiled", gemms=6, roofline=True, tokens_per_rank=True, features_per_rank=True,
            tp_count=2, tp_link=None, tp_bytes=1, alpha=True, dp_axes=("dp", "cp"), per_step=True,
            shards=True, dp_link=None, pp_messages=2, pp_shared=True, pp_link=None,
            pp_always=False):
    """A budget written as a student would, with one knob per known mistake."""
    pm, C = gl.perfmodel, gl.collectives

    def layer_budget(cfg):
        M = cfg["tokens"] // cfg["cp"] if tokens_per_rank else cfg["tokens"]
        D, b = cfg["d_model"], cfg["itemsize"]
        f = cfg["d_ff"] // cfg["tp"] if features_per_rank else cfg["d_ff"]
        a = cfg["alpha"] if alpha else 0.0

        def bandwidth(axes, force):
            inside = _inside_one_node(cfg, axes)
            if force == "other":
                inside = not inside
            return cfg["nvlink_bandwidth"] if inside else cfg["ib_bandwidth"]

        def gemm(m, n, k):
            flops = pm.gemm_flops(m, n, k)
            if not roofline:
                return flops / cfg["peak_flops"]
            tile = {"tile": cfg["tile"]} if traffic == "tiled" else {}
            nbytes = pm.gemm_traffic(m, n, k, traffic, b, **tile)
            return pm.roofline_time(flops, nbytes, cfg["peak_flops"], cfg["hbm_bandwidth"])

        shapes = [(M, f, D), (M, D, f), (M, f, D), (f, D, M), (M, D, f), (D, f, M)][:gemms]
        tp = tp_count * C.allreduce_time("ring", cfg["tp"], tp_bytes * M * D * b, a,
                                         1 / bandwidth(("tp",), tp_link))
        ranks = math.prod(cfg[axis] for axis in dp_axes)
        grads = 2 * D * (f if shards else cfg["d_ff"]) * b
        dp = C.allreduce_time("ring", ranks, grads, a, 1 / bandwidth(dp_axes, dp_link))
        if per_step:
            dp /= cfg["microbatches"]
        pp = 0.0
        if cfg["pp"] > 1 or pp_always:
            pp = pp_messages * pm.message_time(M * D * b, a, bandwidth(("pp",), pp_link))
            if pp_shared:
                pp /= cfg["layers"] // cfg["pp"]
        return {"gemm": sum(gemm(*s) for s in shapes), "tp_allreduce": tp, "dp_allreduce": dp,
                "pp_p2p": pp}
    return layer_budget


BROKEN = [
    ("ideal traffic", student(traffic="ideal"), "gemm", "it uses the ideal traffic"),
    ("forward only", student(gemms=2), "gemm", "it has the forward GEMMs only"),
    ("no roofline", student(roofline=False), "gemm", "it is FLOPs / peak alone"),
    ("all tokens", student(tokens_per_rank=False), "gemm", "it uses all the tokens"),
    ("all features", student(features_per_rank=False), "gemm",
     "it uses all d_ff hidden features"),
    ("one TP all-reduce", student(tp_count=1), "tp_allreduce", "it counts one all-reduce"),
    ("TP on the wrong link", student(tp_link="other"), "tp_allreduce", "it runs over"),
    ("TP sent plus received", student(tp_bytes=2), "tp_allreduce",
     "it counts the bytes sent plus received"),
    ("no latency", student(alpha=False), "tp_allreduce", "it has no latency term"),
    ("DP only", student(dp_axes=("dp",)), "dp_allreduce", "it reduces over the dp ranks only"),
    ("DP per microbatch", student(per_step=False), "dp_allreduce",
     "it charges the whole gradient all-reduce to every microbatch"),
    ("whole weights", student(shards=False), "dp_allreduce",
     "it reduces the gradients of the whole weights"),
    ("DP on the wrong link", student(dp_link="other"), "dp_allreduce", "it runs over"),
    ("one PP message", student(pp_messages=1), "pp_p2p", "it has one message"),
    ("PP not shared", student(pp_shared=False), "pp_p2p",
     "it charges a whole stage boundary to this layer"),
    ("PP on the wrong link", student(pp_link="other"), "pp_p2p", "it runs over"),
    ("PP without a pipeline", student(pp_always=True), "pp_p2p",
     "pp = 1: there is no stage boundary"),
]


def test_a_budget_written_from_the_contract_passes_public_and_hidden_configurations():
    right = student()
    assert judge(QID, right).status == "pass"
    assert judge(QID, REFERENCE).status == "pass"
    for seed in range(3):
        assert judge(QID, right, np.random.default_rng(seed)).status == "pass"


@pytest.mark.parametrize("name,program,term,message", BROKEN, ids=[b[0] for b in BROKEN])
def test_each_mistake_fails_with_its_own_message(name, program, term, message):
    for rng in (None, np.random.default_rng(6)):
        result = judge(QID, program, rng)
        assert result.status == "fail"
        assert f"Your {term} is" in result.feedback
        assert message in result.feedback, result.feedback


def test_an_unknown_mistake_still_names_the_term():
    def off(cfg):
        terms = student()(cfg)
        return {**terms, "gemm": 1.1 * terms["gemm"]}
    result = judge(QID, off)
    assert result.status == "fail" and "Your gemm is" in result.feedback
    assert result.feedback.endswith("s.")


@pytest.mark.parametrize("value,message", [
    ([1, 2, 3, 4], "returned list; expected a dict with the keys"),
    ({"gemm": 1.0, "tp_allreduce": 1.0, "dp_allreduce": 1.0}, "your budget has no 'pp_p2p' term"),
    ({"gemm": "fast", "tp_allreduce": 1.0, "dp_allreduce": 1.0, "pp_p2p": 0.0},
     "your 'gemm' term is str"),
    ({"gemm": math.inf, "tp_allreduce": 1.0, "dp_allreduce": 1.0, "pp_p2p": 0.0},
     "expected a finite number of seconds"),
])
def test_answers_that_are_not_budgets_fail_with_what_was_expected(value, message):
    result = judge(QID, lambda cfg: value)
    assert result.status == "fail" and message in result.feedback


def test_untouched_crashing_and_endless_budgets(monkeypatch):
    assert judge(QID, lambda cfg: ...).status == "not attempted"
    assert "raised KeyError: 'nodes'" in judge(QID, lambda cfg: cfg["nodes"]).feedback
    monkeypatch.setattr(lab, "TIME_LIMIT", 0.3)

    def spin(cfg):
        while True:
            pass
    assert "did not finish within 0.3 s" in judge(QID, spin).feedback


def test_hidden_configurations_differ_from_the_public_ones():
    kind = get_question(QID).kind
    public = [sorted(c.items()) for c in kind.cases()]
    hidden = kind.hidden(np.random.default_rng(0))
    assert all(sorted(c.items()) not in public for c in hidden)
    assert {c["gpus_per_node"] for c in kind.hidden(np.random.default_rng(1))} <= {4, 8}
