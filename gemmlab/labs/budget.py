"""Lab 15.lab_budget: the student writes ``layer_budget(cfg)``, the time of one FFN layer per GPU
and microbatch on a 4D grid, as a dict of four terms (gemm, tp_allreduce, dp_allreduce, pp_p2p).

The check compares every term with the course's own model (:mod:`gemmlab.parallel.budget`,
whose docstring is the contract) on configurations the student does not see: other grids, tiles,
model sizes, node sizes. A wrong term is compared with the model's known variants (ideal traffic
instead of the tile's, the forward GEMMs only, a TP all-reduce counted once or over the wrong
link, the gradients reduced over dp instead of dp x cp, ...) so the feedback names the mistake.
"""
import math

import numpy as np

from ..judging import FAIL, NOT_ATTEMPTED, PASS, is_missing, where_it_lives
from ..judging.verdict import count
from ..parallel import budget as model
from ..perfmodel.traffic import gemm_flops
from .kinds import CodeLab, NoAnswer
from .limits import TIME_LIMIT, call_plain

RTOL = 1e-6


def _other_bandwidth(cfg, axes):
    inside = model.inside_one_node(cfg, axes)
    return cfg["ib_bandwidth"] if inside else cfg["nvlink_bandwidth"], inside


def _link_message(cfg, axes):
    _, inside = _other_bandwidth(cfg, axes)
    group = " x ".join(axes)
    if inside:
        return (f"it runs over InfiniBand, but on this grid every {group} group lies inside one "
                f"node of {cfg['gpus_per_node']} GPUs (Megatron numbers ranks tp fastest, then "
                f"cp, dp, pp), so it runs over NVLink")
    return (f"it runs over NVLink, but on this grid a {group} group spans more than one node of "
            f"{cfg['gpus_per_node']} GPUs, so it crosses InfiniBand")


DP_ONLY = ("it reduces over the dp ranks only; context-parallel ranks hold the same weights, so "
           "the gradients are summed over dp x cp ranks (as Megatron-LM does)")
ALL_TOKENS = ("it moves the activations of all the tokens; a CP rank holds M = tokens / cp rows of "
              "them")
NO_BOUNDARY = "pp = 1: there is no stage boundary, so no point-to-point message"


def _variants(cfg):
    """term -> [(name, value of a known mistake, what the mistake is)], in the order tried."""
    M, f = model.rows_per_rank(cfg), model.features_per_rank(cfg)
    forward, backward = model.gemm_shapes(M, cfg["d_model"], f)
    compute_only = sum(gemm_flops(*s) for s in forward + backward) / cfg["peak_flops"]
    no_latency = {**cfg, "alpha": 0.0}
    return {
        "gemm": [
            ("ideal", model.gemm_term(cfg, M, f, model="ideal"),
             "it uses the ideal traffic (every element loaded once); the lab asks for the "
             "roofline of your tile: the tiled traffic model with T = tile, in which A is read "
             "ceil(n/T) times and B ceil(m/T) times"),
            ("forward", model.gemm_term(cfg, M, f, passes=("forward",)),
             "it has the forward GEMMs only; training also runs the backward pass: four more "
             "GEMMs (dH, dW_down, dX, dW_up), twice the forward's FLOPs"),
            ("compute", compute_only,
             "it is FLOPs / peak alone; the roofline is the larger of the compute time and the "
             "memory time, and with this tile the bytes may win"),
            ("tokens", model.gemm_term(cfg, cfg["tokens"], f),
             "it uses all the tokens; a CP rank holds M = tokens / cp of them"),
            ("features", model.gemm_term(cfg, M, cfg["d_ff"]),
             "it uses all d_ff hidden features; a TP rank holds f = d_ff / tp of them"),
        ],
        "tp_allreduce": [
            ("once", model.tp_term(cfg, M, count=1),
             "it counts one all-reduce; the forward has one at the layer's exit and the backward "
             "another (for dX): two per layer"),
            ("link", model.tp_term(cfg, M, bandwidth=_other_bandwidth(cfg, ("tp",))[0]),
             _link_message(cfg, ("tp",))),
            ("tokens", model.tp_term(cfg, cfg["tokens"]), ALL_TOKENS),
            ("sent+received", model.tp_term(cfg, M, bytes_factor=2),
             "it counts the bytes sent plus received; sending and receiving overlap (full "
             "duplex), so the time follows the 2(N-1)/N S a rank sends"),
            ("latency", model.tp_term(no_latency, M),
             "it has no latency term; each of the ring's 2(N-1) steps pays alpha"),
        ],
        "dp_allreduce": [
            ("dp only", model.dp_term(cfg, f, axes=("dp",)), DP_ONLY),
            ("dp only", model.dp_term(cfg, f, axes=("dp",),
                                      bandwidth=model.link_bandwidth(cfg, ("dp", "cp"))), DP_ONLY),
            ("microbatches", model.dp_term(cfg, f, microbatches=1),
             "it charges the whole gradient all-reduce to every microbatch; it runs once per "
             "training step, so each of the step's microbatches carries 1/microbatches of it"),
            ("whole weights", model.dp_term(cfg, cfg["d_ff"]),
             "it reduces the gradients of the whole weights; each rank holds and reduces only "
             "its shards, 2 d_model (d_ff / tp) values"),
            ("link", model.dp_term(cfg, f, bandwidth=_other_bandwidth(cfg, ("dp", "cp"))[0]),
             _link_message(cfg, ("dp", "cp"))),
        ],
        "pp_p2p": [
            ("one message", model.pp_term(cfg, M, messages=1),
             "it has one message; the activations go to the next stage and their gradient comes "
             "back: two"),
            ("not shared", model.pp_term(cfg, M, layers_per_stage=1),
             "it charges a whole stage boundary to this layer; a stage's layers/pp layers share "
             "its one boundary"),
            ("link", model.pp_term(cfg, M, bandwidth=_other_bandwidth(cfg, ("pp",))[0]),
             _link_message(cfg, ("pp",))),
            ("tokens", model.pp_term(cfg, cfg["tokens"]), ALL_TOKENS),
        ],
    }


