"""Lesson 11, two-level double buffering: the register budget of doubled fragments, the two
granularities (a K-tile in shared memory, one k in registers), and how registers per thread set
the blocks per SM (why the register level pays when few warps are resident); and the two-level
kernel lab."""
from ...labs.kernel_lab import TWOLEVEL
from ...labs.solutions import solution
from ...perfmodel.occupancy import HOPPER, blocks_per_sm
from ...judging import Choice, Exact, Number, Question, Wrong

GRANULARITY = ("one k position", "one K-tile")


def slots(m, n, input_sets=2):
    """Scalar slots: m n accumulators (one set) plus ``input_sets`` copies of (m + n) inputs."""
    return m * n + input_sets * (m + n)


WORKED_K, WORKED_BK = 9, 4              # the worked l1_two_level: K = 9, K tiles of 4


def two_level_barriers(k, bk, per_tile=1):
    """Barriers one block of the worked two-level kernel passes: the prologue's, then
    ``per_tile`` per K tile. The register level adds none: a thread's fragments are its own."""
    return 1 + per_tile * -(-k // bk)


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
    Question(
        id="11.blocks_185",
        prompt="twolevel with BK = 16 needs 185 registers per thread in blocks of 256 threads. An "
               "H200 SM has 65536 registers, allocated per warp in units of 256. How many such "
               "blocks fit on one SM at once (by registers) (exact)?",
        answer=lambda: blocks_per_sm(185, 256, 0)[0],
        kind=Number(rtol=0.01),
        wrong=[
            Wrong(HOPPER.registers // 185,
                  "that counts threads whose registers fit; a block needs all 256 threads' "
                  "registers at once, so divide by the block's registers."),
            Wrong(HOPPER.registers / (185 * 256),
                  "blocks are whole: the fraction left over holds no block."),
            Wrong(2, f"two blocks need 2 x 256 x 185 = 94720 registers (more after rounding per "
                     f"warp), beyond the SM's 65536. A larger micro-tile costs registers per "
                     f"thread, and registers set the occupancy: one block fills "
                     f"{256 // 32} of an SM's {HOPPER.max_threads // 32} warp slots. Occupancy "
                     f"cannot be ignored when the micro-tile grows."),
            Wrong(8, "8 is the warps of one block; the question asks for blocks per SM."),
        ],
        hint="Registers per warp: 185 x 32 rounded up to a multiple of 256; a block has 8 warps.",
        explain="One block means 8 warps per SM: while one warp waits for shared memory, few "
                "others can issue, so the kernel must overlap within the warp (register ping-pong).",
    ),
    Question(
        id="11.blocks_123",
        prompt="outer with BK = 8 needs 123 registers per thread, same blocks of 256 threads. "
               "How many blocks fit on one SM by registers (exact)?",
        answer=lambda: blocks_per_sm(123, 256, 0)[0],
        kind=Number(rtol=0.01),
        wrong=[
            Wrong(HOPPER.registers // 123, "that counts threads, not blocks of 256 threads."),
            Wrong(HOPPER.registers / (123 * 256), "blocks are whole: round down."),
            Wrong(1, "123 x 32 = 3936 rounds up to 4096 per warp, 32768 per block: exactly two "
                     "blocks fit in 65536."),
        ],
        explain="Two blocks, 16 warps: enough other warps to hide a warp's waits, which is why "
                "outer and twolevel tie at BK = 8.",
    ),
    Question(
        id="11.lab_twolevel",
        prompt="Write lab_twolevel(A, B, C): lab_outer's launch and 4 x 4 micro-tiles, with two "
               "shared buffers (at most one syncthreads per K tile plus the prologue's) and two "
               "register sets of fragments in local arrays: read the fragments of k+1 from "
               "shared memory before the FMAs of k use those of k.",
        answer=lambda: solution("11.lab_twolevel"),
        kind=TWOLEVEL,
        hint="Read k = 0 into set 0 before the k loop; in the loop read k+1 into the other set, "
             "then do the FMAs of k.",
        explain="Each level hides the latency of the one above it: the shared buffers hide "
                "DRAM, the register sets hide shared memory.",
    ),
    Question(
        id="11.slots_are_allocation",
        prompt=f"The register budget of twolevel's 8 x 8 micro-tile is {slots(8, 8)} live scalars. "
               "True or False: that is what the compiler must allocate per thread.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, f"{slots(8, 8)} is a budget of live values, not what the compiler "
                           "allocates: addresses, indices, loop counters and the registers that "
                           "stage the next tile's global loads come on top (the recorded H200 run "
                           "reports 150 for twolevel at BK = 8), and the compiler may reuse a "
                           "register whose value is dead, or spill.")],
    ),
    Question(
        id="11.worked_barriers",
        prompt=f"The worked l1_two_level runs with K = {WORKED_K} and K tiles of "
               f"BK = {WORKED_BK}: two shared slots, and two register slots of fragments switched "
               "at every k. How many barriers (cuda.syncthreads) does one block pass?",
        answer=lambda: two_level_barriers(WORKED_K, WORKED_BK),
        kind=Exact(int),
        wrong=[
            Wrong(lambda: two_level_barriers(WORKED_K, WORKED_BK) + WORKED_K,
                  "the register level needs no barrier: a thread's fragments are its own "
                  "registers, which no other thread reads. Only the shared level synchronises, "
                  "once per K tile."),
            Wrong(lambda: two_level_barriers(WORKED_K, WORKED_BK, per_tile=2),
                  "two per K tile is what one shared buffer needs; with two slots one barrier "
                  "per tile suffices."),
            Wrong(lambda: two_level_barriers(WORKED_K, WORKED_BK) - 1,
                  "you left out the prologue's barrier, after K tile 0 is stored."),
        ],
        hint="The prologue's barrier, then one per K tile: ceil(9 / 4) tiles.",
        explain="The kernel's picture on the simulator shows the same count.",
    ),
]
