"""Lesson 07, ring all-reduce: the root's hot spot, the ring's per-rank bytes 2(1-1/N)S, send vs
send+receive accounting, the 2(N-1) steps and the latency term, busbw vs algbw, and the memory
traffic of an addition done as a pass of its own."""
import numpy as np

from ...collectives import centralized_allreduce, ring_allreduce
from ...collectives.cost import (allreduce_cost, double_binary_tree_cost, allreduce_time, algbw, busbw,
                                 centralized_root_bytes, ring_send_bytes)
from ...collectives.ring_steps import RingPlan
from ...labs.ring import RingLab
from ...labs.solutions import solution
from ...judging import Choice, Exact, Function, Number, Question, Wrong


MIB, GIB = 2**20, 2**30

# The seed's exercise: 8 ranks all-reduce a 256 MiB tensor; its synthesis exercise: 1 GiB.
N, S_MIB, S_GIB = 8, 256, 1
# A link for the timing questions: 5 us per message, 100 GB/s.
ALPHA, BANDWIDTH = 5e-6, 100e9
# An nccl-tests line: all_reduce of 1 GiB on 8 GPUs in 10 ms.
NCCL_BYTES, NCCL_SECONDS = GIB, 10e-3


def _total_bytes_ratio():
    """All ranks' bytes, ring over centralized, read off two simulated runs at N ranks."""
    buffers = [np.zeros(4 * N, dtype=np.float32) for _ in range(N)]
    return ring_allreduce(buffers).total_bytes() / centralized_allreduce(buffers).total_bytes()


def _ring_time_ms(steps=None, nbytes=None):
    cost = allreduce_cost("ring", N, S_MIB * MIB)
    steps = cost.steps if steps is None else steps
    nbytes = cost.bytes if nbytes is None else nbytes
    return (steps * ALPHA + nbytes / BANDWIDTH) * 1e3


def _faster_for_small_messages():
    times = {name: allreduce_time(name, 128, 8 * 2**10, ALPHA, 1 / BANDWIDTH)
             for name in ("ring", "tree")}
    return min(times, key=times.get)


# Lesson 07, section 8.3: two GPUs, 256 MiB of float32 per GPU, the addition as a pass of its own.
PASS_RANKS, PASS_MIB = 2, 256


