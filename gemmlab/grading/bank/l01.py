"""Lesson 01, numbers and precision: memory budgets, float formats, rounding, accumulation.

The seed lecture's discussion questions Q04-Q07 become checked exercises here, with the wrong
answers that reveal its misconceptions. Reference values are computed with gemmlab.precision
wherever a format is involved, so the bank and the lesson cannot drift apart.
"""
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ... import precision as P
from ._choices import options_text
from ...judging import AnswerTypeError, Array, Choice, Exact, Number, Question, Wrong, describe

GIB = 2**30
PARAMS = 7e9


@dataclass(frozen=True)
class Options:
    """Several options out of a fixed set, in any order: "a, c", "ac", ["a", "c"] or {"a", "c"}."""
    options: Sequence[str]

    def coerce(self, answer):
        keys = [o.lower() for o in self.options]
        if isinstance(answer, str):
            text = answer.lower()
            for sep in ",;+/&":
                text = text.replace(sep, " ")
            parts = text.split()
            if len(parts) == 1 and all(len(k) == 1 for k in keys):
                parts = list(parts[0])
        elif isinstance(answer, (list, tuple, set, frozenset)):
            parts = [p.strip().lower() if isinstance(p, str) else p for p in answer]
        else:
            raise AnswerTypeError(f"expected the letters of your options, e.g. \"a, c\" or "
                                  f"{{'a', 'c'}}, got {describe(answer)}")
        unknown = [p for p in parts if p not in keys]
        if unknown or not parts:
            raise AnswerTypeError(f"expected some of {', '.join(repr(k) for k in self.options)}, "
                                  f"got {describe(answer)}")
        return frozenset(parts)

    def same(self, answer, expected):
        return answer == frozenset(k.lower() for k in expected)

    def show(self, value):
        return "{" + ", ".join(repr(k) for k in sorted(value)) + "}"


def _fp16_sequential_ones(n=4096):
    acc = np.float16(0)
    for _ in range(n):
        acc = np.float16(acc + np.float16(1))
    return int(acc)


def _assoc_orders():
    """[fl(fl(2^24 + 1) - 2^24), fl(2^24 + fl(1 - 2^24))] in FP32."""
    a, b, c = 2.0**24, 1.0, -2.0**24
    return [P.accumulate([a, b, c], "fp32"), P.accumulate([b, c, a], "fp32")]


def _product_paths(a=300.0, b=300.0):
    """[product rounded to FP16 then accumulated in FP32, exact product accumulated in FP32]."""
    a16, b16 = P.round_to(a, "fp16"), P.round_to(b, "fp16")
    return [P.accumulate([P.round_to(a16 * b16, "fp16")], "fp32"), P.accumulate([a16 * b16], "fp32")]


INFERENCE_OPTIONS = {
    "a": "the GPU must have at least as many cores as the model has layers, since each layer runs "
         "on cores of its own",
    "b": "the activations (intermediate results) of the forward pass, and for a language model the "
         "KV cache, which grows with batch size and context length",
    "c": "13.04 and 16 are in different units (GB and GiB), so the two figures cannot be compared "
         "directly",
    "d": "workspace and temporary buffers that kernels allocate (GEMM, attention), plus the CUDA "
         "context and the framework's own memory",
    "e": "what must fit is the peak at any moment, in blocks the allocator can actually hand out "
         "(fragmentation), not an average",
    "f": "the weights must be converted to FP32 on the GPU before the matrix units can use them, "
         "which doubles their memory",
}

CONTRACT_OPTIONS = {
    "a": "only the accumulator format: once the partial sums are kept in FP32, every input and "
         "every product is carried at FP32 accuracy, so the result is as accurate as FP32",
    "b": "only the order of the additions (sequential, pairwise or Kahan), since with an FP32 "
         "accumulator the order alone decides how accurate the sum is",
    "c": "nothing more: FP16 inputs multiplied into FP32 can never overflow or lose bits, and FP32 "
         "addition keeps every product, so the phrase already says it all",
    "d": "where each value is rounded: inputs stored in FP16 (that loss is final), each product "
         "kept exact or in FP32, never rounded to FP16, and partial sums added in FP32",
}
OOM_CAUSE = {
    "a": "that the 512 MiB tensor is too large for the card: that one allocation is the problem, "
         "so splitting it into smaller tensors or shrinking it is the fix",
    "b": "that the backward pass needs too much memory: the forward pass only reads the weights, "
         "so out-of-memory errors in training only ever happen while the gradients are being "
         "computed",
    "c": "that the memory in use at that moment (weights, saved activations, gradients, ...) plus "
         "512 MiB did not fit: the run's peak decides, and it can come in any phase of the step",
}


