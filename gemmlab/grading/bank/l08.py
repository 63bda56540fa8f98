"""Lesson 08, ping-pong double buffering: serial vs overlapped timelines, the steady-state stage,
what the two buffers hold, what the second buffer costs in shared memory; and the ping-pong
kernel lab."""
from ...labs.kernel_lab import PINGPONG
from ...labs.solutions import solution
from ...perfmodel import pipeline_time
from ...perfmodel.warps import WARP_SIZE, sectors
from ._choices import options_text
from ...judging import Choice, Exact, Number, Question, Wrong

T_L, T_C, N_TILES = 8.0, 12.0, 4          # the seed's exercise, microseconds
BM = BN = 128
BK = 8
BUFFER_OPTIONS = ("input tiles", "output accumulators", "both")
REVERSE_N = 32 * 3 + 7                    # the worked chunk reversal's vector: 4 chunks
REVERSE_CHUNK = 32                        # one block of 32 threads, one element each per chunk


def reverse_barriers(n, chunk=REVERSE_CHUNK, per_chunk=1):
    """Barriers one block passes in the worked chunk reversal: the prologue's, then
    ``per_chunk`` per chunk of the vector."""
    return 1 + per_chunk * -(-n // chunk)


def prefetch_sectors(chunk=REVERSE_CHUNK):
    """32-byte sectors one warp's prefetch ``a[(c + 1) * 32 + t]`` fetches (float32, lanes on
    consecutive elements)."""
    return len(sectors({t: chunk + t for t in range(WARP_SIZE)}))


def pingpong_smem_bytes(bm, bn, bk, buffers=2):
    return buffers * (bm * bk + bk * bn) * 4





TWO_ARRAYS = {
    "a": "yes: with two buffers the load and the compute always run at the same time, because they "
         "touch different arrays and so never wait for each other",
    "b": "no: a GPU cannot load and compute at the same time, since one warp scheduler issues both "
         "and a load can stall the whole SM until its data arrives",
    "c": "only if the hardware lets the load proceed while the compute runs (an asynchronous copy, "
         "or a load whose register is used later) and the code issues it first; two arrays alone "
         "overlap nothing",
}
SWAP_GUARD = {
    "a": "every thread has finished reading it (a barrier or a completion event), and tile k+1 has "
         "landed in the other buffer before anyone reads that",
    "b": "nothing: each thread only reads the elements it loaded itself, so its own program order "
         "already keeps all of its reads before its next writes",
    "c": "the output accumulators must first be copied into the other buffer, since the partial "
         "sums of tile k are kept in the buffer it was computed from",
}

QUESTIONS = [
    Question(
        id="08.serial_us",
        prompt=f"Total time, single buffer: {N_TILES} K-tiles, load T_L = {T_L:g} us, compute "
               f"T_C = {T_C:g} us each, nothing overlapped (ignore sync and write-back) (exact).",
        answer=lambda: pipeline_time(N_TILES, T_L, T_C, buffers=1),
        kind=Number(rtol=1e-6, unit="us"),
        wrong=[
            Wrong(lambda: pipeline_time(N_TILES, T_L, T_C, buffers=2),
                  "that is the double-buffered time; with one buffer the next load must wait "
                  "for the current compute, so every stage costs T_L + T_C."),
            Wrong(T_L + T_C, "that is one stage; there are 4 of them."),
        ],
        hint="n (T_L + T_C).",
    ),
    Question(
        id="08.double_buffer_us",
        prompt=f"Total time with ideal ping-pong double buffering for the same {N_TILES} tiles "
               f"(T_L = {T_L:g} us, T_C = {T_C:g} us) (exact).",
        answer=lambda: pipeline_time(N_TILES, T_L, T_C, buffers=2),
        kind=Number(rtol=1e-6, unit="us"),
        wrong=[
            Wrong(N_TILES * max(T_L, T_C),
                  "4 x 12 = 48 forgets the prologue and the epilogue: the first load has nothing "
                  "to hide behind, and the last compute has no next load to cover."),
            Wrong(T_L + (N_TILES - 1) * max(T_L, T_C),
                  "you counted the prologue load and the overlapped stages but not the final "
                  "compute (the epilogue)."),
            Wrong(N_TILES * (T_L + T_C), "that is the serial time: two buffers let load i+1 run "
                                         "during compute i."),
            Wrong(T_L + N_TILES * max(T_L, T_C) + T_C,
                  "the last compute is counted twice: after the prologue load only n - 1 = 3 "
                  "stages overlap a load with a compute, then the final compute runs alone."),
        ],
        hint="Prologue load, then n - 1 overlapped stages of max(T_L, T_C), then the last compute.",
        explain="T_L + (n-1) max(T_L, T_C) + T_C: the loads are hidden, not removed.",
    ),
    Question(
        id="08.stage_us",
        prompt=f"Steady-state time of one stage with double buffering (T_L = {T_L:g} us, "
               f"T_C = {T_C:g} us), when load and compute really run concurrently (exact).",
        answer=lambda: max(T_L, T_C),
        kind=Number(rtol=1e-6, unit="us"),
        wrong=[
            Wrong(T_L + T_C, "that is a serial stage; overlapped, the shorter one hides under "
                             "the longer one."),
            Wrong(abs(T_C - T_L), "the load does not vanish or subtract: the stage lasts as long "
                                  "as the slower of the two."),
            Wrong(min(T_L, T_C), "the stage waits for the slower of the two, not the faster."),
        ],
        hint="Two things running side by side finish when the slower one does.",
    ),
    Question(
        id="08.load_bound_stage_us",
        prompt=f"The same pipeline with the times swapped: loading a tile takes T_L = {T_C:g} us "
               f"and computing it T_C = {T_L:g} us. Steady-state time of one stage with double "
               f"buffering (exact).",
        answer=lambda: max(T_C, T_L),
        kind=Number(rtol=1e-6, unit="us"),
        wrong=[
            Wrong(T_L, "that is the compute time alone, as if double buffering removed the loads. "
                       "It hides the shorter activity under the longer one; here the load is the "
                       "longer, so every stage still waits for it."),
            Wrong(T_L + T_C, "that is a serial stage; overlapped, the shorter one hides under "
                             "the longer one."),
        ],
        hint="Two things running side by side finish when the slower one does, whichever it is.",
        explain="A load-bound pipeline stays load-bound: double buffering hides the compute "
                "under the loads, and only more bandwidth or fewer bytes make it faster.",
    ),
    Question(
        id="08.buffers_hold",
        prompt=f"What do the ping and pong buffers hold? One of {', '.join(BUFFER_OPTIONS)}.",
        answer=lambda: "input tiles",
        kind=Choice(BUFFER_OPTIONS),
        wrong=[
            Wrong("output accumulators", "the buffers stage the input tiles of A and B; the "
                                         "output partial sums stay in registers, one set, for "
                                         "the whole K loop."),
            Wrong("both", "only the inputs are doubled; the accumulators in registers are one set."),
        ],
    ),
    Question(
        id="08.pingpong_smem_bytes",
        prompt=f"Shared memory of a ping-pong block with BM = BN = {BM}, BK = {BK} (float32, two "
               "buffers, each an A tile BM x BK and a B tile BK x BN; ignore padding).",
        answer=lambda: pingpong_smem_bytes(BM, BN, BK),
        kind=Exact(int, unit="bytes"),
        wrong=[
            Wrong(lambda: pingpong_smem_bytes(BM, BN, BK, buffers=1),
                  "that is one buffer; double buffering doubles the shared memory, which can "
                  "lower how many blocks fit on an SM (occupancy)."),
            Wrong(lambda: pingpong_smem_bytes(BM, BN, BK) // 4, "that counts elements, not bytes."),
        ],
        hint="2 buffers x (BM*BK + BK*BN) x 4 bytes.",
    ),
    Question(
        id="08.lab_pingpong",
        prompt="Write lab_pingpong(A, B, C): lesson 05's tiled kernel (same launch: 16 x 16 "
               "threads, one output each, grid (ceil(N/16), ceil(M/16))) with two shared buffers "
               "per operand: compute tile t from buffer t % 2 while tile t+1 goes into the other, "
               "with at most one syncthreads per K tile plus one after the prologue. In each K "
               "step issue the global loads of tile t+1 (into registers) before the multiply-adds "
               "of tile t, and store them into the other buffer after those.",
        answer=lambda: solution("08.lab_pingpong"),
        kind=PINGPONG,
        hint="Load tile 0 into buffer 0 and sync; then per tile: read the next tile's values "
             "from global memory, compute from the current buffer, store them into the other "
             "buffer, sync.",
        explain="One barrier per tile suffices because, between two barriers, the compute reads "
                "one buffer and the load writes the other.",
    ),
    Question(
        id="08.two_arrays_overlap",
        prompt="A kernel declares two shared-memory buffers and, in its loop, loads tile k+1 into "
               "one while it computes tile k from the other. Does the load overlap the compute? "
               "Pick one:\n" + options_text(TWO_ARRAYS),
        answer="c",
        kind=Choice(tuple(TWO_ARRAYS)),
        wrong=[
            Wrong("a", "a load that blocks the thread until the data arrives still runs before "
                       "the compute, buffers or not. Overlap needs an asynchronous path "
                       "(cp.async, TMA, a copy engine, or loads whose registers are used later) "
                       "and a schedule that issues the load first."),
            Wrong("b", "GPUs do overlap them: other warps compute while one waits, and the "
                       "asynchronous copies of newer GPUs run beside the arithmetic. The question "
                       "is whether this kernel makes it happen."),
        ],
    ),
    Question(
        id="08.swap_guard",
        prompt="In a ping-pong loop, iteration k+1 will overwrite the buffer tile k was computed "
               "from. What must hold first? Pick one:\n" + options_text(SWAP_GUARD),
        answer="a",
        kind=Choice(tuple(SWAP_GUARD)),
        wrong=[
            Wrong("b", "the threads of a block read elements other threads loaded (that is the "
                       "point of a shared tile): without a barrier a fast thread overwrites "
                       "values a slow one has not read yet."),
            Wrong("c", "the buffers hold input tiles; the accumulators stay in registers, one set, "
                       "and never move between the buffers."),
        ],
        explain="Two guards: the reader must finish before the writer reuses a slot, and the "
                "writer must finish before the reader uses the other.",
    ),
    Question(
        id="08.reverse_barriers",
        prompt=f"The worked chunk reversal runs one block of {REVERSE_CHUNK} threads on a vector "
               f"of {REVERSE_N} float32 values, two shared slots. How many barriers "
               "(cuda.syncthreads) does the block pass in all?",
        answer=lambda: reverse_barriers(REVERSE_N),
        kind=Exact(int),
        wrong=[
            Wrong(lambda: reverse_barriers(REVERSE_N, per_chunk=2),
                  "that is two barriers per chunk, what one buffer needs (wait before the "
                  "overwrite, wait before the read). With two slots, one barrier per chunk "
                  "suffices: the store goes into the slot nobody reads, and after the barrier it "
                  "is complete and the old one is free."),
            Wrong(lambda: reverse_barriers(REVERSE_N) - 1,
                  "you left out the prologue's barrier: chunk 0 must be in shared memory before "
                  "the first read."),
        ],
        hint="The prologue's barrier, then one per chunk: ceil(103 / 32) chunks.",
        explain="The simulator's picture of the worked kernel shows the same count, one interval "
                "per chunk.",
    ),
    Question(
        id="08.reverse_prefetch_sectors",
        prompt="In the same kernel the block is one warp; its prefetch a[(c + 1) * 32 + t] has "
               "lane t read element (c + 1) * 32 + t (float32). How many 32-byte sectors of "
               "global memory does that one warp load fetch for a whole chunk?",
        answer=prefetch_sectors,
        kind=Exact(int),
        wrong=[
            Wrong(WARP_SIZE, "one sector per lane is what scattered lanes cost. These 32 lanes "
                             "read 32 neighbouring floats, 128 bytes: the load is coalesced into "
                             "4 sectors."),
            Wrong(1, "a sector is 32 bytes, 8 floats; 32 floats need 4 of them."),
        ],
        hint="32 lanes x 4 bytes, in 32-byte sectors (lesson 03, section 10).",
    ),
]
