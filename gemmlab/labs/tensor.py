"""Labs 06.lab_column, 06.lab_row, 09.lab_ffn and 14.lab_attention: one rank's forward pass of a
tensor-parallel layer, run on simulated ranks (:mod:`.ranks`).

Each check gives every rank its shards of random float64 weights at sizes the student does not
see (and p in {1, 2, 4}), compares what every rank returns with the unsharded float64 reference
of :mod:`gemmlab.parallel`, reads the log of collectives the ranks called, and checks that each
rank's all-reduce input is its own partial product (not zeros or a share of the answer, while the
sum travels some other way). Sizes are chosen so that the shapes of the tensors that might be
communicated differ from each other (F/p is not D; in attention h d_h is not d_model), so the log
says which tensor a collective moved. Known mistakes get their own message: the bias added on
every rank (off by (p-1) b), partial sums concatenated, column-parallel outputs all-reduced, an
all-gather the layer does not need (with the real ratio of bytes), W_O split by columns.
"""
import numpy as np

from ..collectives.cost import ring_send_bytes
from ..judging import FAIL, PASS, is_missing
from ..parallel.attention import attention_reference, megatron_attention
from ..parallel.ffn import ffn_reference, megatron_ffn
from ..parallel.sharding import row_parallel
from .kinds import CodeLab, NoAnswer, as_array
from .limits import TIME_LIMIT
from .ranks import MAX_RANKS, run_answer


# -- shared by the four checks --

def _close(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    scale = 1.0 + float(np.abs(b).max(initial=0.0))
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-6, atol=1e-9 * scale))


def _calls(run, collective=None):
    return [c for c in run.collectives if collective is None or c.collective == collective]


def _sent_per_rank(run):
    return sum(max(c.record.sent_bytes) for c in run.collectives)


def _bytes_ratio(run, needed):
    """'3x the bytes of the one all-reduce the layer needs' (empty when p = 1: nothing moves)."""
    if needed <= 0:
        return ""
    return f": {_sent_per_rank(run) / needed:.3g}x the bytes of the one all-reduce the layer needs"


def _shape(call):
    return "x".join(map(str, call.shapes[0]))


def _gathers(calls):
    """'an all-gather of 5x4' or '3 all-gathers of 5x2' (the first one's shape per rank)."""
    many = f"{len(calls)} all-gathers" if len(calls) > 1 else "an all-gather"
    return f"{many} of {_shape(calls[0])} per rank"


def _log(run):
    return ", ".join(f"{c.collective} of {_shape(c)}" for c in run.collectives) or "none"


def _matmul_hint(error, hint):
    return f"{error}. {hint}" if hint and "matmul" in error else error


