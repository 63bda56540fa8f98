"""Lesson 11, two-level double buffering: the register budget of doubled fragments, and the two
granularities (a K-tile in shared memory, one k in registers)."""
from ..question import Choice, Exact, Question, Wrong

GRANULARITY = ("one k position", "one K-tile")


def slots(m, n, input_sets=2):
    """Scalar slots: m n accumulators (one set) plus ``input_sets`` copies of (m + n) inputs."""
    return m * n + input_sets * (m + n)


def k_steps(tile_k):
    return tile_k


QUESTIONS = [
    Question(
        id="11.slots_8x8",
        prompt="Scalar register slots of an 8 x 8 micro-tile with register ping-pong (two sets "
               "of an 8-vector of A and an 8-vector of B).",
        answer=lambda: slots(8, 8),
        kind=Exact(int),
        wrong=[
            Wrong(lambda: slots(8, 8, input_sets=1), "that is a single input set; ping-pong keeps "
                                                     "two sets of 8 + 8."),
            Wrong(lambda: 2 * slots(8, 8, input_sets=1),
                  "you doubled the accumulators too: only the inputs are double-buffered; the 64 "
                  "C accumulators are one set that lives across the whole K loop."),
        ],
        hint="64 + 2 x (8 + 8).",
    ),
    Question(
        id="11.slots_4x8",
        prompt="Same model for a 4 x 8 micro-tile (two input sets of a 4-vector and an 8-vector).",
        answer=lambda: slots(4, 8),
        kind=Exact(int),
        wrong=[
            Wrong(lambda: slots(4, 8, input_sets=1), "44 has one input set; two sets add 12 more."),
            Wrong(lambda: 2 * slots(4, 8, input_sets=1),
                  "88 doubles the accumulators; only the input vectors come in two copies."),
            Wrong(lambda: 4 * 8 + 2 * 4 * 8, "64 keeps whole blocks of inputs; per step a thread "
                                             "needs only a 4-vector and an 8-vector."),
        ],
        hint="32 accumulators + 2 x (4 + 8).",
        explain="A live-value budget, not the compiler's register count: addresses and indices "
                "need registers too (the real kernels' counts are in the bench table).",
    ),
    Question(
        id="11.k_steps",
        prompt="A thread's 8 x 8 block uses an 8 x 32 slice of A and a 32 x 8 slice of B from one "
               "32 x 32 tile pair. How many outer products (register stages) is that?",
        answer=lambda: k_steps(32),
        kind=Exact(int),
        wrong=[Wrong(8, "8 is the micro-tile side; the outer products run along k, 32 of them."),
               Wrong(4, "4 is the number of 32 x 32 K-tiles of a 128 GEMM (the shared-memory "
                        "stages), not the register stages inside one tile.")],
    ),
    Question(
        id="11.register_switch",
        prompt=f"How often do the register ping and pong sets swap roles? One of {GRANULARITY}.",
        answer=lambda: "one k position",
        kind=Choice(GRANULARITY),
        wrong=[Wrong("one K-tile", "that is the shared-memory level. The register level swaps at "
                                   "every k: vectors for k+1 load while k's outer product runs.")],
    ),
]