def _addition_pass_mib(reads=2, writes=1, steps=None):
    """MiB one rank's separate additions move: in each reduce-scatter step the chunk that arrived
    and the rank's own chunk are read and their sum written (the all-gather adds nothing)."""
    plan = RingPlan.split(PASS_RANKS, PASS_MIB * MIB // 4, 4)
    added = [plan.counts[s.recv] * plan.itemsize for s in plan.schedule(0)
             if steps == "all" or s.phase == "reduce-scatter"]
    return (reads + writes) * sum(added) / MIB


def rs_send_chunk(rank, step, n):
    """The chunk rank ``rank`` sends in reduce-scatter step ``step`` (0-based) of an n-rank ring
    in which rank r ends up owning chunk r."""
    return (rank - step - 1) % n


def _rs_cases():
    return [(r, s, n) for n in (2, 3, 4, 7) for s in range(n - 1) for r in range(n)]


def _rs_hidden(rng):
    return [(r, s, n) for n in (int(v) for v in rng.integers(5, 17, size=2))
            for s in range(n - 1) for r in range(n)]


SEND_ONLY = ("the course counts what one rank sends; it receives just as much, and adding the two "
             "doubles the figure. State which one you report.")


WHO_HAS_SUM = ("the root", "every rank")

QUESTIONS = [
    Question(
        id="07.ring_send_mib",
        prompt="8 ranks run a ring all-reduce of a tensor of S = 256 MiB. How many MiB does each "
               "rank send in total (both phases) (exact)?",
        answer=lambda: ring_send_bytes(N, S_MIB * MIB) / MIB,
        kind=Number(rtol=1e-3, unit="MiB"),
        wrong=[
            Wrong(lambda: 2 * ring_send_bytes(N, S_MIB * MIB) / MIB,
                  "that is sent plus received. " + SEND_ONLY),
            Wrong(2 * S_MIB, "2S is the limit for very many ranks. At N = 8 each rank sends "
                             "2(N-1) chunks of S/N: 2(1 - 1/8) S."),
            Wrong(lambda: ring_send_bytes(N, S_MIB * MIB) / 2 / MIB,
                  "that is one phase only. The reduce-scatter sends N-1 chunks, and the "
                  "all-gather sends N-1 more."),
            Wrong(lambda: centralized_root_bytes(N, S_MIB * MIB) / MIB,
                  "2(N-1)S is the traffic through the root of a centralized all-reduce (and also "
                  "what all 8 ring ranks send together). The question asks about one ring rank."),
            Wrong(S_MIB / N, "that is a single chunk, S/N. Chunks shrink as N grows, but a rank "
                             "sends one per step for 2(N-1) steps: the total tends to 2S, not to "
                             "zero."),
        ],
        hint="Each phase has N-1 steps; in each step a rank sends one chunk of S/N.",
        explain="2(N-1) S/N = 2(1-1/N) S: below 2S whatever the number of ranks.",
    ),
    Question(
        id="07.ring_send_recv_mib",
        prompt="Same ring all-reduce (8 ranks, S = 256 MiB): how many MiB does each rank send and "
               "receive together (exact)?",
        answer=lambda: 2 * ring_send_bytes(N, S_MIB * MIB) / MIB,
        kind=Number(rtol=1e-3, unit="MiB"),
        wrong=[
            Wrong(lambda: ring_send_bytes(N, S_MIB * MIB) / MIB,
                  "that counts only what a rank sends. In a ring it also receives one chunk every "
                  "step, as many bytes again."),
            Wrong(4 * S_MIB, "4S is the limit for very many ranks; at 8 ranks it is 4(1 - 1/8) S."),
        ],
        hint="Every step, a rank sends one chunk and receives one chunk of the same size.",
        explain="Send + receive = 4(1-1/N) S: twice the send-only figure, so always say which.",
    ),
    Question(
        id="07.ring_send_gib",
        prompt="A ring all-reduce of a 1 GiB tensor over 8 ranks: how many GiB does each rank "
               "send (exact)?",
        answer=lambda: ring_send_bytes(N, S_GIB * GIB) / GIB,
        kind=Number(rtol=1e-3, unit="GiB"),
        wrong=[
            Wrong(lambda: 2 * ring_send_bytes(N, S_GIB * GIB) / GIB,
                  "that is sent plus received. " + SEND_ONLY),
            Wrong(2 * S_GIB, "2S is only the limit as N grows; at 8 ranks it is 2(1 - 1/8) S."),
            Wrong(lambda: ring_send_bytes(N, S_GIB * GIB) / 2 / GIB,
                  "that is one phase (the reduce-scatter); the all-gather sends as much again."),
        ],
        hint="2(1 - 1/N) S with S = 1 GiB.",
        explain="1.75 GiB sent per rank, and as much received: a report that counts both "
                "says 3.5 GiB for the same run.",
    ),
    Question(
        id="07.root_traffic_mib",
        prompt="A centralized all-reduce (reduce to a root, then broadcast from it) of S = 256 MiB "
               "over 8 ranks: how many MiB pass through the root, received plus sent (exact)?",
        answer=lambda: centralized_root_bytes(N, S_MIB * MIB) / MIB,
        kind=Number(rtol=1e-3, unit="MiB"),
        wrong=[
            Wrong(lambda: centralized_root_bytes(N, S_MIB * MIB) / 2 / MIB,
                  "that is one direction only: the root receives (N-1) S in the reduce and sends "
                  "(N-1) S in the broadcast."),
            Wrong(2 * S_MIB, "the root does not handle one buffer each way but one from, and one "
                             "to, each of the other N-1 ranks."),
            Wrong(lambda: ring_send_bytes(N, S_MIB * MIB) / MIB,
                  "that is what a ring rank sends. Here one root does all the receiving and "
                  "sending."),
        ],
        hint="The root receives one full buffer from each other rank, then sends one to each.",
        explain="2(N-1) S through one rank: it grows with N, which is the hot spot the ring "
                "removes.",
    ),
    Question(
        id="07.ring_steps",
        prompt="How many communication steps does a ring all-reduce over 128 ranks take (both "
               "phases)?",
        answer=lambda: allreduce_cost("ring", 128, 1).steps,
        kind=Exact(int),
        wrong=[
            Wrong(127, "that is one phase. The reduce-scatter takes N-1 steps and the all-gather "
                       "N-1 more."),
            Wrong(7, "log2 N steps is a tree or recursive doubling. The ring passes chunks one "
                     "neighbour at a time."),
            Wrong(256, "a chunk needs N-1 hops, not N, to visit all N ranks: 2(N-1) steps."),
        ],
        hint="N-1 steps of reduce-scatter, then N-1 of all-gather.",
        explain="2(N-1) steps: the latency term grows with N even though the bytes do not.",
    ),
    Question(
        id="07.after_reduce_scatter",
        prompt="After the reduce-scatter phase of a ring all-reduce, what does each rank hold? "
               "'whole sum', 'one summed chunk' or 'partial chunks'.",
        answer="one summed chunk",
        kind=Choice(("whole sum", "one summed chunk", "partial chunks")),
        wrong=[
            Wrong("whole sum", "not yet: each rank holds only one chunk that sums all ranks' "
                               "contributions. The all-gather still has to spread the others."),
            Wrong("partial chunks", "after N-1 steps one chunk on every rank is complete; the "
                                    "rank's other chunks are stale and get overwritten in the "
                                    "all-gather."),
        ],
        hint="Follow one chunk: after N-1 hops it has visited every rank.",
        explain="Reduce (each chunk summed) + scatter (the summed chunks spread one per rank).",
    ),
    Question(
        id="07.allgather_adds",
        prompt="Does a rank add anything to what it receives during the all-gather phase? "
               "True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "the all-gather only forwards chunks that are already complete sums; "
                           "all the adding happened in the reduce-scatter.")],
        hint="What is left to add once every chunk is summed somewhere?",
        explain="Phase 1 adds, phase 2 copies: the gamma (compute) term belongs to phase 1 only.",
    ),
    Question(
        id="07.total_bytes_ratio",
        prompt="At 8 ranks, divide the bytes that all ranks of a ring all-reduce send together by "
               "the bytes that all ranks of a centralized all-reduce send together (exact).",
        answer=_total_bytes_ratio,
        kind=Number(rtol=1e-3),
        wrong=[
            Wrong(lambda: ring_send_bytes(N, 1.0) / centralized_root_bytes(N, 1.0),
                  "that compares one ring rank with the centralized root: that is the load "
                  "balance, the ring's real gain. The totals are the same."),
            Wrong(lambda: ring_send_bytes(N, 1.0) / ((N - 1) * 1.0),
                  "that compares one ring rank with what the root sends. Add up every rank: the "
                  "ring does not send fewer bytes in total, it spreads them evenly."),
        ],
        hint="Ring: N ranks x 2(N-1)/N S each. Centralized: N-1 ranks send S, the root sends "
             "(N-1) S.",
        explain="Both move 2(N-1) S in total. The ring wins by spreading the load: no rank "
                "sends more than 2S, where the centralized root sends (N-1) S.",
    ),
    Question(
        id="07.busbw_gbs",
        prompt="nccl-tests runs all_reduce on 8 GPUs with a 1 GiB (1073741824-byte) buffer and "
               "measures 10 ms. What bus bandwidth (busbw) does it print, in GB/s (10^9 B/s), to 4 "
               "significant figures?",
        answer=lambda: busbw("allreduce", N, NCCL_BYTES, NCCL_SECONDS),
        kind=Number(sig=4, rtol=2e-3, unit="GB/s"),
        wrong=[
            Wrong(lambda: algbw(NCCL_BYTES, NCCL_SECONDS),
                  "that is algbw, size / time. busbw multiplies it by 2(N-1)/N, the share of the "
                  "buffer each rank must send, so it can be compared with link bandwidth."),
            Wrong(lambda: busbw("allreduce", N, NCCL_BYTES, NCCL_SECONDS) * 1e9 / GIB,
                  "that is in GiB/s; nccl-tests reports GB/s, 10^9 bytes per second."),
            Wrong(lambda: 2 * algbw(NCCL_BYTES, NCCL_SECONDS),
                  "the factor is 2(N-1)/N, not 2: at 8 ranks, 1.75."),
        ],
        hint="busbw = algbw x 2(N-1)/N, with algbw = bytes / seconds.",
        explain="busbw does not depend on N for an ideal ring: compare it with the link's "
                "bandwidth.",
    ),
    Question(
        id="07.ring_time_ms",
        prompt="With the alpha-beta model, alpha = 5 us per step and a bandwidth of 100 GB/s "
               "(beta = 1/(100e9) s per byte), how long does a ring all-reduce of S = 256 MiB over "
               "8 ranks take, in ms? Ignore the cost of the additions (3 significant figures).",
        answer=_ring_time_ms,
        kind=Number(sig=3, rtol=2e-3, unit="ms"),
        wrong=[
            Wrong(lambda: _ring_time_ms(steps=0),
                  "that leaves out the latency term: every one of the 2(N-1) steps pays alpha."),
            Wrong(lambda: _ring_time_ms(steps=N - 1), "there are 2(N-1) steps, not N-1."),
            Wrong(lambda: _ring_time_ms(nbytes=S_MIB * MIB * 2.0),
                  "2S is the limit for many ranks; at 8 ranks each rank sends 2(1 - 1/8) S."),
            Wrong(lambda: _ring_time_ms(nbytes=4 * (1 - 1 / N) * S_MIB * MIB),
                  "sending and receiving overlap (full duplex): the time follows the bytes sent, "
                  "2(1-1/N) S, not sent plus received."),
        ],
        hint="T = 2(N-1) alpha + 2(N-1)/N S beta, with S in bytes (256 x 2^20).",
        explain="At this size the bandwidth term dominates; the latency term is 70 us.",
    ),
    Question(
        id="07.small_message_winner",
        prompt="Same link (alpha = 5 us, 100 GB/s), 128 ranks, an all-reduce of only 8 KiB. Which "
               "is faster under the model: 'ring' or 'tree' (binomial reduce then broadcast)?",
        answer=_faster_for_small_messages,
        kind=Choice(("ring", "tree")),
        wrong=[Wrong("ring", "the ring's bytes are smallest, but it takes 2(N-1) = 254 steps of "
                             "5 us each; the tree takes 2 log2(128) = 14. For small messages the "
                             "latency term decides.")],
        hint="Compare 254 alpha with 14 alpha; 8 KiB at 100 GB/s is well under a microsecond.",
        explain="Bytes approaching 2S says nothing about latency: small messages favour log N "
                "algorithms.",
    ),
    Question(
        id="07.alpha_term_trend",
        prompt="For a ring all-reduce with S fixed, as N grows, the beta term tends to 2 S beta. "
               "What does the alpha term do: 'constant', 'grows' or 'shrinks'?",
        answer="grows",
        kind=Choice(("constant", "grows", "shrinks")),
        wrong=[
            Wrong("constant", "the bytes per rank level off, but the number of steps, 2(N-1), "
                              "keeps growing, and each step pays alpha."),
            Wrong("shrinks", "chunks shrink as N grows, but each step still pays the full fixed "
                             "cost alpha, and there are 2(N-1) steps."),
        ],
        hint="Count the steps.",
        explain="2(N-1) alpha: linear in N. That is why large clusters use trees or hierarchical "
                "rings for small messages.",
    ),
    Question(
        id="07.addition_pass_mib",
        prompt="Our ring over NCCL's send/recv adds each arriving chunk in a pass of its own (the "
               "chunk that arrived plus the rank's own chunk, written back). On 2 GPUs with "
               "S = 256 MiB per GPU, how many MiB does that pass move through one GPU's memory "
               "per all-reduce, reads plus writes (3 significant figures)?",
        answer=_addition_pass_mib,
        kind=Number(sig=3, rtol=2e-3, unit="MiB"),
        wrong=[
            Wrong(lambda: _addition_pass_mib(reads=0),
                  "that is only the sum written back; the addition also reads two chunks, the "
                  "one that arrived and the rank's own."),
            Wrong(lambda: _addition_pass_mib(writes=0),
                  "that counts the two chunks read; the sum is written back too."),
            Wrong(lambda: _addition_pass_mib(steps="all"),
                  "that adds in the all-gather too (it only copies), or adds the whole buffer: "
                  "the additions are the reduce-scatter's N-1 steps, one chunk of S/N each."),
        ],
        hint="At N = 2 the reduce-scatter has one step and adds one chunk of S/2: read two "
             "chunks, write one.",
        explain="About 160 us at the 2.5 TB/s this addition ran at on an H200: the 15% by which "
                "that ring trailed NCCL (lesson 07, section 8.3). The NVLink ring reads the "
                "arriving chunk once and adds it in registers, so the addition needs no pass of "
                "its own.",
    ),
    Question(
        id="07.rs_send_chunk",
        prompt="Write rs_send_chunk(rank, step, n): the chunk that rank `rank` sends to rank+1 in "
               "reduce-scatter step `step` (0-based) of an n-rank ring, such that at the end rank "
               "r holds chunk r summed over all ranks.",
        answer=rs_send_chunk,
        kind=Function(cases=_rs_cases, compare=Number(rtol=0), hidden=_rs_hidden),
        wrong=[
            Wrong(lambda rank, step, n: (rank - step) % n,
                  "this is a valid ring, but rank r ends up owning chunk r+1, not chunk r: shift "
                  "the schedule by one."),
            Wrong(lambda rank, step, n: (rank + step) % n,
                  "a rank must forward the chunk it has just received (plus its own part). With "
                  "+step it sends a chunk its left neighbour never sent it, so the partial sums "
                  "never grow."),
        ],
        hint="At step s a rank forwards what it received at step s-1 from rank-1; work backwards "
             "from the last step, where rank r-1 must send chunk r to rank r.",
        explain="Chunk c starts at rank c+1 and travels c+1 -> c+2 -> ... -> c, collecting every "
                "rank on the way.",
    ),
    Question(
        id="07.lab_ring",
        prompt="Lab: write ring_allreduce(comm, x), the program of one rank: x is this rank's "
               "1-D array; return the elementwise sum of every rank's x. Use comm.rank, "
               "comm.size, comm.send(dst, a) (returns once rank dst has received a), "
               "comm.recv(src) -> array and comm.sendrecv(a, dst, src) -> array: N-1 "
               "reduce-scatter steps, then N-1 all-gather steps, one chunk per step.",
        answer=lambda: solution("07.lab_ring", name="ring_allreduce"),
        kind=RingLab(),
        answer_name="ring_allreduce",
        hint="Cut x with np.array_split(x, comm.size). In reduce-scatter step s, rank r sends "
             "chunk r-s-1 to r+1 and adds what it receives from r-1 to chunk r-s-2; in "
             "all-gather step s it sends chunk r-s and stores what arrives in chunk r-s-1.",
        explain="Every rank moved 2(N-1) chunks of S/N, always to the same neighbour: no rank is "
                "a hot spot, and no rank ever holds more than its own buffer.",
    ),
    Question(
        id="07.allreduce_who",
        prompt="After an all-reduce, which ranks hold the sum: 'the root' or 'every rank'?",
        answer="every rank",
        kind=Choice(WHO_HAS_SUM),
        wrong=[Wrong("the root", "that is a reduce. An all-reduce leaves the sum on every "
                                 "participating rank: reduce then broadcast, or reduce-scatter "
                                 "then all-gather.")],
    ),
    Question(
        id="07.ring_send_4_ranks_s",
        prompt="A ring all-reduce on N = 4 ranks of a buffer of S bytes: how many times S does each "
               "rank send (exact)?",
        answer=lambda: ring_send_bytes(4, 1.0),
        kind=Number(unit="S"),
        wrong=[
            Wrong(2, "2S is the limit for very many ranks; at N = 4 a rank sends 2(N - 1) chunks "
                     "of S/N: 1.5 S."),
            Wrong(0.75, "that is one phase (N - 1 chunks of S/N); the all-gather sends as many "
                        "again."),
            Wrong(3, "that is sent plus received; the course counts what a rank sends."),
        ],
    ),
    Question(
        id="07.ring_send_128_ranks_s",
        prompt="The same ring all-reduce on N = 128 ranks: how many times S does each rank send "
               "(exact)?",
        answer=lambda: ring_send_bytes(128, 1.0),
        kind=Number(unit="S"),
        wrong=[
            Wrong(2, "close to the limit, but not it: 2(1 - 1/128) S = 1.984375 S. The per-rank "
                     "bytes approach 2S without reaching it."),
            Wrong(lambda: 2 * ring_send_bytes(128, 1.0), "that is sent plus received."),
            Wrong(lambda: 2 / 128, "that is two chunks of S/N. Chunks shrink as N grows, but a "
                                   "rank sends 2(N - 1) of them."),
        ],
        explain="From 1.5 S at 4 ranks to 1.984375 S at 128: nearly constant bytes, while the "
                "number of steps, 2(N - 1), keeps growing.",
    ),
    Question(
        id="07.double_tree_bytes_s",
        answer_name="double_tree_bytes_s",
        prompt="NCCL's pipelined double binary tree all-reduce on N = 64 ranks, the message cut into "
               "k = 1000 chunks: the bytes on its critical path, in units of S (3 significant "
               "figures). Each of its two phases (reduce, broadcast) takes floor(log2 N) + k - 1 "
               "rounds, each moving S / k through the busiest port.",
        answer=lambda: double_binary_tree_cost(64, 1.0, 1000).bytes,
        kind=Number(sig=3, unit="S"),
        wrong=[
            Wrong(lambda: allreduce_cost("tree", 64, 1.0).bytes,
                  "2 log2 N S is the binomial tree that sends the whole message at every level. "
                  "NCCL pipelines its trees in chunks, so all levels work at once: about 2S, "
                  "the ring's bandwidth, not 2 log2 N S."),
            Wrong(lambda: allreduce_cost("ring", 64, 1.0).bytes,
                  "that is the ring's 2(N-1)/N S; the pipelined tree pays a little more, "
                  "2(d + k - 1)/k S with d = 6."),
        ],
    ),
]