class ShardedLab(CodeLab):
    """Common steps: run the ranks, then the lab's diagnoses in a fixed order (shape, log-based
    mistakes that make the values wrong, known wrong values, other wrong values, collectives that
    are not needed)."""
    error_hint = ""
    in_runtime, ranks = True, MAX_RANKS     # a cell's ranks: processes of the answer runtime

    def cases(self):
        return [self.make_case(p, np.random.default_rng(seed)) for p, seed in ((2, 1), (4, 2),
                                                                               (1, 3))]

    def hidden(self, rng):
        """p = 4, 2, 1 (a mistake shows best on many ranks), at sizes and seeds from rng."""
        return [self.make_case(p, rng) for p in (4, 2, 1)]

    def describe(self, case):
        return f"on p = {case['p']} rank{'s' if case['p'] > 1 else ''} ({case['label']})"

    def summary(self, cases):
        ps = sorted({c["p"] for c in cases})
        return (f"right on all {len(cases)} cases (p = {', '.join(map(str, ps))}): every rank's "
                f"result matches the unsharded float64 reference, with "
                f"{self.needed_words}")

    def check_case(self, fn, case):
        run = run_answer(fn, case["args"], True, TIME_LIMIT)
        if run.error:       # an all-reduce given zeros first: the sum went another way
            return FAIL, (self.wrong_contribution(case, run) or self.failed_run(case, run)
                          or _matmul_hint(run.error, self.error_hint))
        if all(is_missing(out) for out in run.outputs):
            raise NoAnswer()
        outs = [as_array(out, f"rank {r}") for r, out in enumerate(run.outputs)]
        for r, out in enumerate(outs):
            if out.shape != case["expected"][r].shape:
                return FAIL, self.wrong_shape(case, r, out, run) or (
                    f"rank {r} returned shape {out.shape}; expected {case['expected'][r].shape}")
        problem = self.wrong_log_first(case, run)
        if problem:
            return FAIL, problem
        wrong = [r for r in range(case["p"]) if not _close(outs[r], case["expected"][r])]
        if wrong:
            return FAIL, self.wrong_values(case, outs, run) or self._mismatch(case, outs, wrong[0])
        problem = self.wrong_log(case, run) or self.wrong_contribution(case, run)
        return (FAIL, problem) if problem else (PASS, "")

    def _mismatch(self, case, outs, r):
        error = float(np.abs(outs[r] - case["expected"][r]).max())
        return (f"rank {r}'s result differs from the unsharded float64 reference (max error "
                f"{error:.3g}). {self.value_hint}")

    def failed_run(self, case, run):
        """The named mistake behind a run that raised, or None."""
        return None

    def wrong_shape(self, case, r, out, run):
        return None

    def wrong_log_first(self, case, run):
        return None

    def wrong_values(self, case, outs, run):
        return None

    def wrong_contribution(self, case, run):
        """Right values and collectives: what each rank gave them must be its own (see
        :class:`ExitSumLab`)."""
        return None

    def wrong_log(self, case, run):
        """Right values: the collectives must be exactly the needed ones."""
        got = [(c.collective, c.shapes[0]) for c in run.collectives]
        if got == case["needed"]:
            return None
        return self.extra_collectives(case, run)

    def extra_collectives(self, case, run):
        needed = ", ".join(f"{name} of {'x'.join(map(str, shape))}"
                           for name, shape in case["needed"]) or "none"
        why = ""
        calls = run.collectives
        if calls and all(c.collective == "all-gather" for c in calls) and case["needed_bytes"]:
            why = (" Even where the bytes are no more (p = 2), an all-gather of whole "
                   "tensors grows to p/2 times an all-reduce's bytes (each rank receives every "
                   "other rank's whole tensor: 2x at 4 ranks, 4x at 8), and it leaves every rank "
                   "to add the p tensors itself: the all-reduce is the collective that sums.")
        return (f"right values, but your ranks called {_log(run)} where the layer needs "
                f"{needed}{_bytes_ratio(run, case['needed_bytes'])}.{why}")


def _own_partial(given, partial, bias):
    """Whether ``given`` is ``partial`` plus, at most, a multiple of the bias row (a rank may add
    its share of the bias before the sum; the bias carries nothing of the other ranks)."""
    extra = np.asarray(given, dtype=np.float64) - partial
    if bias is not None:
        row = np.broadcast_to(bias, extra.shape)
        extra = extra - row * (np.vdot(extra, row) / np.vdot(row, row))
    return _close(partial + extra, partial)


def _what_it_is(given, case, r):
    """'it is all zeros', 'it is the sum over all ranks divided by p = 4', or how far it is."""
    total, p = np.sum(case["partials"], axis=0), case["p"]
    if not np.any(given):
        return "it is all zeros"
    if _close(given, total / p):
        return f"it is the sum over all ranks divided by p = {p}"
    if _close(given, total):
        return "it is the sum over all ranks"
    return f"it differs from it by up to {float(np.abs(given - case['partials'][r]).max()):.3g}"


def _matrix(rng, rows, cols, scale=1.0):
    return rng.standard_normal((rows, cols)) * scale


def _linear(p, rng, split):
    """X (M x K), W (K x N) and their label, the dimension ``split`` (N for column parallel, K for
    row parallel) a multiple of p."""
    dims = {d: int(rng.integers(3, 8)) for d in "MKN"}
    dims[split] = p * int(rng.integers(2, 4))
    M, K, N = dims["M"], dims["K"], dims["N"]
    return _matrix(rng, M, K), _matrix(rng, K, N), f"X {M}x{K}, W {K}x{N}"


