"""Lesson 12, Tensor Cores: the pipeline around D = A B + C, the 128 / 32 / 16 hierarchy, why a
warp (not a thread) holds the fragments, what FP16 inputs with an FP32 accumulator do; and the
fragment-loop lab."""
import numpy as np

from ...labs.solutions import solution
from ...labs.wmma import LAB as WMMA_LAB
from ...perfmodel import HOPPER, pipeline_time
from ...tensorcore import hopper, numerics, probes, tiling
from ._choices import options_text
from ...judging import Array, Choice, Exact, Function, Number, Question, Wrong

# the package's whole-GEMM emulations: what 12.mma_step and 12.lab_wmma ask to be written
# The seed's exercise: 4 MMAs along K, a fragment load takes 6, an MMA 10 (same unit).
N_MMA, T_LOAD, T_MMA = 4, 6, 10
GEMM_N, TILE, FRAG = 128, 32, 16
HW_MODEL = numerics.AlignTruncate(block=16, extra_bits=0, final="rz")


# Part 2: the Hopper ring. One stage holds a 128 x 64 A tile and a 64 x 256 B tile of FP16; a
# block may use HOPPER.shared_bytes, less 1 KiB kept to align the ring.
RING_SLICES, RING_ISSUE, RING_LATENCY, RING_MMA = 64, 0.2, 1.0, 0.55     # microseconds per slice


def _stage_bytes(elem_bytes=2):
    return (hopper.BM * hopper.BK + hopper.BK * hopper.BN) * elem_bytes


def _stages_that_fit(stage_bytes):
    return (HOPPER.shared_bytes - 1024) // stage_bytes


def _stages_needed():
    """The fewest ring stages after which more stages no longer shorten the model's time."""
    def time(stages):
        return pipeline_time(RING_SLICES, RING_ISSUE, RING_MMA, stages, RING_LATENCY)
    best = time(RING_SLICES)
    return next(s for s in range(1, RING_SLICES + 1) if abs(time(s) - best) < 1e-9)


# The WMMA kernel's Nsight Compute profile on the H200, in whole percent, and its three largest
# stall reasons (what lesson 12 prints from benchmarks/hopper_h200.json). Written here, not read at import, so that the bank loads
# where benchmarks/ is absent (the grader's package copy); tests/test_grading_bank_l12.py derives
# the four figures from the record and holds these to them.
WMMA_PROFILE = {"tensor": 35, "shared": 38, "L2": 37, "DRAM": 8}
WMMA_TOP_STALLS = ("short_scoreboard", "wait", "math_pipe_throttle")


def _probe(name):
    return next(p for p in probes.PROBES if p.name == name)


def _mma_step(a, b, c):
    """Reference: exact products, one rounding of the sum to FP32."""
    exact = a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)
    return exact.astype(np.float32)


def _mma_cases():
    rng = np.random.default_rng(12)
    cases = []
    for scale in (1.0, 0.5, 2.0):
        a = (scale * rng.standard_normal((16, 16))).astype(np.float16)
        b = (scale * rng.standard_normal((16, 16))).astype(np.float16)
        c = rng.standard_normal((16, 16)).astype(np.float32)
        cases.append((a, b, c))
    return cases


def _mma_hidden(rng):
    cases = []
    for _ in range(3):
        m, k, n = (int(rng.choice([8, 16, 32])) for _ in range(3))
        scale = float(rng.uniform(0.25, 4))
        cases.append(((scale * rng.standard_normal((m, k))).astype(np.float16),
                      (scale * rng.standard_normal((k, n))).astype(np.float16),
                      rng.standard_normal((m, n)).astype(np.float32)))
    return cases


# Part 2's shapes (lesson 12b, sections 13, 15 and 16): a decode GEMM's 128 x 256 tiles against
# the H200's SMs, the registers setmaxnreg leaves the consumers, an FP8 K slice.
DECODE_SHAPE, H200_SMS, PRODUCER_REGS = (128, 4096, 4096), 132, 24


