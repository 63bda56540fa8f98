"""Lesson 03, parallel work and speedup: the grouping activity's time model, work and span of a
reduction, races, message cost, granularity, speedup and efficiency, Amdahl's law; and the eight
warm-up puzzles, the first kernels a student writes (map .. prefix sum)."""
import math

from ...labs import puzzles
from ...labs.solutions import solution
from ...perfmodel import HOPPER, blocks_per_sm
from ...perfmodel.warps import WARP_SIZE, conflict_ways, sectors, warp_of
from ...perfmodel import (amdahl, efficiency, group_sum_time, message_time, reduction_schedule,
                          self_schedule, speedup)
from ._choices import options_text
from ...judging import Choice, Exact, Function, Number, Question, Wrong

# The grouping activity: 32 numbers, 4 workers at 1 item per time unit.
ITEMS, WORKERS = 32, 4
ROUND_1 = (11, 9, 7, 5)                     # fixed columns of unequal length
CHUNK = 4                                   # round 2: the first idle worker takes the next 4


def round_2_shares(rates=(1, 1, 1, 1)):
    """Round 2's items per worker: chunks of CHUNK handed to whoever is idle first."""
    return self_schedule(ITEMS, CHUNK, rates)["work"]


# Granularity: unequal speeds and a cost per chunk taken.
GRAIN_RATES, GRAIN_COST, GRAIN_CHUNKS = (1.5, 1, 1, 0.5), 1.0, ("1", "4", "16")

# Messages: L = 10 us, beta = 20 GB/s, 1 MB as 1000 x 1 KB or as one message (decimal units).
LATENCY, BETA, MB = 10e-6, 20e9, 1e6

# The inference pipeline: prepare 10 ms, GEMM 80 ms, post-process 10 ms.
PREPARE, GEMM, POST = 10.0, 80.0, 10.0
TOTAL = PREPARE + GEMM + POST
UNACCELERATED = (PREPARE + POST) / TOTAL


def _best_chunk():
    times = {c: self_schedule(ITEMS, int(c), GRAIN_RATES, GRAIN_COST)["time"] for c in GRAIN_CHUNKS}
    return min(times, key=times.get)



# The execution model (section 10).
BLOCK_ON_SM = {
    "a": "spread over several SMs, so that one large block keeps the whole GPU busy",
    "b": "one warp per SM, so that the SMs share the block's work between them",
    "c": "all on one SM, from its first instruction to its last",
}
WHILE_WAITING = {
    "a": "the SM stalls until the load returns, as an in-order core does on a cache miss",
    "b": "it issues an instruction of another resident warp that is ready",
    "c": "the waiting warp's later instructions run ahead of the load, out of order, in its place",
}


def _column_read(stride, column=5):
    """{lane: word} of lane t reading s[t, column] in rows of ``stride`` floats."""
    return {t: t * stride + column for t in range(WARP_SIZE)}