def _same(a, b):
    return b is not None and math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-15)


def _bad_term(budget, term):
    """Why ``budget[term]`` is not a number of seconds, or None."""
    if term not in budget:
        return (f"your budget has no {term!r} term; return a dict with the keys "
                f"{', '.join(repr(t) for t in model.TERMS)}")
    value = budget[term]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return f"your {term!r} term is {type(value).__name__} {value!r:.40}; expected seconds"
    if not math.isfinite(value):
        return f"your {term!r} term is {value}; expected a finite number of seconds"
    return None


def evaluate(fn, cfg):
    """Run the student's ``fn`` on one configuration: (FAIL, why) when its answer is not a budget
    at all, else (None, {term: (got, expected, {mistake name: text} it matches)}) for every term
    that differs from the model."""
    called = where_it_lives(fn, call_plain, (dict(cfg),), TIME_LIMIT)
    if called["error"]:
        return FAIL, f"layer_budget(cfg) {called['error']}"
    value = called["value"]
    if is_missing(value):
        raise NoAnswer()
    if not isinstance(value, dict):
        return FAIL, (f"layer_budget(cfg) returned {type(value).__name__}; expected a dict with "
                      f"the keys {', '.join(repr(t) for t in model.TERMS)}")
    for term in model.TERMS:
        bad = _bad_term(value, term)
        if bad:
            return FAIL, bad
    expected = model.layer_budget(cfg)
    variants = _variants(cfg)
    wrong = {}
    for term in model.TERMS:
        got = float(value[term])
        if _same(got, expected[term]):
            continue
        if term == "pp_p2p" and cfg["pp"] == 1:
            matches = {"boundary": NO_BOUNDARY}
        else:
            matches = {name: text for name, v, text in variants[term] if _same(got, v)}
        wrong[term] = (got, expected[term], matches)
    return None, wrong


def explain(wrong, others=()):
    """The feedback for one configuration's wrong terms. A mistake that explains the same term on
    every other failing configuration (``others``) is preferred: on one grid two mistakes can give
    the same number (all the tokens, or bytes counted twice, when cp = 2)."""
    problems = []
    for term, (got, expected, matches) in wrong.items():
        agreed = [name for name in matches
                  if all(name in other[term][2] for other in others if term in other)]
        name = (agreed or list(matches) or [None])[0]
        shown = f"Your {term} is {got:.4g} s, the course's model gives {expected:.4g} s"
        problems.append(f"{shown}: {matches[name]}." if name else f"{shown}.")
    return " ".join(problems)