CONCAT_PARTIALS = ("concatenating partial sums: every rank's P_r already has Y's full shape "
                   "{shape}, and holds only its part of each dot product; the p partial sums are "
                   "added (comm.all_reduce), not put side by side.")
BIAS_EVERY_RANK = ("the bias added on every rank: your Y is off by (p-1) b = {p_1} b. Each rank "
                   "added the whole bias to its partial sum before the sum over ranks, so the sum "
                   "holds p copies of it; add it once, after the all-reduce.")
PARTIAL_ONLY = ("your result is this rank's partial sum, which holds only the part of each dot "
                "product over this rank's slice of the contraction; sum it over the ranks with "
                "comm.all_reduce.")
COLUMN_ALLREDUCED = ("all-reducing column-parallel outputs: {what} are different {features} on "
                     "each rank (finished values, not partial sums), so adding them over ranks "
                     "mixes unrelated {features}. Only the row-parallel partial sums at the exit "
                     "are summed.")
NOT_NEEDED = "a collective the layer does not need: {what}{ratio}."


class ColumnLab(ShardedLab):
    """06.lab_column: ``column_rank(comm, X, W_r) -> Y_r``."""
    function = "your column_rank"
    needed_words = "no communication: the shards stay where they are"
    value_hint = "Y_r is the whole X times this rank's block of W's columns."

    def make_case(self, p, rng):
        X, W, label = _linear(p, rng, "N")
        W_r = np.split(W, p, axis=1)
        return {"p": p, "label": label, "args": [(X, w) for w in W_r],
                "expected": [X @ w for w in W_r], "Y": X @ W, "needed": [], "needed_bytes": 0}

    def wrong_shape(self, case, r, out, run):
        if _close(out, case["Y"]):
            return (f"rank {r} returned the whole Y {out.shape}, gathered from every rank: "
                    f"column_rank returns this rank's shard Y_r = X W_r "
                    f"{case['expected'][r].shape}, finished columns of Y. Whether they are ever "
                    f"gathered depends on the next operation (often it is not needed).")
        return None

    def wrong_values(self, case, outs, run):
        if _calls(run, "all-reduce") and _close(outs[0], np.sum(case["expected"], axis=0)):
            return COLUMN_ALLREDUCED.format(what="the Y_r", features="output columns")
        return None

    def extra_collectives(self, case, run):
        return (f"right values, but your ranks called {_log(run)}: column parallel needs no "
                f"communication, every rank already holds its finished columns.")


class ExitSumLab(ShardedLab):
    """Layers that end in a row-parallel projection: partial sums, one all-reduce, and (if the
    case has one) a bias ``b`` added once after it. Where the layer starts column-parallel, the
    case gives the width of those shards (``shard_width``) and the class names them."""
    shards = ""             # the column-parallel tensors, as the feedback names them
    shard_kind = ""         # what differs between the ranks' shards
    no_gather = ""          # why the layer needs nothing gathered inside it
    partial = ""            # rank r's partial product, as the feedback names it ("X_{r} @ W_{r}")

    def wrong_contribution(self, case, run):
        """Each rank's all-reduce input must be its own partial product (plus, if it likes, a
        share of the bias): ranks that hand it zeros, or a share of the answer, while something
        they share carries the sum, have right values and the right log, and fail here."""
        for call in _calls(run, "all-reduce"):
            for r, given in enumerate(call.inputs):
                if not _own_partial(given, case["partials"][r], case.get("b")):
                    return (f"rank {r}'s all-reduce input is not its partial product "
                            f"{self.partial.format(r=r)}: {_what_it_is(given, case, r)}. The sum "
                            f"must travel through the all-reduce: each rank gives it what it "
                            f"computed from its own shards, nothing the ranks share.")
        return None

    def wrong_log_first(self, case, run):
        if "shard_width" in case and any(c.shapes[0][-1] == case["shard_width"]
                                         for c in _calls(run, "all-reduce")):
            return COLUMN_ALLREDUCED.format(what=self.shards, features=self.shard_kind)
        return None

    def extra_collectives(self, case, run):
        gathers = _calls(run, "all-gather")
        if gathers and self.no_gather:
            return NOT_NEEDED.format(what=f"{_gathers(gathers)}; {self.no_gather}",
                                     ratio=_bytes_ratio(run, case["needed_bytes"]))
        return super().extra_collectives(case, run)

    def failed_run(self, case, run):
        """An all-gather, then the bias: NumPy cannot add the bias to the p partial sums side by
        side (a broadcast error), the mistake is the concatenation."""
        if "could not be broadcast" in run.error and _calls(run, "all-gather") \
                and case.get("b") is not None:
            shape = case["expected"][0].shape
            return (f"the bias cannot be added to what your all-gather returned ({run.error}): "
                    + CONCAT_PARTIALS.format(shape=shape) + " Then add the bias once.")
        return None

    def wrong_shape(self, case, r, out, run):
        for extra in self._biases(case):
            if _close(out, np.concatenate([P + extra for P in case["partials"]], axis=1)):
                return CONCAT_PARTIALS.format(shape=case["expected"][r].shape)
        return None

    def wrong_values(self, case, outs, run):
        p, b = case["p"], case.get("b")
        if b is not None and all(_close(o, e + (p - 1) * b)
                                 for o, e in zip(outs, case["expected"], strict=True)):
            return BIAS_EVERY_RANK.format(p_1=p - 1)
        for extra in self._biases(case):
            if all(_close(o, P + extra) for o, P in zip(outs, case["partials"], strict=True)):
                return PARTIAL_ONLY
        return None

    @staticmethod
    def _biases(case):
        return (0,) if case.get("b") is None else (0, case["b"])