QUESTIONS = [
    Question(
        id="01.weights_gib",
        prompt="Memory for the weights alone of a 7e9-parameter model stored at 2 bytes per "
               "parameter, in GiB (4 significant figures).",
        answer=lambda: PARAMS * 2 / GIB,
        kind=Number(sig=4, rtol=2e-3, unit="GiB"),
        wrong=[
            Wrong(lambda: PARAMS * 2 / 1e9, "that is GB (10^9 bytes). A GiB is 2^30 = 1,073,741,824 "
                                            "bytes, about 7% more, so the same bytes are fewer GiB."),
            Wrong(lambda: PARAMS * 4 / GIB, "that is 4 bytes per parameter (FP32). The question "
                                            "stores each parameter in 2 bytes (FP16 or BF16)."),
            Wrong(lambda: PARAMS * 16 / GIB, "that counts bits, not bytes: 16 bits are 2 bytes."),
        ],
        hint="bytes = parameters x bytes per parameter; divide by 2**30 for GiB.",
        explain="Weights are only one line of the memory budget: activations, gradients, "
                "optimizer state and workspace come on top.",
    ),
    Question(
        id="01.weights_fp32_gib",
        prompt="Memory for the same 7e9 weights stored in FP32, in GiB (4 significant figures).",
        answer=lambda: PARAMS * P.get_format("fp32").bits / 8 / GIB,
        kind=Number(sig=4, rtol=2e-3, unit="GiB"),
        wrong=[
            Wrong(lambda: PARAMS * 4 / 1e9, "that is GB (10^9 bytes); divide by 2^30 for GiB."),
            Wrong(lambda: PARAMS * 2 / GIB, "that is the 16-bit figure: FP32 takes 4 bytes per "
                                            "parameter, twice as much."),
            Wrong(lambda: PARAMS * 32 / GIB, "that counts bits, not bytes: 32 bits are 4 bytes."),
            Wrong(lambda: PARAMS * 8 / GIB, "8 bytes is FP64 (double precision); FP32 is 4 bytes."),
        ],
        hint="FP32 is 32 bits = 4 bytes per parameter.",
        explain="Going from FP32 to FP16/BF16 halves the weights (26.08 -> 13.04 GiB), but the peak "
                "memory of a whole run does not necessarily halve.",
    ),
    Question(
        id="01.inference_budget_misses",
        answer_name="missing",
        prompt="'The weights take about 13.04 GiB, less than 16 GiB, so inference will run.' Which "
               "conditions does this reasoning leave out? Give the letters of all that apply:\n"
               + options_text(INFERENCE_OPTIONS),
        answer=frozenset("bde"),
        kind=Options(tuple(INFERENCE_OPTIONS)),
        wrong=[
            Wrong(frozenset("b"), "activations are one missing line, but not the only one: kernels "
                                  "need workspace, the CUDA context and framework take memory, and "
                                  "it is the peak, in usable blocks, that must fit."),
            Wrong(frozenset("bd"), "right so far, but a budget is about the peak: the largest "
                                   "amount in use at one moment, in blocks the allocator can give "
                                   "out (an OOM can happen with enough total free memory)."),
            Wrong(frozenset("bcde"), "both figures are in GiB here (14e9 B = 13.04 GiB, and the card "
                                     "has 16 GiB): the units are fine, the budget is incomplete."),
            Wrong(frozenset("bdef"), "16-bit weights are used as they are (FP16/BF16 matrix "
                                     "instructions read them directly); nothing forces an FP32 copy "
                                     "for inference."),
        ],
        hint="Besides the weights, what else lives in GPU memory while a forward pass runs, and "
             "is it the total or the maximum at one moment that must fit?",
        explain="Training adds gradients, optimizer state (e.g. Adam's two moments and an FP32 "
                "master copy) and the activations saved for the backward pass.",
    ),
    Question(
        id="01.training_state_gib",
        answer_name="training_gib",
        prompt="Mixed-precision training with Adam keeps, per parameter: FP16 weights (2 B), FP16 "
               "gradients (2 B), an FP32 master copy of the weights (4 B) and Adam's two FP32 "
               "moments (4 B each). How many GiB is this state for 7e9 parameters, before any "
               "activation is stored (3 significant figures)?",
        answer=lambda: PARAMS * (2 + 2 + 4 + 4 + 4) / GIB,
        kind=Number(sig=3, rtol=2e-3, unit="GiB"),
        wrong=[
            Wrong(lambda: PARAMS * 2 / GIB, "that is the FP16 weights alone: training also keeps "
                                            "gradients, a master copy and the optimizer's moments."),
            Wrong(lambda: PARAMS * 4 / GIB, "that is weights and gradients only: Adam's moments "
                                            "and the FP32 master weights are still missing."),
            Wrong(lambda: PARAMS * 8 / GIB, "Adam keeps two moments per parameter (m and v), "
                                            "4 B each in FP32: 8 more bytes."),
            Wrong(lambda: PARAMS * 12 / GIB, "that counts only the FP32 state (master weights "
                                             "and two moments); the FP16 weights and gradients "
                                             "come on top."),
            Wrong(lambda: PARAMS * 16 / 1e9, "that is GB (10^9 bytes); divide by 2^30 for GiB."),
        ],
        hint="Add up the bytes per parameter, multiply by 7e9, divide by 2**30.",
        explain="16 bytes per parameter: over 100 GiB before a single activation, which is why "
                "training a 7e9 model does not fit on one 16 GiB card (or even one 80 GiB card) "
                "without sharding the state.",
    ),
    Question(
        id="01.fp16_rne",
        answer_name="stored",
        prompt="Round 2048, 2049, 2050 and 2051 to FP16 (round to nearest, ties to even). Give the "
               "four stored values as a list.",
        answer=lambda: P.round_to([2048, 2049, 2050, 2051], "fp16"),
        kind=Array(),
        wrong=[
            Wrong([2048, 2050, 2050, 2052], "ties are not rounded up: 2049 is exactly halfway "
                                            "between 2048 and 2050, and a tie goes to the neighbour "
                                            "whose last mantissa bit is 0, which is 2048."),
            Wrong([2048, 2048, 2050, 2050], "that truncates (rounds toward zero). 2051 is halfway "
                                            "between 2050 and 2052; the tie goes to the even "
                                            "mantissa, 2052."),
            Wrong([2048, 2049, 2050, 2051], "from 2048 to 4096 FP16's spacing is 2 (11 significant "
                                            "bits): odd integers there are not FP16 numbers."),
        ],
        hint="Between 2048 and 4096 the FP16 numbers are 2 apart. Which neighbours does each value "
             "have, and which one has an even last mantissa bit?",
        explain="Round half to even makes ties go up and down equally often, so rounding errors do "
                "not drift in one direction.",
    ),
    Question(
        id="01.assoc_orders",
        answer_name="two_orders",
        prompt="With a = 2^24, b = 1, c = -2^24 in FP32 (each addition rounded to nearest even), "
               "give [fl(fl(a + b) + c), fl(a + fl(b + c))].",
        answer=_assoc_orders,
        kind=Array(),
        wrong=[
            Wrong([1, 1], "a + b = 2^24 + 1 needs 25 significant bits and FP32 has 24: it is a tie "
                          "between 2^24 and 2^24 + 2 and rounds to even, 2^24. The 1 is lost "
                          "there, before c is added, and cannot come back."),
            Wrong([0, 0], "b + c = 1 - 2^24 = -16777215 needs only 24 bits, so it is exact in "
                          "FP32; adding a = 2^24 then gives exactly 1."),
            Wrong([1, 0], "swapped: the path that adds 1 to 2^24 first is the one that loses it."),
        ],
        hint="Is 2^24 + 1 an FP32 number? Is 1 - 2^24?",
        explain="The unrecoverable step is fl(a + b): the 1 is rounded away. A parallel reduction "
                "changes the grouping of additions, and so can change the result.",
    ),
    Question(
        id="01.fp16_ones_sum",
        answer_name="fp16_sum",
        prompt="The result of adding 4096 ones one at a time into an FP16 accumulator that starts "
               "at 0 (rounding to FP16 after every addition).",
        answer=_fp16_sequential_ones,
        kind=Exact(int),
        wrong=[
            Wrong(4096, "4096 is the exact sum, which FP32 or pairwise summation gives. In FP16 the "
                        "spacing between numbers reaches 2 at 2048, so 2048 + 1 is a tie that rounds "
                        "back to 2048 (round half to even) and every later 1 is lost."),
            Wrong(65504, "65504 is FP16's largest finite value, but the accumulator never gets "
                         "there: it stalls long before, where the spacing first exceeds 1."),
        ],
        hint="Find the first value where the gap between neighbouring FP16 numbers becomes 2, "
             "then ask what adding 1 does there.",
        explain="Each input is exact; the loss is in the accumulator. That is why mixed precision "
                "keeps FP16 inputs but accumulates in FP32.",
    ),
    Question(
        id="01.fp16_ones_pairwise",
        answer_name="pairwise_sum",
        prompt="The same 4096 ones summed pairwise in FP16: add neighbours in pairs, then the pairs "
               "in pairs, and so on, rounding to FP16 after every addition.",
        answer=lambda: int(P.accumulate(np.ones(4096), "fp16", order="pairwise")),
        kind=Exact(int),
        wrong=[
            Wrong(2048, "the order changes the result here: in the tree every partial sum is a "
                        "power of two (2, 4, ..., 4096), an FP16 number, so no addition ever asks "
                        "for 2048 + 1."),
        ],
        hint="Write down the partial sums level by level: 2, then 4, then ...",
        explain="Pairwise summation keeps partial sums of similar size, so its error grows like "
                "log2(n) rather than n; it is also the shape of a parallel reduction.",
    ),
    Question(
        id="01.bf16_ones_sum",
        answer_name="bf16_sum",
        prompt="4096 ones added one at a time into a BF16 accumulator that starts at 0 (rounding to "
               "BF16 after every addition).",
        answer=lambda: int(P.accumulate(np.ones(4096), "bf16")),
        kind=Exact(int),
        wrong=[
            Wrong(2048, "that is FP16, with 11 significant bits. BF16 keeps only 8 (7 stored), so "
                        "its spacing reaches 2 already at 256 and the sum stalls there."),
            Wrong(4096, "BF16 has FP32's range, not its precision: with 8 significant bits the "
                        "spacing is 2 from 256 on, so 256 + 1 rounds back to 256."),
        ],
        hint="BF16 has 7 mantissa bits: from which power of two on is its spacing 2?",
        explain="Range (exponent bits) and precision (mantissa bits) are different things: BF16 "
                "trades FP16's precision for FP32's range.",
    ),
    Question(
        id="01.fp16_input_fp32_acc",
        answer_name="acc_value",
        prompt="The input 4097 is stored in FP16, then added to an FP32 accumulator that starts at "
               "0. What does the accumulator hold (exact)?",
        answer=lambda: P.accumulate([P.round_to(4097, "fp16")], "fp32"),
        kind=Number(rtol=0, atol=0),
        wrong=[
            Wrong(4097, "the FP32 accumulator cannot bring back what was lost before it: stored in "
                        "FP16, 4097 already became 4096 (FP16's spacing is 4 between 4096 and "
                        "8192)."),
            Wrong(4100, "4097 is 1 away from 4096 and 3 away from 4100: round to nearest gives "
                        "4096."),
            Wrong(4098, "between 4096 and 8192 FP16's spacing is 4, not 2: 4098 is not an FP16 "
                        "number."),
        ],
        hint="What is FP16's spacing between 4096 and 8192?",
        explain="FP32 accumulation protects the partial sums, not inputs that were rounded when "
                "they were stored.",
    ),
    Question(
        id="01.product_overflow",
        answer_name="two_paths",
        prompt="a = b = 300, both stored in FP16. Give [s1, s2] where s1 is the FP32 accumulator "
               "after adding the product a*b rounded to FP16, and s2 after adding the exact "
               "product (kept in FP32).",
        answer=_product_paths,
        kind=Array(),
        wrong=[
            Wrong([65504, 90000], "IEEE FP16 does not saturate: a product that rounds above the "
                                  "largest finite value 65504 becomes inf, and inf stays inf in "
                                  "the FP32 sum."),
            Wrong([90000, 90000], "90000 > 65504, FP16's largest finite value: rounding the product "
                                  "to FP16 overflows to inf before the FP32 accumulator sees it."),
            Wrong([np.inf, np.inf], "the second path never holds the product in FP16: 90000 is far "
                                    "below FP32's maximum of about 3.4e38."),
        ],
        hint="What is FP16's largest finite value, and what does IEEE rounding do above it?",
        explain="'FP16 multiply, FP32 accumulate' must say that the product is not rounded back to "
                "FP16: Tensor Cores keep it exact and add it in FP32.",
    ),
    Question(
        id="01.mixed_precision_contract",
        answer_name="contract",
        prompt="After these experiments, what must a description like 'FP16 multiply, FP32 "
               "accumulate' state to be precise? Pick one:\n"
               + options_text(CONTRACT_OPTIONS),
        answer="d",
        kind=Choice(tuple(CONTRACT_OPTIONS)),
        wrong=[
            Wrong("a", "the FP32 accumulator protects partial sums only: an input rounded when it "
                       "was stored in FP16 (4097 -> 4096) or a product rounded to FP16 (300*300 -> "
                       "inf) is already lost."),
            Wrong("b", "order matters (2^24 + 1 - 2^24), but so do the formats at each step: the "
                       "4097 and the overflowing product go wrong in any order."),
            Wrong("c", "the inputs are rounded to FP16 when stored, and a product rounded to FP16 "
                       "can overflow: FP16 multiplication can lose information."),
        ],
        hint="Follow one value from input to product to sum: where can it be rounded?",
        explain="Precision is a property of each step: storage, product and accumulation.",
    ),
    Question(
        id="01.oom_cause",
        prompt="A training step fails with \"CUDA out of memory. Tried to allocate 512 MiB\". "
               "What does that tell you? Pick one:\n" + options_text(OOM_CAUSE),
        answer="c",
        kind=Choice(tuple(OOM_CAUSE)),
        wrong=[
            Wrong("a", "the 512 MiB is only the request that found no room: the weights, the saved "
                       "activations and the gradients already held most of the memory. What "
                       "decides is the peak of everything held at once."),
            Wrong("b", "the peak can come in the forward pass (activations piling up) or in the "
                       "optimizer update (its state) as well: find where the run's peak is."),
        ],
    ),
    Question(
        id="01.e4m3_satfinite",
        answer_name="satfinite_500",
        prompt="CUDA converts 500.0 to FP8 E4M3 with __nv_cvt_float_to_fp8(x, __NV_SATFINITE, "
               "__NV_E4M3) (what the __nv_fp8_e4m3 constructor does). The value it stores, as a "
               "float (exact).",
        answer=448.0,
        kind=Number(),
        wrong=[
            Wrong(512.0, "512 is not an E4M3 number (it is E5M2's); E4M3's largest is 448."),
            Wrong(480.0, "480 would be the next step up, but E4M3 spends that encoding on NaN: "
                         "448 is its largest finite number."),
        ],
        hint="SATFINITE: out-of-range finite values, and inf, are clamped to the largest finite "
             "number; only NaN stays NaN.",
        explain="An E4M3 overflow is NaN under a non-saturating cast (ml_dtypes, PyTorch) and "
                "±448 under CUDA's saturating conversion.",
    ),
    Question(
        id="01.e4m3_overflow_always_nan",
        answer_name="overflow_always_nan",
        prompt="True or False: converting a value above 448 to FP8 E4M3 always gives NaN.",
        answer=False,
        kind=Exact(bool),
        wrong=[
            Wrong(True, "that holds for a non-saturating cast (ml_dtypes, PyTorch); CUDA's "
                        "saturating conversion (__NV_SATFINITE) clamps the value to ±448. The "
                        "format has no inf; what an overflow becomes is the conversion's choice."),
        ],
    ),
    Question(
        id="01.fp8_scale",
        answer_name="fp8_scale",
        prompt="FP8 training with a per-tensor scale: a gradient tensor's amax (largest absolute "
               "value) is 0.05. The scale it is multiplied by before the E4M3 cast, so that its "
               "largest value lands on E4M3's largest finite number (exact).",
        answer=lambda: 448 / 0.05,
        kind=Number(),
        wrong=[
            Wrong(lambda: 0.05 / 448, "that is the factor that undoes the scaling after the "
                                      "GEMM; before the cast the tensor is multiplied by "
                                      "448 / amax."),
            Wrong(lambda: 57344 / 0.05, "57344 is E5M2's largest number; the cast is to E4M3 "
                                        "(448)."),
            Wrong(1.0, "without a scale, values near 0.05 keep only a few bits and values below "
                       "2^-10 flush to zero: the scale maps amax onto 448 to use the whole range."),
        ],
    ),
    Question(
        id="01.half_bytes_half_peak",
        answer_name="half_bytes_half_peak",
        prompt="A 7e9-parameter model trains with Adam in mixed precision. True or False: storing "
               "its weights in 2 bytes instead of 4 halves the training run's peak memory.",
        answer=False,
        kind=Exact(bool),
        wrong=[
            Wrong(True, "halving the bytes per weight halves the weights only; the training state "
                        "(16-bit weights and gradients, FP32 master weights, Adam's two moments: "
                        "16 B per parameter) and the activations do not halve with it."),
        ],
    ),
    Question(
        id="01.same_precision_needed",
        answer_name="same_precision_needed",
        prompt='True or False: in a GEMM the inputs and the accumulator must use the same precision.',
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "mixed precision keeps FP16 or BF16 inputs and accumulates in FP32: the accumulator's precision bounds the error of the sum: 4096 FP16 ones summed into an FP32 accumulator give 4096.")],
    ),
]