def _describe(cfg):
    return (f"tp={cfg['tp']}, cp={cfg['cp']}, dp={cfg['dp']}, pp={cfg['pp']}, "
            f"{cfg['gpus_per_node']} GPUs per node, tile {cfg['tile']}, tokens {cfg['tokens']}, "
            f"d_model {cfg['d_model']}, d_ff {cfg['d_ff']}, {cfg['layers']} layers")


class BudgetLab(CodeLab):
    """15.lab_budget: the layer budget on lesson 15's grid and on hidden ones."""
    function = "your layer_budget"
    # lesson 15's grid; no PP, DP across nodes; everything inside a node but PP; TP across
    # nodes; few tokens per rank, so even one-pass traffic makes the GEMMs memory-bound
    PUBLIC = [{}, {"tp": 4, "cp": 1, "dp": 4, "pp": 1, "tile": 64},
              {"tp": 2, "cp": 2, "dp": 2, "pp": 2, "tile": 256, "layers": 24},
              {"tp": 16, "cp": 1, "dp": 2, "pp": 2, "tile": 128, "d_ff": 24576},
              {"tp": 2, "cp": 8, "dp": 1, "pp": 1, "tokens": 1024, "tile": 256}]

    def cases(self):
        return [model.budget_config(**changes) for changes in self.PUBLIC]

    def hidden(self, rng):
        """Five random configurations: the first uses every parallelism, the second has no
        pipeline and the third holds 128 tokens per CP rank (memory-bound GEMMs whatever the
        tile), so that every mistake shows on some of them."""
        cases = []
        for i in range(5):
            tp, cp, dp, pp = (int(v) for v in rng.choice([1, 2, 4, 8], 4))
            if i == 0:
                tp, cp, dp, pp = (max(v, 2) for v in (tp, cp, dp, pp))
            pp = 1 if i == 1 else pp
            tokens_per_rank = 128 if i == 2 else 128 * int(rng.integers(2, 33))
            cases.append(model.budget_config(
                tp=tp, cp=cp, dp=dp, pp=pp, tile=int(rng.choice([32, 64, 128, 256])),
                tokens=cp * tokens_per_rank, d_model=1024 * int(rng.integers(2, 9)),
                d_ff=tp * 256 * int(rng.integers(4, 17)), layers=pp * int(rng.integers(2, 9)),
                gpus_per_node=int(rng.choice([4, 8])), microbatches=int(rng.integers(2, 33)),
                alpha=float(rng.choice([2e-6, 5e-6, 1e-5]))))
        return cases

    def describe(self, case):
        return f"on {_describe(case)}"

    def judge(self, question, fn, rng=None):
        """Every configuration is run before the feedback is written, so that a mistake is named
        by what it does on all of them (and the right ones are counted: partial credit)."""
        cases = list(self.cases() if rng is None else self.hidden(rng))
        failing, broken, passed = [], None, 0
        for index, case in enumerate(cases):
            if broken and rng is None:
                break                   # check(): the first broken budget says it all
            try:
                status, wrong = evaluate(fn, case)
            except NoAnswer:
                if index == 0:
                    return NOT_ATTEMPTED, (f"{self.function} returns nothing yet: write its body "
                                           f"and run the cell again.")
                status, wrong = FAIL, f"{self.function} returned nothing"
            except Exception:  # past a failure, a broken run (its time is up) ends the count
                if not (broken or failing):
                    raise
                break
            if status == FAIL:
                broken = broken or f"{self.describe(case)}: {wrong}"
            elif wrong:
                failing.append((case, wrong))
            passed += status != FAIL and not wrong
        count(passed, len(cases))
        if broken:
            return FAIL, broken
        if not failing:
            return PASS, f"{self.summary(cases)}. {question.explain}".strip()
        case, wrong = failing[0]
        return FAIL, f"{self.describe(case)}: {explain(wrong, [w for _, w in failing[1:]])}"

    def summary(self, cases):
        return (f"all four terms match the course's model on all {len(cases)} configurations")