def _resident_warps(regs, threads, smem):
    return blocks_per_sm(regs, threads, smem, HOPPER)[0] * -(-threads // WARP_SIZE)


SHARED_RACE = {
    "a": "updates can be lost (a data race): two threads that read the same old C[i, j] both add "
         "to it, and the later write replaces the earlier one",
    "b": "C[i, j] gets the full sum: the hardware performs each += on global memory as one "
         "indivisible step, so every thread's partial sum arrives",
    "c": "it does not compile: Numba can refuse a kernel in which several threads may write the "
         "same element of an output array",
}
ROUND_2_REASON = {
    "a": "it cannot reduce waiting: a chunk holds the same 4 numbers each time, so the four "
         "workers get equal shares and finish at the same moment in both rounds anyway",
    "b": "handing out small chunks reduces the total work, since each worker adds fewer numbers at "
         "a time, so everyone finishes sooner, though not all at exactly the same moment",
    "c": "whoever is idle takes the next chunk, so faster workers take more and nobody idles while "
         "work is left; but a chunk cannot be split once taken, so the last chunks still leave a "
         "tail",
}
SPLIT_WRITES = {
    "a": "the same in both cases: every thread adds its acc into C[i, j] with +=, since each "
         "output starts at zero and addition does not depend on the order",
    "b": "over i/j each output has one owner that writes it once; over k each worker keeps a "
         "private partial sum and the partial sums are combined by a reduction (or atomic adds)",
    "c": "over i/j the outputs need a reduction too: every worker reads the same rows of A and "
         "columns of B, and those shared reads must be combined exactly like the partial sums over "
         "k",
}
AMDAHL_S = {
    "a": "the fraction of the baseline's running TIME spent in the part that is not accelerated",
    "b": "the fraction of the program's lines of code that the change may not accelerate, counted "
         "in the source",
    "c": "the fraction of the operations that are inherently serial and could never run in "
         "parallel, whatever is measured",
}


def _amdahl_cases():
    return [(0.2, 8.0), (0.05, 100.0), (0.5, 2.0), (0.0, 16.0), (1.0, 4.0), (0.3, 1.0)]


def _amdahl_hidden(rng):
    return [(float(rng.uniform(0, 1)), float(rng.uniform(1, 512))) for _ in range(6)] + [(1.0, 3.0)]


QUESTIONS = [
    Question(
        id="03.round1_time",
        answer_name="t_round_1",
        prompt=f"Round 1: the four workers hold {ROUND_1} of the {ITEMS} numbers, rate 1 each, "
               f"c = 2 per report. T = max W_i/r_i + 4c + 3, in time units (exact).",
        answer=lambda: group_sum_time(ROUND_1, 1, comm=2),
        kind=Number(unit="time units"),
        wrong=[
            Wrong(max(ROUND_1), "that is when the slowest worker finishes its share. The partial "
                                "sums still have to be reported (4 x c) and merged (3 additions)."),
            Wrong(max(ROUND_1) + 2 + 3, "the four reports go one after another: 4 x c, not one c."),
            Wrong(lambda: group_sum_time([ITEMS / WORKERS] * WORKERS, 1, comm=2),
                  "that assumes an even split of 8 each; round 1's columns are unequal and "
                  "everyone waits for the longest one (11)."),
        ],
        hint="The slowest share sets the compute time; then add the reports and the merges.",
    ),
    Question(
        id="03.round2_time",
        answer_name="t_round_2",
        prompt="Round 2: chunks of 4 numbers go to whoever is idle first, rates all 1, c = 2. "
               "The total time in units (exact).",
        answer=lambda: group_sum_time(round_2_shares(), 1, comm=2),
        kind=Number(unit="time units"),
        wrong=[
            Wrong(ITEMS / WORKERS, "8 units is only the balanced compute. Reporting 4 partial "
                                   "sums (4 x 2) and merging them (3) come on top."),
            Wrong(ITEMS / WORKERS + 2 + 3, "the reports are sent one after another: 4 x c."),
        ],
        hint="With equal speeds the chunks split evenly: 8 items each.",
    ),
    Question(
        id="03.round2_time_c6",
        answer_name="t_round_2_c6",
        prompt="The same even split when each report costs c = 6. The total time in units (exact).",
        answer=lambda: group_sum_time(round_2_shares(), 1, comm=6),
        kind=Number(unit="time units"),
        wrong=[
            Wrong(ITEMS / WORKERS + 6 + 3, "the reports are sent one after another: 4 x c."),
            Wrong(ITEMS / WORKERS, "the compute is 8, but 4 reports at 6 and 3 merges follow."),
        ],
        hint="8 + 4 x 6 + 3.",
    ),
    Question(
        id="03.split_beats_baseline_c6",
        answer_name="split_wins",
        prompt=f"With c = 6, does the even split beat one worker summing all {ITEMS} numbers "
               f"alone ({ITEMS} units)? True or False.",
        answer=lambda: group_sum_time(round_2_shares(), 1, comm=6) < group_sum_time([ITEMS]),
        kind=Exact(bool),
        wrong=[
            Wrong(True, "the split computes in 8 units but pays 4 x 6 + 3 = 27 to report and merge: "
                        "35 > 32. Splitting only pays when communication is cheap compared with "
                        "the work saved."),
        ],
    ),
    Question(
        id="03.gap_is_all_communication",
        answer_name="gap_is_communication",
        prompt="Is the time between the last worker finishing and the total being known all "
               "communication time? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[
            Wrong(True, "the gap also holds the merger's 3 additions and the queue of reports "
                        "waiting their turn; only the 4 x c of transfers is communication. "
                        "Name each part before optimising it."),
        ],
    ),
    Question(
        id="03.rounds_4_processors",
        answer_name="rounds_4",
        prompt="Summing 16 numbers with the balanced tree, level by level, on 4 processors: "
               "how many rounds (one addition per processor per round)?",
        answer=lambda: reduction_schedule(16, 4)["rounds"],
        kind=Exact(int, unit="rounds"),
        wrong=[
            Wrong(lambda: reduction_schedule(16, 4)["lower_bound"],
                  "4 is the lower bound max(W/p, D) = max(15/4, 4). The schedule cannot reach it: "
                  "level 1 has 8 additions, which take 2 rounds on 4 processors, and the 3 later "
                  "levels take one round each."),
            Wrong(15, "15 is the work W, the time on ONE processor."),
        ],
        hint="Count rounds level by level: 8, 4, 2, 1 additions.",
    ),
    Question(
        id="03.rounds_8_processors",
        answer_name="rounds_8",
        prompt="The same 16-number sum on 8 processors: how many rounds?",
        answer=lambda: reduction_schedule(16, 8)["rounds"],
        kind=Exact(int, unit="rounds"),
        wrong=[
            Wrong(2, "15/8 rounds would need every addition ready at once; each level waits for "
                     "the one below, and there are 4 levels (the span D)."),
        ],
    ),
    Question(
        id="03.rounds_16_processors",
        answer_name="rounds_16",
        prompt="On 16 processors: how many rounds?",
        answer=lambda: reduction_schedule(16, 16)["rounds"],
        kind=Exact(int, unit="rounds"),
        wrong=[
            Wrong(1, "16 processors cannot do dependent additions at once: the span D = 4 "
                     "levels is a floor no number of processors can break."),
        ],
    ),
    Question(
        id="03.shared_output_race",
        answer_name="race_answer",
        prompt="Threads split the k loop of one C[i,j] and each does C[i,j] += acc directly, "
               "without a reduction. What happens? Pick one:\n" + options_text(SHARED_RACE),
        answer="a",
        kind=Choice(tuple(SHARED_RACE)),
        wrong=[
            Wrong("b", "+= is read, add, write. Two threads can read the same old value and the "
                       "later write overwrites the earlier one. Split k only with a reduction "
                       "(partial sums merged) or atomic adds."),
            Wrong("c", "nothing stops it compiling; the bug appears only at run time, and only "
                       "sometimes, which is what makes races hard to find."),
        ],
    ),
    Question(
        id="03.many_small_messages_ms",
        answer_name="many_ms",
        prompt="1 MB sent as 1000 messages of 1 KB, one after another, L = 10 us, "
               "beta = 20 GB/s (decimal units). Total time in ms (4 significant figures).",
        answer=lambda: message_time(MB, LATENCY, BETA, messages=1000) * 1e3,
        kind=Number(sig=4, unit="ms"),
        wrong=[
            Wrong(lambda: message_time(MB, LATENCY, BETA) * 1e3,
                  "that is one message. Every message pays the start-up latency L again."),
            Wrong(lambda: MB / BETA * 1e3, "that counts only the bytes; 1000 start-ups at 10 us "
                                           "are 10 ms, 200 times more."),
        ],
        hint="1000 x (L + 1 KB / beta).",
    ),
    Question(
        id="03.one_message_us",
        answer_name="one_us",
        prompt="The same 1 MB as a single message. Time in microseconds (exact).",
        answer=lambda: message_time(MB, LATENCY, BETA) * 1e6,
        kind=Number(unit="us"),
        wrong=[
            Wrong(lambda: MB / BETA * 1e6, "the start-up latency L = 10 us is paid once here too."),
            Wrong(lambda: LATENCY * 1e6, "the bytes take Q / beta = 1e6 / 20e9 s = 50 us on top."),
            Wrong(lambda: message_time(8 * MB, LATENCY, BETA) * 1e6,
                  "that treats 20 GB/s as gigabits: beta is in bytes per second here."),
        ],
    ),
    Question(
        id="03.best_chunk",
        prompt=f"Granularity: {ITEMS} items, workers at rates {GRAIN_RATES} items/unit, each "
               f"chunk taken costs {GRAIN_COST} unit. Which chunk size finishes first: "
               f"'1', '4' or '16'?",
        answer=_best_chunk,
        kind=Choice(list(GRAIN_CHUNKS)),
        wrong=[
            Wrong("1", "one item per chunk balances well but pays the claim cost 32 times, more "
                       "than the work each claim brings."),
            Wrong("16", "chunks of 16 are cheap to hand out, but only two workers get one and the "
                        "slow worker's tail decides the end."),
        ],
        hint="Use gl.perfmodel.self_schedule for each chunk size.",
    ),
    Question(
        id="03.speedup_10_workers",
        answer_name="speedup_10",
        prompt="A task goes from 100 ms to 50 ms using 10 equal workers. The speedup (exact).",
        answer=lambda: speedup(100, 50),
        kind=Number(unit="x"),
        wrong=[Wrong(10, "10 is the number of workers, not the measured gain: 100 / 50 = 2.")],
    ),
    Question(
        id="03.efficiency_10_workers",
        answer_name="efficiency_10",
        prompt="The parallel efficiency of that run, as a fraction from 0 to 1 (exact).",
        answer=lambda: efficiency(100, 50, 10),
        kind=Number(),
        wrong=[
            Wrong(lambda: efficiency(100, 50, 10) * 100, "give a fraction, not a percentage."),
            Wrong(0.5, "0.5 is the time ratio 50/100. Efficiency divides the speedup (2) by the "
                       "10 workers."),
            Wrong(2, "2 is the speedup; efficiency is speedup per worker."),
        ],
        explain="Twice as fast can still waste 80% of the resources: latency and utilisation are "
                "different goals.",
    ),
    Question(
        id="03.gemm_8x_total_ms",
        answer_name="total_8x",
        prompt="Prepare 10 ms, GEMM 80 ms, post-process 10 ms, in sequence. The GEMM becomes 8x "
               "faster. The new total in ms (exact).",
        answer=lambda: PREPARE + GEMM / 8 + POST,
        kind=Number(unit="ms"),
        wrong=[
            Wrong(TOTAL / 8, "only the GEMM got faster; the 20 ms around it stay."),
            Wrong(GEMM / 8, "that is the GEMM alone; the user waits for all three stages."),
        ],
    ),
    Question(
        id="03.gemm_8x_speedup",
        answer_name="speedup_8x",
        prompt="The overall speedup of that change (3 significant figures).",
        answer=lambda: amdahl(UNACCELERATED, 8),
        kind=Number(sig=3, unit="x"),
        wrong=[
            Wrong(8, "8x is the GEMM's speedup. The whole pipeline goes from 100 ms to 30 ms."),
            Wrong(lambda: 1 / (1 - UNACCELERATED + UNACCELERATED / 8),
                  "s is the part NOT accelerated (20%), the 80% is divided by 8."),
        ],
    ),
    Question(
        id="03.amdahl_limit",
        answer_name="limit",
        prompt="If the GEMM took no time at all, the overall speedup (exact).",
        answer=lambda: amdahl(UNACCELERATED, math.inf),
        kind=Number(unit="x"),
        wrong=[
            Wrong(lambda: 1 / (1 - UNACCELERATED), "that takes the GEMM's 80% as the part left "
                                                    "over. The 20 ms of preparation and "
                                                    "post-processing remain: 100 / 20 = 5."),
            Wrong(math.inf, "an infinitely fast GEMM does not make the pipeline infinitely fast: "
                            "the 20 ms of preparation and post-processing are still there, so the "
                            "total cannot drop below 20 ms and the speedup stays below 1/s = 5."),
        ],
        explain="The part you do not accelerate sets the ceiling 1/s.",
    ),
    Question(
        id="03.gemm_16x_overhead_ms",
        answer_name="total_16x",
        prompt="Instead of 8x, the GEMM is made 16x faster, but this adds 5 ms of overhead. "
               "The new total in ms (exact).",
        answer=lambda: TOTAL / amdahl(UNACCELERATED, 16, overhead=5 / TOTAL),
        kind=Number(unit="ms"),
        wrong=[
            Wrong(PREPARE + GEMM / 16 + POST, "the 5 ms of added overhead count too."),
        ],
        hint="20 + 80/16 + 5.",
    ),
    Question(
        id="03.gemm_16x_worth_it",
        answer_name="worth_it",
        prompt="Is the 16x version with 5 ms overhead better than the 8x version? True or False.",
        answer=lambda: TOTAL / amdahl(UNACCELERATED, 16, 5 / TOTAL) < PREPARE + GEMM / 8 + POST,
        kind=Exact(bool),
        wrong=[
            Wrong(True, "it saves 5 ms on the GEMM (10 -> 5) and adds 5 ms of overhead: 30 ms both "
                        "ways. Budget every added cost against the time saved."),
        ],
    ),
    Question(
        id="03.amdahl_function",
        answer_name="amdahl_speedup",
        prompt="Write amdahl_speedup(s, p): the overall speedup when a fraction s of the time is "
               "not accelerated and the rest runs p times faster.",
        answer=lambda s, p: 1 / (s + (1 - s) / p),
        kind=Function(cases=_amdahl_cases, compare=Number(rtol=1e-9), hidden=_amdahl_hidden),
        wrong=[
            Wrong(lambda s, p: 1 / ((1 - s) + s / p),
                  "s is the fraction NOT sped up; it is (1 - s) that gets divided by p."),
            Wrong(lambda s, p: s + (1 - s) / p,
                  "that is the new time as a fraction of the old one; the speedup is its inverse."),
        ],
    ),
    Question(
        id="03.round2_reason",
        prompt="Round 2 hands chunks of 4 numbers to whoever is idle first. Why can that reduce "
               "waiting without making the four workers finish at the same moment? Pick one:\n"
               + options_text(ROUND_2_REASON),
        answer="c",
        kind=Choice(tuple(ROUND_2_REASON)),
        wrong=[
            Wrong("a", "equal shares are not equal times: with speeds 1.25, 1, 1 and 0.75 the same "
                       "hand-out leaves a spread of finish times (the lesson's uneven run), and a "
                       "chunk taken late is finished by one worker alone."),
            Wrong("b", "the work is the same 32 additions; handing it out differently changes who "
                       "waits, not how much there is to do."),
        ],
        explain="Dynamic hand-out trades a little scheduling cost for balance; the last chunk "
                "bounds how close the finish times get.",
    ),
    Question(
        id="03.split_writes",
        prompt="How must the outputs be written when a GEMM's work is split over i/j, and when it "
               "is split over k? Pick one:\n" + options_text(SPLIT_WRITES),
        answer="b",
        kind=Choice(tuple(SPLIT_WRITES)),
        wrong=[
            Wrong("a", "over k several threads own parts of the same C[i, j]: C[i, j] += acc from "
                       "each is a read-modify-write race, and updates get lost."),
            Wrong("c", "reading the same inputs needs no coordination (they are read-only); only "
                       "writes to the same output do, and over i/j no two workers write the same "
                       "output."),
        ],
    ),
    Question(
        id="03.amdahl_s_meaning",
        prompt="In Amdahl's law S = 1 / (s + (1 - s) / p), what is s? Pick one:\n"
               + options_text(AMDAHL_S),
        answer="a",
        kind=Choice(tuple(AMDAHL_S)),
        wrong=[
            Wrong("b", "lines of code say nothing about time: a 2000-line script may spend 80% of "
                       "its time in one GEMM call. s is measured on the baseline's clock."),
            Wrong("c", "s is whatever the change leaves unaccelerated, measured as a share of the "
                       "baseline time; in the lesson it is the preparation and post-processing "
                       "(20 of 100 ms), which are not inherently serial."),
        ],
    ),
    Question(
        id="03.gpu_lanes_as_cores",
        prompt="A GPU has 16896 FP32 lanes. Can its speedup over one CPU core be predicted by "
               "counting each lane as a CPU core? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "a GPU lane is not a CPU core: lanes run in groups under shared "
                           "schedulers, at another clock, fed by another memory system, and a "
                           "task's parallelism and data movement decide how many are busy. Compare "
                           "measured times on the same task, stating both machines, the data type "
                           "and what the timer includes.")],
    ),
    Question(
        id="03.block_on_one_sm",
        answer_name="block_on_one_sm",
        prompt="Where do the threads of one block run? Pick one:\n" + options_text(BLOCK_ON_SM),
        answer="c",
        kind=Choice(tuple(BLOCK_ON_SM)),
        wrong=[
            Wrong("a", "a block shares one shared memory and one barrier, and both live in one "
                       "SM: a block never spans SMs. A GPU is filled by launching many blocks "
                       "(at least one per SM: 132 on the H200)."),
            Wrong("b", "the warps of a block all run on the SM that holds the block, since they "
                       "share its shared memory and barrier; other SMs run other blocks."),
        ],
    ),
    Question(
        id="03.warp_of_thread",
        answer_name="warp_of_thread",
        prompt="A block of 16 x 8 threads (blockDim.x = 16). Which warp of the block holds the "
               "thread with threadIdx.x = 3, threadIdx.y = 5? (exact)",
        answer=lambda: warp_of(5 * 16 + 3)[0],
        kind=Number(),
        wrong=[
            Wrong(5, "that is the thread's row, threadIdx.y. Warps are cut from the thread's "
                     "linear id y * 16 + x = 83, 32 ids at a time, so a warp of a 16-wide block "
                     "holds two rows: 83 // 32."),
            Wrong(3, "that is threadIdx.x. Warps are cut from the linear id y * 16 + x, 32 at a "
                     "time."),
        ],
    ),
    Question(
        id="03.column_read_sectors",
        answer_name="column_read_sectors",
        prompt="A float32 matrix with 32 columns, row-major. The 32 lanes of a warp read "
               "a[t, 0], lane t for t = 0..31. How many 32-byte sectors does this one load "
               "fetch? (exact)",
        answer=lambda: len(sectors([t * 32 for t in range(WARP_SIZE)])),
        kind=Number(),
        wrong=[
            Wrong(lambda: len(sectors(range(WARP_SIZE))),
                  "4 sectors is what 32 neighbouring floats (128 contiguous bytes) take: a "
                  "coalesced load. Here lane t's element is a whole row (128 bytes) after lane "
                  "t-1's, so every lane needs a sector of its own."),
        ],
    ),
    Question(
        id="03.bank_ways_stride_32",
        answer_name="bank_ways_32",
        prompt="A shared float32 array s of 32 x 32. Lane t of a warp reads s[t, 5]. How many "
               "passes does this access need (its n-way bank conflict; exact)?",
        answer=lambda: conflict_ways(_column_read(32)),
        kind=Number(),
        wrong=[
            Wrong(1, "different addresses are not different banks: the bank is the word's "
                     "address mod 32, and the words 32 t + 5 all lie in bank 5, so the 32 reads "
                     "are served one after another."),
        ],
    ),
    Question(
        id="03.bank_ways_stride_33",
        answer_name="bank_ways_33",
        prompt="The same read, lane t reading s[t, 5], when s is 32 x 33 (each row padded by one "
               "float). How many passes (exact)?",
        answer=lambda: conflict_ways(_column_read(33)),
        kind=Number(),
        wrong=[
            Wrong(32, "the conflict comes from the stride between lanes, not from the column: "
                      "with rows of 33 floats lane t's word 33 t + 5 lies in bank (t + 5) mod 32, "
                      "a different bank for every lane."),
        ],
    ),
    Question(
        id="03.scheduler_while_waiting",
        answer_name="while_waiting",
        prompt="A warp waits for a load from device memory. What does its warp scheduler do "
               "meanwhile? Pick one:\n" + options_text(WHILE_WAITING),
        answer="b",
        kind=Choice(tuple(WHILE_WAITING)),
        wrong=[
            Wrong("a", "a GPU does not wait like a single in-order core: the scheduler switches "
                       "to another resident warp that is ready, at no cost (each keeps its own "
                       "registers). That is latency hiding, and it needs enough resident warps."),
            Wrong("c", "a warp's instructions issue in order; an instruction that needs the "
                       "load's value cannot pass it. Other warps fill the wait."),
        ],
    ),
    Question(
        id="03.occupancy_warps",
        answer_name="resident_warps",
        prompt="A Hopper SM (65,536 registers, at most 64 warps). Blocks of 256 threads, 128 "
               "registers per thread, no shared memory. How many warps are resident on one SM "
               "(exact)?",
        answer=lambda: _resident_warps(128, 256, 0),
        kind=Number(),
        wrong=[
            Wrong(HOPPER.max_threads // WARP_SIZE,
                  "64 is the SM's maximum. Registers bind first: a block takes 256 x 128 = "
                  "32,768 of the 65,536, so only 2 blocks (16 warps) fit."),
            Wrong(lambda: blocks_per_sm(128, 256, 0, HOPPER)[0],
                  "that is the number of blocks; each has 256 / 32 = 8 warps."),
        ],
    ),
    Question(
        id="03.puzzle_map",
        prompt="Write puzzle_map(a, out), a @cuda.jit kernel: out[i] = a[i] + 10 for the n "
               "float32 elements of a. The puzzle launches blocks of 32 threads, grid ceil(n/32).",
        answer=lambda: solution("03.puzzle_map"),
        kind=puzzles.MAP,
        hint="i = blockIdx.x * blockDim.x + threadIdx.x; only the threads with i < n touch memory.",
        explain="One thread per element, and a guard for the threads of the last block that have "
                "none: the pattern of every kernel that follows.",
    ),
    Question(
        id="03.puzzle_zip",
        prompt="Write puzzle_zip(a, b, out): out[i] = a[i] + b[i], blocks of 32 threads, grid "
               "ceil(n/32).",
        answer=lambda: solution("03.puzzle_zip"),
        kind=puzzles.ZIP,
        hint="The same index i into a, b and out, under the same guard.",
    ),
    Question(
        id="03.puzzle_map2d",
        prompt="Write puzzle_map2d(a, out): out[i, j] = a[i, j] + 10 for a of rows x cols. Blocks "
               "of 16 x 16 threads, grid (ceil(cols/16), ceil(rows/16)), threadIdx.x along the "
               "columns and threadIdx.y along the rows.",
        answer=lambda: solution("03.puzzle_map2d"),
        kind=puzzles.MAP2D,
        hint="i = blockIdx.y * 16 + threadIdx.y is the row, j = blockIdx.x * 16 + threadIdx.x the "
             "column; guard both.",
        explain="threadIdx.x along the columns puts a warp's 32 threads on neighbouring elements "
                "of a row: one coalesced access instead of 32 scattered ones.",
    ),
    Question(
        id="03.puzzle_broadcast",
        prompt="Write puzzle_broadcast(a, b, out): out[i, j] = a[i] + b[j], a of length rows, b "
               "of length cols; the 2-D launch of puzzle_map2d.",
        answer=lambda: solution("03.puzzle_broadcast"),
        kind=puzzles.BROADCAST,
        hint="a goes with the row index i, b with the column index j.",
        explain="Broadcasting is indexing: a is read once per column, b once per row, and no "
                "rows x cols copy of either is ever made.",
    ),
    Question(
        id="03.puzzle_shared",
        prompt="Write puzzle_shared(a, out), blocks of 32 threads: with s[t] = a[32 b + t] in a "
               "32-float shared array of block b (0 past the end of a), out[32 b + t] = s[t] + "
               "s[(t + 1) % 32]; every element of a is read from global memory once.",
        answer=lambda: solution("03.puzzle_shared"),
        kind=puzzles.SHARED,
        hint="Write your slot, cuda.syncthreads(), then read your neighbour's.",
        explain="A barrier separates writing shared memory from reading what other threads "
                "wrote: without it a thread may read a slot before its owner has filled it.",
    ),
    Question(
        id="03.puzzle_pool",
        prompt="Write puzzle_pool(a, out), blocks of 32 threads: out[i] = a[i-2] + a[i-1] + a[i] "
               "(terms before index 0 are 0), with at most n + 2 x (number of blocks) global "
               "reads of a in all.",
        answer=lambda: solution("03.puzzle_pool"),
        kind=puzzles.POOL,
        hint="A shared array of 34 floats: the block's 32 elements and the 2 before them.",
        explain="The halo: a block loads a little more than its own elements once, so that no "
                "thread has to fetch its neighbours' values from global memory again.",
    ),
    Question(
        id="03.puzzle_dot",
        prompt="Write puzzle_dot(a, b, out): out[0] = the sum of a[i] b[i] for n <= 256, one "
               "block of 256 threads, reduced in shared memory.",
        answer=lambda: solution("03.puzzle_dot"),
        kind=puzzles.DOT,
        hint="One product per slot, then 8 levels of pairwise additions with a barrier after "
             "each level; thread 0 writes the result.",
        explain="The reduction tree of section 3 on a GPU: work 255 additions, span 8 levels, "
                "every level separated by a barrier.",
    ),
    Question(
        id="03.puzzle_prefix",
        prompt="Write puzzle_prefix(a, out): out[i] = a[0] + ... + a[i] for n <= 256, one block "
               "of 256 threads, in shared memory.",
        answer=lambda: solution("03.puzzle_prefix"),
        kind=puzzles.PREFIX,
        hint="In step d = 1, 2, ..., 128 thread t >= d adds slot t - d: read it into a local "
             "variable, barrier, write, barrier.",
        explain="This scan does 8 steps of up to 256 additions: more work than the 255 of a "
                "serial loop, but a span of 8 instead of 255.",
    ),
]
