"""Lesson 10, the outer-product micro-kernel: reads vs FMAs, the 4x ratio and what it does not
mean, the scalar register slots of an m x n micro-tile; and the outer-product kernel lab."""
from ...labs.kernel_lab import OUTER
from ...labs.solutions import solution
from ...perfmodel import HOPPER, blocks_per_sm
from ...perfmodel.warps import WARP_SIZE
from ...judging import Exact, Function, Number, Question, Wrong

K_STEPS, M_T, N_T = 32, 4, 4
L1_REGISTERS, L1_THREADS = 40, 256        # a register count ptxas might report for l1_blocked


def resident_warps(regs, threads, sm=HOPPER):
    """Warps resident on one SM for blocks of ``threads`` threads using ``regs`` registers each
    (no shared memory): whole blocks, as ``gl.perfmodel.blocks_per_sm`` counts them."""
    return blocks_per_sm(regs, threads, 0, sm)[0] * (threads // WARP_SIZE)


def reads(k, m, n):
    """Scalars read from shared memory by one thread over k steps of an m x n outer product
    (m = n = 1 is the one-output inner-product baseline)."""
    return k * (m + n)


def fmas(k, m, n):
    return k * m * n


def slots(m, n):
    """Scalar register slots: m n accumulators plus one m-vector and one n-vector of inputs."""
    return m * n + m + n


def _slot_cases():
    return [(4, 4), (8, 8), (4, 8), (2, 16), (1, 1), (3, 5)]


def _slot_hidden(rng):
    return [tuple(int(v) for v in rng.integers(1, 33, size=2)) for _ in range(6)]


QUESTIONS = [
    Question(
        id="10.baseline_reads",
        prompt=f"One thread, one output, K = {K_STEPS}: how many scalars does it read from "
               "shared memory (one of A and one of B per step)?",
        answer=lambda: reads(K_STEPS, 1, 1),
        kind=Exact(int),
        wrong=[Wrong(lambda: fmas(K_STEPS, 1, 1), "32 is the number of FMAs; each needs two reads.")],
        hint="Two reads per step.",
    ),
    Question(
        id="10.outer_reads",
        prompt=f"A thread owning a {M_T} x {N_T} micro-tile, K = {K_STEPS} outer-product steps: "
               "how many scalars does it read?",
        answer=lambda: reads(K_STEPS, M_T, N_T),
        kind=Exact(int),
        wrong=[
            Wrong(lambda: fmas(K_STEPS, M_T, N_T), "512 is the number of FMAs, not reads."),
            Wrong(lambda: M_T * N_T * reads(K_STEPS, 1, 1),
                  "1024 is what 16 separate inner products would read; the outer product reads "
                  "each a and b once per step and reuses it 4 times."),
        ],
        hint="Each step reads a 4-vector of A and a 4-vector of B.",
    ),
    Question(
        id="10.ratio_gain",
        prompt="By what factor does FMAs per scalar read improve from one output per thread to a "
               f"{M_T} x {N_T} outer-product micro-tile (exact)?",
        answer=lambda: (fmas(K_STEPS, M_T, N_T) / reads(K_STEPS, M_T, N_T))
        / (fmas(K_STEPS, 1, 1) / reads(K_STEPS, 1, 1)),
        kind=Number(rtol=1e-9, unit="x"),
        wrong=[
            Wrong(M_T * N_T, "16 is the number of outputs per thread; reads grow too (8 per step)."),
            Wrong(2, "2 is the new ratio (FMAs per read); the baseline was 1/2, so the gain is 4."),
        ],
        hint="(16 FMAs / 8 reads) / (1 FMA / 2 reads).",
        explain="The ratio is TM TN / (TM + TN) over 1/2. It is a count of logical reads: the "
                "same FLOPs, better reuse, and not a promise of a 4x faster kernel.",
    ),
    Question(
        id="10.four_x_faster",
        prompt="Does the 4x better FMA-per-read ratio make the kernel 4x faster? True or False.",
        answer=lambda: False,
        kind=Exact(bool),
        wrong=[Wrong(True, "the 4x is a ratio of logical reads to FMAs. Wall time also depends on "
                           "bank conflicts, instruction issue, occupancy, registers and whether "
                           "the kernel was limited by shared-memory reads at all.")],
    ),
    Question(
        id="10.slots_m_n",
        answer_name="slots",
        prompt="Write slots(m, n): the scalar register slots of a thread owning an m x n "
               "micro-tile that keeps one m-vector of A and one n-vector of B per step.",
        answer=slots,
        kind=Function(cases=_slot_cases, compare=Number(rtol=0), hidden=_slot_hidden),
        wrong=[
            Wrong(lambda m, n: m * n, "only the accumulators: the current a and b vectors need "
                                      "m + n slots too."),
            Wrong(lambda m, n: 3 * m * n, "that keeps whole m x n blocks of A and B (48 for 4x4), "
                                          "the direct scheme the outer product avoids."),
            Wrong(lambda m, n: m * n + 2 * (m + n), "that is with two input sets (register double "
                                                    "buffering, lesson 11); here one set."),
        ],
        hint="Accumulators m n, plus m values of A and n of B.",
        explain="For 4 x 4 that is 16 + 4 + 4 = 24 slots; compilers may use more registers "
                "(addresses, indices), so it is a model, not a register count.",
    ),
    Question(
        id="10.lab_outer",
        prompt="Write lab_outer(A, B, C): blocks of 64 threads (threadIdx.x = 0..63) compute a "
               "32 x 32 tile of C, block (blockIdx.x, blockIdx.y) the one at rows blockIdx.y*32 "
               "and columns blockIdx.x*32, grid (ceil(N/32), ceil(M/32)); each thread owns a "
               "4 x 4 micro-tile and updates it with outer products of 4 values of A and 4 of B "
               "held in registers.",
        answer=lambda: solution("10.lab_outer"),
        kind=OUTER,
        hint="Per k: read a[0..3] and b[0..3] from shared memory into local arrays, then 16 "
             "FMAs acc[i, j] += a[i] * b[j].",
        explain="8 shared-memory reads feed 16 FMAs: 0.5 reads per FMA instead of the tiled "
                "kernel's 2.",
    ),
    Question(
        id="10.one_output_per_thread",
        prompt="Must a GPU GEMM kernel give each thread exactly one output element? True or "
               "False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "fast kernels give each thread a block of accumulators (8 x 8 in the "
                           "course's `outer` rung): every value it reads then serves several "
                           "outputs, paid for in registers.")],
    ),
    Question(
        id="10.outer_fewer_flops",
        prompt="Does organising the micro-kernel as outer products reduce the GEMM's FLOPs? True "
               "or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "the same M N K multiply-adds happen, in another order: the outer "
                           "product changes how many values are read per multiply-add, not how "
                           "many multiply-adds there are.")],
    ),
    Question(
        id="10.step_reads_4x8",
        prompt="A thread owns a 4 x 8 micro-tile. How many input scalars does it read per k step "
               "of the outer product (exact)?",
        answer=lambda: reads(1, 4, 8),
        kind=Number(unit="scalars"),
        wrong=[
            Wrong(lambda: fmas(1, 4, 8), "32 is the number of multiply-adds per step; the reads "
                                         "are one 4-vector of A and one 8-vector of B."),
            Wrong(8, "both vectors are read: m + n = 4 + 8."),
        ],
    ),
    Question(
        id="10.step_fmas_4x8",
        prompt="The same 4 x 8 micro-tile: how many multiply-adds (FMAs) per k step (exact)?",
        answer=lambda: fmas(1, 4, 8),
        kind=Number(unit="FMAs"),
        wrong=[
            Wrong(lambda: reads(1, 4, 8), "12 is the values read; each of the 4 x 8 accumulators "
                                          "gets one multiply-add per step."),
            Wrong(64, "that counts FLOPs (2 per FMA); the question counts multiply-adds."),
        ],
    ),
    Question(
        id="10.l1_slots_are_registers",
        prompt=f"The slot model gives {slots(4, 4)} for the worked l1_blocked (16 accumulators, 4 "
               "values of x, 4 of y). True or False: ptxas then reports exactly that many "
               "registers per thread for it.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, f"{slots(4, 4)} (like the {3 * 4 * 4} of the direct scheme) is a count "
                           "of live scalar values in a model, not a physical register count: the "
                           "compiler also keeps 64-bit addresses, indices and loop counters in "
                           "registers, so even l1_one, with no register arrays, reports dozens.")],
    ),
    Question(
        id="10.l1_resident_warps",
        prompt=f"Suppose ptxas reports {L1_REGISTERS} registers per thread for l1_blocked, launched "
               f"in blocks of {L1_THREADS} threads with no shared memory. How many warps can be "
               f"resident on one H200 SM ({HOPPER.registers} registers, allocated per warp in "
               f"units of {HOPPER.register_unit}; at most {HOPPER.max_threads // WARP_SIZE} warps)?",
        answer=lambda: resident_warps(L1_REGISTERS, L1_THREADS),
        kind=Exact(int),
        wrong=[
            Wrong(HOPPER.max_threads // WARP_SIZE,
                  "that is the SM's limit on warps; registers bind first here. Registers per "
                  "thread set the occupancy: a block needs all its warps' registers at once."),
            Wrong(lambda: blocks_per_sm(L1_REGISTERS, L1_THREADS, 0)[0],
                  "that is blocks per SM; each block has 8 warps."),
            Wrong(HOPPER.registers // (L1_REGISTERS * WARP_SIZE),
                  "warps are resident in whole blocks: the registers left over after the last "
                  "whole block hold no warp."),
        ],
        hint="Registers per block = 40 x 256; whole blocks in 65536; 8 warps per block.",
        explain="More registers per thread (a bigger micro-tile) means fewer resident warps to "
                "hide each other's waits (lesson 03, section 10).",
    ),
]