def _tiles(M, N, bm=hopper.BM, bn=hopper.BN):
    return -(-M // bm) * -(-N // bn)


def _consumer_registers(producer=PRODUCER_REGS, granule=8):
    """What each of the two consumer warpgroups' threads may take once the producer warpgroup
    keeps ``producer`` per thread: setmaxnreg counts in multiples of 8."""
    left = (HOPPER.registers - 128 * producer) // 256
    return left // granule * granule


def _fp8_slice():
    return hopper.plan("persistent", 8192, 8192, 8192, fmt="e4m3").bk


WGMMA_CHANGE = {
    "a": "one warp still issues it and waits for it, as with mma_sync, but from shared "
         "memory: the ldmatrix loads into registers are gone",
    "b": "it is mma_sync with a larger tile (64 x 256 x 16), issued by 4 warps that each wait "
         "for the result as mma_sync does",
    "c": "4 warps issue it together, it reads A and B from shared memory, and it runs on "
         "while they do other work",
}

MMA_SHAPES = {
    "a": "yes: a Tensor Core multiplies a 16 x 16 tile by a 16 x 16 tile, one warp at a time, and "
         "other shapes can be built from these steps by the compiler",
    "b": "no: it depends on the GPU generation, the input and accumulator types and the "
         "instruction family (WMMA m16n16k16, m32n8k16, m8n32k16; mma.sync m16n8k16; Hopper's "
         "wgmma: M = 64, N up to 256, issued by 4 warps)",
    "c": "it is 16 x 16 x 16 for FP16 on the GPUs that have Tensor Cores; only the 8-bit and TF32 "
         "instructions use other shapes, because their elements have other sizes",
}

QUESTIONS = [
    Question(
        id="12.serial_time",
        prompt=f"A Tensor Core micro-kernel needs {N_MMA} MMAs along K. Loading one set of "
               f"fragments takes {T_LOAD}, one MMA takes {T_MMA} (same unit). With one register "
               f"buffer nothing overlaps: the total time (exact)?",
        answer=lambda: pipeline_time(N_MMA, T_LOAD, T_MMA, buffers=1),
        kind=Number(rtol=1e-9, unit="time units"),
        wrong=[
            Wrong(lambda: pipeline_time(N_MMA, T_LOAD, T_MMA, buffers=2),
                  "that is the double-buffered time. With a single buffer the next load cannot "
                  "start until the MMA using the buffer is done, so every load waits."),
            Wrong(N_MMA * T_MMA, "that counts only the MMAs, as if the loads were free. A faster "
                                 "compute unit does not remove the data supply: loads still take "
                                 "time and, serialised, add to it."),
            Wrong(T_LOAD + T_MMA, "that is one load and one MMA; there are four of each."),
        ],
        hint="Serial: n (L + C).",
        explain="Nothing overlaps, so each of the four steps pays its load and its MMA.",
    ),
    Question(
        id="12.double_buffer_time",
        prompt=f"The same {N_MMA} MMAs (load {T_LOAD}, MMA {T_MMA}) with ideal register double "
               f"buffering: while one MMA runs, the next fragments load into the other buffer. "
               f"The total time (exact)?",
        answer=lambda: pipeline_time(N_MMA, T_LOAD, T_MMA, buffers=2),
        kind=Number(rtol=1e-9, unit="time units"),
        wrong=[
            Wrong(lambda: pipeline_time(N_MMA, T_LOAD, T_MMA, buffers=1),
                  "that is the serial time: double buffering exists to overlap the next load "
                  "with the current MMA."),
            Wrong(N_MMA * max(T_LOAD, T_MMA),
                  "that counts only the steady state. The very first load has no MMA to hide "
                  "under (the prologue), so it adds its full time."),
            Wrong((N_MMA - 1) * max(T_LOAD, T_MMA),
                  "that is the overlapped middle only: add the first load (prologue) and the "
                  "last MMA (epilogue), which overlap with nothing."),
            Wrong(T_LOAD + N_MMA * max(T_LOAD, T_MMA) + T_MMA,
                  "the last MMA is counted twice: the overlapped phases are the n - 1 = 3 "
                  "middle ones, then the final MMA runs alone."),
        ],
        hint="L + (n - 1) max(L, C) + C: a prologue load, the overlapped steps, a final MMA.",
        explain="The slower stage (the MMA, 10) sets the pace; double buffering hides the loads "
                "under it but cannot make the loop faster than n x max(L, C) plus the ends.",
    ),
    Question(
        id="12.scalars_three_tiles",
        prompt="If one thread kept whole 16 x 16 tiles of A, B and C in its own registers, how "
               "many scalars would it hold?",
        answer=lambda: tiling.scalars_per_thread(3, FRAG),
        kind=Exact(int, unit="scalars"),
        wrong=[
            Wrong(FRAG * FRAG, "that is one tile. A, B and C are three tiles of 256 each."),
            Wrong(2 * FRAG * FRAG, "that counts the inputs A and B; the C accumulator tile has "
                                   "to live somewhere too."),
            Wrong(3 * FRAG * FRAG // tiling.WARP,
                  "that is each lane's share when a warp of 32 holds the three tiles together, "
                  "which is what the hardware does; the question asks about one thread alone."),
            Wrong(tiling.MAX_REGISTERS, "255 is the register limit the lesson compares against "
                                        "(on current NVIDIA GPUs; it is not universal), not what "
                                        "three tiles need."),
        ],
        hint="Three tiles of 16 x 16.",
        explain="768 live scalars is three times the ~255-register limit of a thread: hence "
                "warp-level fragments, spread over 32 lanes.",
    ),
    Question(
        id="12.fragment_elements_per_lane",
        prompt="A warp holds one 16 x 16 FP32 accumulator fragment spread evenly over its lanes. "
               "How many of its elements does each lane keep?",
        answer=lambda: tiling.elements_per_lane(FRAG, tiling.WARP),
        kind=Exact(int, unit="elements"),
        wrong=[
            Wrong(FRAG * FRAG, "that would be a full copy of the fragment in every thread. The "
                               "lanes of a warp share a fragment: each holds a part."),
            Wrong(FRAG, "16 would be one row per lane, but a warp has 32 lanes, not 16."),
            Wrong(3 * FRAG * FRAG // tiling.WARP, "that is the share of three fragments (A, B and "
                                                  "C); the question asks about one."),
        ],
        hint="256 elements over 32 lanes.",
        explain="Which lane holds which element is unspecified in WMMA (and differs between "
                "architectures): code treats the fragment as a whole.",
    ),
    Question(
        id="12.mma_count",
        prompt=f"A {GEMM_N} x {GEMM_N} x {GEMM_N} GEMM (M = N = K = {GEMM_N}) is computed with "
               f"16 x 16 x 16 MMAs. How many MMAs in total?",
        answer=lambda: tiling.hierarchy(GEMM_N, TILE, FRAG)["mma_total"],
        kind=Exact(int, unit="MMAs"),
        wrong=[
            Wrong((GEMM_N // FRAG) ** 2, "that counts the 16 x 16 fragments of C, one MMA each; "
                                         "every fragment needs one MMA per 16-wide step of K."),
            Wrong((GEMM_N // TILE) ** 2, "that is the number of 32 x 32 SRAM tiles of C. Each "
                                         "tile holds 4 fragments, each updated K / 16 times."),
        ],
        hint="(M/16) x (N/16) fragments of C, each updated K/16 times.",
        explain="The hierarchy only regroups the same (128/16)^3 MMAs: tiles decide what is in "
                "shared memory, fragments what one warp multiplies.",
    ),
    Question(
        id="12.fp16_acc_stall",
        prompt="The FP16-accumulator mode adds 16 exact products per MMA step and rounds the "
               "accumulator to FP16 after each step. Feeding it ones (every product is 1), at "
               "which value does the accumulator stop growing (exact)?",
        answer=lambda: numerics.ones_stall("fp16", block=FRAG),
        kind=Number(rtol=1e-9),
        wrong=[
            Wrong(lambda: numerics.ones_stall("fp16", block=1),
                  "2048 is the stall when ones are added one at a time (lesson 01). Here each "
                  "step adds 16 at once, exactly: the sum only stalls where FP16's spacing is 32, "
                  "so that + 16 is a tie that rounds back."),
            Wrong(65504, "65504 is FP16's largest value; the accumulator stalls before it, where "
                         "the spacing first reaches twice the step."),
        ],
        hint="Find the first power of two where FP16's spacing is 32.",
        explain="Exact blocks of 16 postpone the stall, but FP16 accumulation still loses "
                "everything above 2^15 + 16: Tensor Core GEMMs accumulate in FP32.",
    ),
    Question(
        id="12.align_then_cancel",
        prompt="One MMA step gets the products 2^30, -2^30 and 1 (and zeros). A Tensor Core that "
               "aligns all products to the largest exponent, keeps 24 bits and truncates the rest "
               "(no extra bits) before adding: what does it return (exact)?",
        answer=lambda: probes.predict(_probe("align_then_cancel"), HW_MODEL),
        kind=Number(atol=1e-12, rtol=0),
        wrong=[
            Wrong(lambda: probes.predict(_probe("align_then_cancel"), "rn"),
                  "1 is the exact answer, which a chain of FP32 additions in this order also "
                  "gives. Aligned to 2^30 with a 24-bit window, the 1 is 30 bits down and is "
                  "shifted out before the two large products cancel."),
            Wrong(2.0 ** 30, "the two large products cancel exactly; the question is what "
                             "happens to the 1."),
        ],
        hint="Align 1 to the exponent of 2^30 with 24 significant bits: what is left of it?",
        explain="Multi-term adders do not behave like a sequence of IEEE additions: "
                "Fasi et al. (2021) describe this alignment loss on V100/T4/A100.",
    ),
    Question(
        id="12.mma_step",
        prompt="Write mma_step(a, b, c): one Tensor Core step D = A B + C on 16 x 16 fragments, "
               "with a, b FP16 arrays and c a float32 array. Products exact, accumulation in "
               "FP32 (return float32).",
        answer=_mma_step,
        kind=Function(cases=_mma_cases, compare=Array(rtol=1e-4, atol=1e-4), hidden=_mma_hidden),
        wrong=[
            Wrong(lambda a, b, c: (a @ b).astype(np.float32) + c,
                  "a @ b on FP16 arrays rounds the result to FP16 before it reaches the FP32 "
                  "accumulator: that is FP16 arithmetic, not mixed precision. Widen the inputs "
                  "first (a.astype(np.float32) or np.float64)."),
            Wrong(lambda a, b, c: a.astype(np.float32) @ b.astype(np.float32),
                  "that is A B without the accumulator: D = A B + C adds C."),
        ],
        hint="Convert a and b to a wider type, multiply, add c, return float32.",
        explain="This is numerics.mma_update with the 'rn' model, the step the emulation repeats "
                "K/16 times per fragment.",
    ),
    Question(
        id="12.hopper_stage_bytes",
        prompt="The Hopper kernels compute 128 x 256 output tiles from K slices 64 deep. One "
               "stage of the ring holds the slice's A tile and B tile, both FP16. How many bytes "
               "is one stage?",
        answer=lambda: _stage_bytes(),
        kind=Exact(int, unit="bytes"),
        wrong=[
            Wrong(lambda: _stage_bytes(elem_bytes=4),
                  "that counts 4 bytes per element. The inputs are FP16: 2 bytes each (only the "
                  "accumulators are FP32, and they live in registers, not in the ring)."),
            Wrong(hopper.BM * hopper.BK * 2,
                  "that is the A tile alone (128 x 64). A stage also holds B's 64 x 256 tile."),
            Wrong(hopper.BK * hopper.BN * 2,
                  "that is the B tile alone (64 x 256). A stage also holds A's 128 x 64 tile."),
        ],
        hint="Elements of A's 128 x 64 tile plus B's 64 x 256 tile, times 2 bytes.",
        explain="48 KiB per stage: the transaction count each full barrier waits for.",
    ),
    Question(
        id="12.hopper_stages_fit",
        prompt="A block may use 227 KiB of shared memory on Hopper (after opting in with "
               "cudaFuncSetAttribute). Keeping 1 KiB to align the ring to 1024 bytes, how many "
               "48 KiB stages fit?",
        answer=lambda: _stages_that_fit(_stage_bytes()),
        kind=Exact(int, unit="stages"),
        wrong=[
            Wrong(1, "48 KB is the limit for *static* shared memory (and numba-cuda's). Dynamic "
                     "shared memory goes to 227 KiB per block once the kernel opts in."),
            Wrong(lambda: _stages_that_fit(_stage_bytes(elem_bytes=4)),
                  "with 4-byte elements a stage would be 96 KiB; FP16 tiles take 48 KiB."),
            Wrong(5, "227 / 48 is 4.7: the fifth stage does not fit, and a stage cannot be "
                     "partial."),
        ],
        hint="Whole stages only: (227 KiB - 1 KiB) // 48 KiB.",
        explain="Four stages: hopper.PIPELINE_STAGES. More would need smaller tiles.",
    ),
    Question(
        id="12.ring_stages_needed",
        prompt=f"A copy engine issues one slice in {RING_ISSUE} us and the slice lands "
               f"{RING_LATENCY} us later; wgmma needs {RING_MMA} us per slice. With the course's "
               f"pipeline model (pipeline_time with latency), from how many ring stages on does "
               f"a loop of {RING_SLICES} slices stop getting faster?",
        answer=_stages_needed,
        kind=Exact(int, unit="stages"),
        wrong=[
            Wrong(2, "two buffers hide a load only when one load fits under one compute. Here a "
                     "load needs 1.2 us from issue to arrival, more than two 0.55 us slices of "
                     "compute: the wgmmas still wait."),
            Wrong(3, "ceil(1.2 / 0.55) = 3 slots cover the copies in flight, but one more slot is "
                     "being read by the wgmmas at the same time: 1 + 3."),
            Wrong(1, "with one slot, every slice waits for its own load: issue + latency + compute."),
        ],
        hint="Compute pipeline_time(64, 0.2, 0.55, stages, latency=1.0) for stages 1, 2, 3, ...",
        explain="1 + ceil((issue + latency) / compute): the slot being computed plus enough "
                "slots to cover a copy's time in flight.",
    ),
    Question(
        id="12.wmma_bottleneck",
        prompt=f"Nsight Compute on the WMMA kernel at 4096^3 (lesson 12b, section 11): the tensor "
               f"pipe is active {WMMA_PROFILE['tensor']}% of the cycles, shared memory "
               f"{WMMA_PROFILE['shared']}%, L2 {WMMA_PROFILE['L2']}%, DRAM {WMMA_PROFILE['DRAM']}%; "
               f"the top stall reasons are {', '.join(WMMA_TOP_STALLS[:-1])} and "
               f"{WMMA_TOP_STALLS[-1]}. Which describes the "
               "bottleneck? 'dram': DRAM bandwidth is saturated; 'tensor': the Tensor Cores are "
               "busy all the time; 'feed': the warps wait for operands (fragments loaded from "
               "shared memory into registers, fixed latencies, barriers), so the Tensor Cores "
               "idle; 'spills': registers spill to local memory.",
        answer="feed",
        kind=Choice(options=("dram", "tensor", "feed", "spills")),
        wrong=[
            Wrong("dram", f"DRAM is {WMMA_PROFILE['DRAM']}% busy: the kernel is far from "
                          f"bandwidth-bound. Nothing in the memory system is near its limit."),
            Wrong("tensor", f"the tensor pipe is active only {WMMA_PROFILE['tensor']}% of the "
                            f"cycles: the Tensor Cores are idle most of the time, which is the "
                            f"problem."),
            Wrong("spills", "the kernel uses 128 registers and 0 bytes of local memory: nothing "
                            "spills."),
        ],
        hint="Which unit is near 100%? If none is, look at what the warps wait for.",
        explain="WMMA is synchronous and per warp: each mma_sync waits for its fragments in "
                "registers. wgmma reads shared memory directly and runs asynchronously.",
    ),
    Question(
        id="12.lab_wmma",
        prompt="Write lab_wmma(A, B, C) with gemmlab.labs.wmma: C (M x N, float32) = A (M x K, "
               "FP16) @ B (K x N, FP16), one 16 x 16 C fragment at a time: fill an accumulator "
               "with zeros, mma_sync along K, store it once.",
        answer=lambda: solution("12.lab_wmma"),
        kind=WMMA_LAB,
        hint="for i in range(0, M, 16), for j in range(0, N, 16): acc = fill_fragment(0.0); "
             "for k in range(0, K, 16): acc = mma_sync(load A at (i, k), load B at (k, j), acc); "
             "then store acc at (i, j).",
        explain="The accumulator fragment lives in registers for the whole K loop and reaches "
                "memory once: the same rule as the scalar accumulators of the CUDA-core ladder.",
    ),
    Question(
        id="12.register_limit_universal",
        prompt="Is 255 registers per thread a limit every GPU shares? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "255 is the limit of current NVIDIA GPUs; register limits and their "
                           "allocation granularity are properties of an architecture (and other "
                           "vendors' chips differ altogether): look them up for the target.")],
    ),
    Question(
        id="12.mma_shape_universal",
        prompt="Is 16 x 16 x 16 the shape of every Tensor Core matrix multiply-accumulate? Pick "
               "one:\n" + options_text(MMA_SHAPES),
        answer="b",
        kind=Choice(tuple(MMA_SHAPES)),
        wrong=[
            Wrong("a", "16 x 16 x 16 per warp is WMMA's picture: mma.sync steps are m16n8k16, and "
                       "on Hopper a group of 4 warps issues wgmma with 64 rows and up to 256 "
                       "columns."),
            Wrong("c", "even for FP16 the shapes differ between WMMA, mma.sync and wgmma, and "
                       "between generations; check the target's instruction set."),
        ],
    ),
    Question(
        id="12.peak_is_all",
        answer_name="peak_is_all",
        prompt="True or False: of two GPUs, the one with the higher peak Tensor Core FLOP/s always "
               "runs a given GEMM faster.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "peak FLOP/s is one roof: a GEMM below the ridge is bound by memory "
                           "bandwidth, and one above it still needs the data fed through shared "
                           "memory and registers in time; the types, shapes and the software "
                           "that reaches the peak matter too.")],
    ),
    # part 2 (lesson 12b): what wgmma changes, warp specialisation, shapes, the FP8 rung
    Question(
        id="12.wgmma_change",
        prompt="What does Hopper's wgmma change from WMMA's mma_sync? Pick one:\n"
               + options_text(WGMMA_CHANGE),
        answer="c",
        kind=Choice(tuple(WGMMA_CHANGE)),
        wrong=[
            Wrong("a", "a wgmma is issued by a warpgroup, 4 warps together (a 64-row tile), not "
                       "by one warp; and reading shared memory is half of it: it is also "
                       "asynchronous."),
            Wrong("b", "the warps do not wait for each wgmma: it runs asynchronously, the warps "
                       "commit groups of them and wait only when they need the results. That "
                       "is what keeps the Tensor Cores busy where mma_sync stalls."),
        ],
        hint="Lesson 12b, section 11: who issues it, where its operands come from, when the "
             "warps wait.",
    ),
    Question(
        id="12.idle_sms_decode",
        prompt=f"A decode step multiplies {DECODE_SHAPE[0]} x {DECODE_SHAPE[2]} activations by "
               f"a {DECODE_SHAPE[2]} x {DECODE_SHAPE[1]} weight ({DECODE_SHAPE[0]} x "
               f"{DECODE_SHAPE[1]} x {DECODE_SHAPE[2]}). With {hopper.BM} x {hopper.BN} output "
               f"tiles, one block per tile, how many of the H200's {H200_SMS} SMs get no tile?",
        answer=lambda: H200_SMS - _tiles(*DECODE_SHAPE[:2]),
        kind=Exact(int, unit="SMs"),
        wrong=[
            Wrong(0, "K makes no tiles: a tile's K slices (64 of them here) run one after "
                     "another in the block that owns the tile. Only M and N set how many "
                     "tiles there are."),
            Wrong(lambda: _tiles(*DECODE_SHAPE[:2]),
                  "that is the number of tiles, the SMs that work; the question asks for the "
                  "SMs left idle."),
            Wrong(lambda: H200_SMS - _tiles(*DECODE_SHAPE[:2], bn=128),
                  "that counts 128 x 128 tiles; these are 128 x 256, half as many."),
        ],
        hint="Tiles = ceil(M / 128) x ceil(N / 256); the rest of the 132 SMs idle.",
        explain="16 tiles for 132 SMs: why section 15's rule picks narrower tiles or splits K "
                "for decode shapes.",
    ),
    Question(
        id="12.consumer_registers",
        prompt=f"The ws kernel runs 3 warpgroups (384 threads) per SM, which has "
               f"{HOPPER.registers} registers. setmaxnreg lowers the producer warpgroup to "
               f"{PRODUCER_REGS} per thread; counts must be multiples of 8. How many registers "
               f"per thread can the two consumer warpgroups then take at most?",
        answer=_consumer_registers,
        kind=Exact(int, unit="registers"),
        wrong=[
            Wrong(lambda: HOPPER.registers // 384 // 8 * 8,
                  "that splits the registers evenly over all 384 threads, as a launch without "
                  "setmaxnreg does. The producer only issues copies and gives most of its "
                  "share back: the consumers get what it frees."),
            Wrong(lambda: (HOPPER.registers - 128 * PRODUCER_REGS) // 256,
                  "setmaxnreg takes multiples of 8: round down to the next one."),
            Wrong(lambda: HOPPER.registers // 256,
                  "that gives the consumers every register and leaves the producer none; it "
                  "keeps 24 per thread."),
        ],
        hint="(65536 - 128 x 24) / 256 threads, rounded down to a multiple of 8.",
        explain="240: enough for the 128 FP32 accumulators each consumer thread holds, plus "
                "addresses and fragments.",
    ),
    Question(
        id="12.fp8_slice_k",
        prompt="An FP16 K slice is 64 values: one 128-byte swizzled row of a tile. The FP8 rung "
               "keeps that row 128 bytes (so shared memory, the ring and the TMA boxes keep "
               "their sizes). How many values of K does one FP8 (E4M3) slice hold?",
        answer=_fp8_slice,
        kind=Exact(int, unit="values"),
        wrong=[
            Wrong(lambda: hopper.BK,
                  "that is FP16's slice. An E4M3 value is 1 byte, so the same 128 bytes hold "
                  "twice as many."),
            Wrong(32, "that is the K of one FP8 wgmma instruction (m64nNk32); a slice is four "
                      "of them."),
        ],
        hint="Bytes in the row divided by the bytes of one E4M3 value.",
    ),
]