class RowLab(ExitSumLab):
    """06.lab_row: ``row_rank(comm, X_r, W_r) -> Y``, the full Y on every rank."""
    function = "your row_rank"
    needed_words = "one all-reduce of the M x N partial sums"
    value_hint = "Each rank's partial sum is X_r W_r; Y is their sum over the ranks."
    partial = "X_{r} @ W_{r}"

    def make_case(self, p, rng):
        X, W, label = _linear(p, rng, "K")
        X_r, W_r = np.split(X, p, axis=1), np.split(W, p, axis=0)
        Y = X @ W
        return {"p": p, "label": label, "args": list(zip(X_r, W_r, strict=True)), "expected": [Y] * p,
                "partials": row_parallel(X, W, p), "needed": [("all-reduce", Y.shape)],
                "needed_bytes": ring_send_bytes(p, Y.nbytes)}



class FFNLab(ExitSumLab):
    """09.lab_ffn: ``ffn_rank(comm, X, W_up_r, b_up_r, W_down_r, b_down) -> Y``."""
    function = "your ffn_rank"
    needed_words = "one all-reduce of the M x D partial sums and the bias added once"
    value_hint = ("Each rank computes H_r = GELU(X W_up_r + b_up_r) with gl.parallel.gelu, its "
                  "partial sum H_r W_down_r, sums it over the ranks, then adds b_down once.")
    shards, shard_kind = "Z_r = X W_up_r and H_r = GELU(Z_r)", "hidden features"
    partial = "H_{r} @ W_down_{r}"
    no_gather = ("GELU works on each hidden feature alone and W_down_r needs exactly this rank's "
                 "H_r, so nothing is gathered between the two projections")

    def make_case(self, p, rng):
        M, D = int(rng.integers(3, 8)), 2 * int(rng.integers(2, 5))
        F = 4 * D if p != 4 else 8 * D          # the usual 4D, unless Z_r would be as wide as Y
        X = _matrix(rng, M, D)
        W_up, W_down = _matrix(rng, D, F, D ** -0.5), _matrix(rng, F, D, F ** -0.5)
        b_up, b_down = rng.standard_normal(F), rng.standard_normal(D)
        local = megatron_ffn(X, W_up, W_down, p, b_up=b_up).local
        Y = ffn_reference(X, W_up, W_down, b_up, b_down)
        return {"p": p, "label": f"X {M}x{D}, F = {F}", "shard_width": F // p, "b": b_down,
                "args": [(X, u, b, d, b_down)
                         for u, b, d in zip(local["W_up"], np.split(b_up, p), local["W_down"],
                                            strict=True)],
                "expected": [Y] * p, "partials": local["P"], "needed": [("all-reduce", (M, D))],
                "needed_bytes": ring_send_bytes(p, Y.nbytes)}



