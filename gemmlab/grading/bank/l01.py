"""Lesson 01, numbers and precision: memory budgets, float formats, rounding, accumulation."""
import numpy as np

from ..question import Exact, Number, Question, Wrong

GIB = 2**30


def _fp16_sequential_ones(n=4096):
    acc = np.float16(0)
    for _ in range(n):
        acc = np.float16(acc + np.float16(1))
    return int(acc)


QUESTIONS = [
    Question(
        id="01.weights_gib",
        prompt="Memory for the weights alone of a 7e9-parameter model stored at 2 bytes per "
               "parameter, in GiB.",
        answer=lambda: 7e9 * 2 / GIB,
        kind=Number(rtol=2e-3, unit="GiB"),
        wrong=[
            Wrong(lambda: 7e9 * 2 / 1e9, "that is GB (10^9 bytes). A GiB is 2^30 = 1,073,741,824 "
                                         "bytes, about 7% more, so the same bytes are fewer GiB."),
            Wrong(lambda: 7e9 * 4 / GIB, "that is 4 bytes per parameter (FP32). The question stores "
                                         "each parameter in 2 bytes (FP16 or BF16)."),
            Wrong(lambda: 7e9 * 16 / GIB, "that counts bits, not bytes: 16 bits are 2 bytes."),
        ],
        hint="bytes = parameters x bytes per parameter; divide by 2**30 for GiB.",
        explain="Weights are only one line of the memory budget: activations, gradients, "
                "optimizer state and workspace come on top.",
    ),
    Question(
        id="01.fp16_ones_sum",
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
]
