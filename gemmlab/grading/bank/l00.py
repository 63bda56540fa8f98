"""Lesson 00, start here: one warm-up question that shows how checks answer."""
from ..question import Number, Question, Wrong

QUESTIONS = [
    Question(
        id="00.matrix_mib",
        prompt="Bytes taken by a 1024 x 1024 matrix of float32 values, in MiB (exact).",
        answer=lambda: 1024 * 1024 * 4 / 2**20,
        kind=Number(rtol=1e-9, unit="MiB"),
        wrong=[
            Wrong(lambda: 1024 * 1024 / 2**20, "that counts elements, not bytes: a float32 takes "
                                               "4 bytes."),
            Wrong(lambda: 1024 * 1024 * 32 / 2**20, "that counts bits: 32 bits are 4 bytes."),
            Wrong(lambda: 1024 * 1024 * 4 / 1e6, "that is MB (10^6 bytes); a MiB is 2^20 bytes."),
        ],
        hint="elements x bytes per element, then divide by 2**20.",
    ),
]