class AttentionLab(ExitSumLab):
    """14.lab_attention: ``attention_rank(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads) -> Y``.

    Rank r holds heads r h/p ... (r+1) h/p - 1: the matching column blocks Wq_r, Wk_r, Wv_r; the
    whole W_O (h d_h x d_model) and its bias b_o, so that choosing W_O's rows is the rank's job.
    """
    function = "your attention_rank"
    needed_words = "one all-reduce of the S x d_model partial sums and the bias added once"
    value_hint = ("Each rank runs attention for its own heads (gl.parallel.head_attention), "
                  "multiplies their outputs by W_O's rows of those heads, sums over the ranks, "
                  "then adds b_o once.")
    error_hint = ("O_r has the (h/p) d_h columns of this rank's heads, so it multiplies the "
                  "matching rows of W_O, Wo[r (h/p) d_h : (r+1) (h/p) d_h]; W_O split by columns "
                  "does not fit it.")
    shards, shard_kind = "Q_r, K_r, V_r and the heads' outputs O_r", "heads"
    partial = "O_{r} @ W_O,{r}"
    no_gather = ("the heads are independent until W_O, so each rank computes its own heads' "
                 "attention with nothing from the others")

    def make_case(self, p, rng):
        S, d_model = int(rng.integers(3, 7)), 4 * int(rng.integers(2, 4))
        h = 4
        d_h = int(rng.integers(2, 4))
        while h * d_h == d_model:
            d_h += 1
        X = _matrix(rng, S, d_model)
        Wq, Wk, Wv = (_matrix(rng, d_model, h * d_h, d_model ** -0.5) for _ in range(3))
        Wo = _matrix(rng, h * d_h, d_model, (h * d_h) ** -0.5)
        b_o = rng.standard_normal(d_model)
        local = megatron_attention(X, Wq, Wk, Wv, Wo, h, p).local
        Y = attention_reference(X, Wq, Wk, Wv, Wo, h, b_o=b_o)
        return {"p": p, "label": f"S = {S} tokens, d_model = {d_model}, {h} heads of d_h = {d_h}",
                "args": [(X, q, k, v, Wo, b_o, h)
                         for q, k, v in zip(local["Wq"], local["Wk"], local["Wv"], strict=True)],
                "expected": [Y] * p, "partials": local["P"], "b": b_o, "shard_width": h * d_h // p,
                "y_column_width": d_model // p, "needed": [("all-reduce", (S, d_model))],
                "needed_bytes": ring_send_bytes(p, Y.nbytes)}

    def _wo_by_columns(self, case, run):
        p = case["p"]
        gathers = _calls(run, "all-gather")
        if p > 1 and any(c.shapes[0][-1] == case["y_column_width"] for c in gathers):
            return ("W_O split by columns: then each rank needs every head's output first (an "
                    "all-gather of O, so every rank holds all heads), and its columns of Y must be "
                    f"gathered again: {_log(run)}, two collectives where one suffices. Split W_O "
                    f"by rows, the rows of this rank's heads: O_r W_O,r is then a partial sum of "
                    f"the whole Y, and one all-reduce at the exit finishes the layer.")
        return None

    def wrong_log_first(self, case, run):
        return self._wo_by_columns(case, run) or super().wrong_log_first(case, run)

    def extra_collectives(self, case, run):
        gathers = _calls(run, "all-gather")
        if not gathers:
            return super().extra_collectives(case, run)
        return (f"a collective the layer does not need: {_gathers(gathers)}. With every head's "
                f"Q, K and V gathered, each rank computes all the heads and the whole output "
                f"projection O W_O itself: the p = {case['p']} ranks each repeat the work of the "
                f"whole layer, whatever the bytes moved"
                f"{_bytes_ratio(run, case['needed_bytes'])}. {self.no_gather[0].upper()}"
                f"{self.no_gather[1:]}, and one all-reduce of the partial sums O_r W_O,r "
                f"finishes the layer.")
