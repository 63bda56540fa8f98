"""The course's key terms in English and in Chinese, as the (Chinese) course material writes them.

The lessons are in English and the material they follow is in Chinese; a student who reads both
needs the pairs. Each Chinese term is spelled exactly as in the material (a test checks that it
occurs there); a few terms the material keeps in English (All-Reduce, warp, SRAM) are listed with
that spelling, and a term the material does not have at all (the lessons add it: FP8 scaling, the
Hopper features, pipeline schedules) has :data:`NOT_IN_MATERIAL` in place of a Chinese term (a test
checks that the material really does not name it). A term a lesson defines in bold also names
that lesson (``lesson``); a test checks the definition is there, before any use.

    >>> import gemmlab as gl
    >>> gl.glossary.lookup("tile").chinese
    '分块'
    >>> gl.glossary.lookup("部分和").english
    'partial sum'

``python -m gemmlab.glossary docs/glossary.md`` writes the glossary page from this table.
"""
import difflib
import sys
from dataclasses import dataclass


NOT_IN_MATERIAL = "—"     # in place of a Chinese term: the course material has none for it


@dataclass(frozen=True)
class Term:
    english: str
    chinese: str
    meaning: str
    topic: str
    lesson: str = ""        # the lesson that defines it in bold ("03", "12b"), where one does

    def __str__(self):
        return f"{self.english} · {self.chinese}: {self.meaning}"


_TABLE = {
    "Numbers and precision": [
        ("floating point", "浮点", "a number stored as sign, significand and a power of two"),
        ("exponent bits", "指数位", "the field that sets a float's range (its power of two)"),
        ("significand", "有效数字", "the digits of a float; their count sets its precision"),
        ("single precision (FP32)", "单精度", "the 32-bit float: 8 exponent bits, 23 mantissa bits"),
        ("half precision (FP16)", "半精度", "the 16-bit float: 5 exponent bits, 10 mantissa bits"),
        ("rounding", "舍入", "choosing a representable number for a result that does not fit"),
        ("round to nearest, ties to even", "就近舍入、中点取偶",
         "the default rule: the nearest number, and on a tie the one whose last bit is 0"),
        ("spacing between neighbours", "相邻间隔", "the gap from one float to the next; it "
         "doubles with every power of two (2 for FP16 in [2048, 4096))"),
        ("overflow", "溢出", "a result too large for the format: inf in FP32, FP16, BF16 and FP8 "
         "E5M2; FP8 E4M3 has no inf, so a non-saturating cast (ml_dtypes, PyTorch) gives NaN in FP8 "
         "E4M3, while CUDA's saturating conversion (__NV_SATFINITE) clamps to ±448"),
        ("saturating conversion", NOT_IN_MATERIAL, "a conversion that clamps a value beyond the "
         "format's largest finite number to that number: CUDA's __NV_SATFINITE turns an FP8 E4M3 "
         "overflow, and ±inf, into ±448; NaN stays NaN", "01"),
        ("non-saturating conversion", NOT_IN_MATERIAL, "a conversion that rounds to nearest even and "
         "lets a value past the largest finite number overflow: NaN in FP8 E4M3, which has no inf "
         "(ml_dtypes' and PyTorch's casts), inf in E5M2", "01"),
        ("amax", NOT_IN_MATERIAL, "a tensor's largest absolute value (FP8 training usually takes it "
         "over recent steps); the tensor's FP8 scale is computed from it", "01"),
        ("per-tensor scale", NOT_IN_MATERIAL, "one factor s for a whole tensor, s = 448 / amax for "
         "E4M3, multiplied in before the FP8 cast so that the largest value lands on the largest "
         "finite number, and divided out after the GEMM", "01"),
        ("mixed precision", "混合精度", "low-precision inputs with a higher-precision accumulator"),
        ("accumulator", "累加器", "the variable a sum is built in; its precision bounds the error"),
        ("out of memory (OOM)", "显存不足", "weights, activations and optimizer state do not fit "
         "in the GPU's memory"),
    ],
    "From neurons to GEMM": [
        ("tensor", "张量", "a multi-dimensional array of numbers"),
        ("token", "词元", "the unit of text a language model reads and writes"),
        ("activation", "激活", "a layer's output, the next layer's input"),
        ("GEMM (general matrix multiplication)", "通用矩阵乘法",
         "C = alpha A B + beta C, the operation this course makes fast"),
        ("matrix multiplication", "矩阵乘法", "C = A B: each output is a dot product"),
        ("dot product", "点积", "the sum of the products of two vectors' elements"),
        ("stride", "步长", "how many elements apart two neighbours along one dimension are stored"),
        ("multiply-accumulate", "乘加", "one multiply and one add into an accumulator (2 FLOPs)"),
        ("operator", "算子", "one operation of a model (a matrix product, an activation) as a "
         "library runs it"),
        ("kernel", "核函数", "a function that many GPU threads run at once"),
        ("megawatt (MW)", "兆瓦", "power, a rate of using energy: 10^6 W; not a measure of compute"),
        ("kilowatt-hour (kWh)", "度", "energy: 1 kW for one hour; the 度 of an electricity bill is "
         "1 kWh (10^9 kWh = 1 TWh)"),
    ],
    "Parallel work and speedup": [
        ("parallel", "并行", "work done at the same time by several workers"),
        ("serial", "串行", "work done one step after the other"),
        ("reduction", "归约", "combining many values into one (a sum, a maximum)"),
        ("balanced tree", "平衡树", "the reduction order that adds pairs level by level"),
        ("work", "工作量", "W: the total number of operations"),
        ("span (critical path length)", "关键路径长度",
         "D: the longest chain of dependent operations; no number of workers beats it"),
        ("speedup", "加速比", "old time divided by new time"),
        ("Amdahl's law", "阿姆达尔定律",
         "the part left unaccelerated bounds the overall speedup: 1 / (s + (1 - s) / p)"),
        ("throughput", "吞吐量", "work completed per unit of time"),
        ("latency", "延迟", "the time one operation or message takes from start to end"),
        ("strong scaling", "强扩展", "a fixed total problem on more processors: ideally p times "
         "faster"),
        ("weak scaling", "弱扩展", "the problem grown with the processors so each keeps the same "
         "share: ideally the same time"),
    ],
    "The GPU's execution model": [
        ("bank conflict", "存储冲突", "lanes of one warp instruction asking one shared-memory bank "
         "for different words: the access takes as many passes as the busiest bank has words "
         "(lane t reading s[t, c] of rows of 32 floats: 32-way; of 33: conflict-free)", "03"),
        ("coalescing", "访存合并", "the lanes of one warp instruction reading neighbouring "
         "addresses, merged into few 32-byte sectors (32 neighbouring floats: 4 sectors; a row "
         "apart: 32)", "03"),
        ("lane", "lane", "one thread's slot in an SM's arithmetic units, and a thread's place "
         "(0-31) in its warp (kept in English in the material)", "03"),
        ("latency hiding", "隐藏搬运延迟", "covering one operation's wait (a load) with other "
         "work: other resident warps' instructions, or the same warp's independent ones (double "
         "buffering)", "03"),
        ("local memory", "local memory", "a thread's private part of device memory, where values "
         "that do not fit in registers go (kept in English in the material)"),
        ("occupancy", "占用率", "the warps an SM holds at once, of its maximum; the registers and "
         "shared memory each block needs set it", "03"),
        ("register spill", "spill", "values the compiler moves from registers to local memory "
         "when a thread needs more registers than it may have; ptxas reports the bytes"),
        ("shared-memory bank", "bank", "one of the 32 parts shared memory is split into, 4 bytes "
         "wide: word w lives in bank w mod 32, and a bank delivers one word per pass", "03"),
        ("streaming multiprocessor (SM)", "SM", "one of the GPU's independent processors, with "
         "its own registers, shared memory, warp schedulers and lanes; a block runs on one SM "
         "(the H200 has 132)", "03"),
        ("warp", "warp", "32 threads of consecutive ids scheduled together, one instruction at a "
         "time for the lanes that are active; since Volta each thread has its own program "
         "counter and may diverge, so code must not assume lockstep (kept in English in the "
         "material)", "03"),
        ("warp scheduler", "调度", "the unit of an SM that issues, each clock, an instruction of "
         "one of its resident warps that is ready; switching warps costs nothing", "03"),
    ],
    "Roofline and data movement": [
        ("bandwidth", "带宽", "bytes moved per second between two levels of memory"),
        ("peak", "峰值", "the most FLOP/s (or bytes/s) the hardware can deliver"),
        ("arithmetic intensity", "计算强度", "FLOPs per byte moved: I = F / Q"),
        ("roofline model", "屋顶线模型",
         "attainable FLOP/s = min(peak, I x bandwidth): which of the two limits bites"),
        ("ridge point", "转折点", "I* = P / B, the intensity where the two roofs meet: left of it a "
         "kernel is bandwidth-bound, right of it it can be compute-bound (H200: 13.96 FLOP/B on "
         "FP32 CUDA cores, about 206 on FP16 Tensor Cores)", "04"),
        ("decode", NOT_IN_MATERIAL, "a language model's generation step: one new token per request, "
         "so a layer's GEMM has M = the number of requests in the batch; at M = 1 to 64 (FP16, "
         "K = N = 4096: at most 62 FLOP/B) it sits far left of the H200's Tensor Core ridge, "
         "memory-bound, its time set by reading the weights", "04"),
        ("compute-bound", "计算受限", "limited by arithmetic: F / P is the larger time"),
        ("bandwidth-bound", "带宽受限", "limited by how fast memory delivers bytes: Q / B is the "
         "larger of the two roofline times"),
        ("memory-bound", "访存受限", "limited by memory: either by its bandwidth (bandwidth-bound) "
         "or by waiting on its latency with too few requests in flight"),
        ("high-bandwidth memory (HBM)", "高带宽内存", "one kind of device memory: stacked DRAM dies "
         "on a wide interface beside the chip, used by high-end AI GPUs; not every GPU has it "
         "(many use GDDR)"),
        ("device memory", "显存", "the GPU's own memory, distinct from the CPU's main memory"),
        ("on-chip", "片上", "inside the GPU chip: registers, shared memory, caches"),
        ("cache", "缓存", "a small fast memory that keeps recently used data"),
        ("data reuse", "数据复用", "using a value loaded once for many operations"),
        ("operator fusion", "算子融合",
         "running two operators in one kernel so the intermediate never goes to memory"),
    ],
    "Tiled GEMM and the GPU": [
        ("tile", "分块", "a block of a matrix loaded once and reused for many products"),
        ("contraction dimension (K)", "收缩维",
         "the dimension summed over in C = A B, shared by A's columns and B's rows"),
        ("partial sum", "部分和", "a sum over part of the contraction dimension"),
        ("thread", "线程", "one of the many workers that run a kernel"),
        ("thread block", "线程块", "threads that run together and share one shared memory"),
        ("shared memory", "共享内存", "on-chip memory shared by the threads of one block"),
        ("SRAM", "SRAM", "static RAM, the fast memory built on the chip; shared memory is one "
         "part of it, beside the L1 cache and the register file, each with its own rules"),
        ("register", "寄存器", "a thread's own fastest storage; accumulators live here"),
        ("synchronization", "同步", "making threads wait for each other (a barrier)"),
    ],
    "Pipelines and micro-kernels": [
        ("pipeline", "流水线", "stages that overlap: loading the next piece while computing this one"),
        ("prefetch", "预取", "loading data before it is needed"),
        ("Tensor Memory Accelerator (TMA)", NOT_IN_MATERIAL, "Hopper's copy engine in each SM: one "
         "thread issues a bulk copy of a tile box of a global matrix, and the engine moves the whole "
         "tile into shared memory (swizzled if asked), or back out, while the threads go on", "08"),
        ("double buffering", "双缓冲",
         "two buffers: compute from one while the other is filled"),
        ("buffer slot", "槽位", "one of the places a tile can be loaded into; double buffering "
         "has two (the material calls them ping and pong)"),
        ("steady state", "稳态", "the middle of a pipeline, where loading and computing overlap"),
        ("pipeline prologue", "流水线序幕", "the first load, before anything can be computed"),
        ("two-level double buffering", "两级双缓冲",
         "double buffering at both the shared-memory and the register level"),
        ("outer product", "外积", "a column times a row: every pair multiplied, a whole block of "
         "outputs updated at once"),
        ("inner product", "内积", "a row times a column: one output, summed along K"),
        ("micro-kernel", "微内核", "the innermost loop of a GEMM: one thread's block of outputs"),
        ("Tensor Core", "张量核心", "a unit that multiplies small matrices: one warp's D = A B + C "
         "on a fragment per step (a 16 x 16 x 16 WMMA step runs as two HMMA instructions on the "
         "H200)", "00"),
        ("warpgroup", NOT_IN_MATERIAL, "four consecutive warps of a block (128 threads, the first "
         "warp's index a multiple of 4) that issue Hopper's wgmma instructions together", "12"),
        ("wgmma (warpgroup MMA)", NOT_IN_MATERIAL, "Hopper's (sm_90a) asynchronous MMA instruction: "
         "a warpgroup computes D = A B + D on a 64 x N x 16 block (FP16/BF16, N up to 256) with B, "
         "and A or not, read straight from shared memory, and waits for a group of them only when "
         "it needs the results", "12"),
        ("Tensor Memory (TMEM)", NOT_IN_MATERIAL, "Blackwell's (sm_100a: B200) memory beside each "
         "SM's Tensor Cores, 128 lanes by 512 columns of 32-bit cells (256 KiB), where tcgen05.mma, "
         "the instruction that follows wgmma there, keeps its accumulator instead of registers",
         "12"),
        ("mbarrier", NOT_IN_MATERIAL, "a barrier object in shared memory that counts arrivals and, for "
         "a TMA copy, bytes; it completes a phase when both reach what was expected, a waiter "
         "names the phase by its parity (0 or 1), and only the threads that wait on it wait",
         "12b"),
        ("warp specialisation", NOT_IN_MATERIAL, "giving the warpgroups of one block different jobs: "
         "a producer that only issues copies and consumers that only compute, handing buffer "
         "slots back and forth through mbarriers", "12b"),
        ("swizzle", NOT_IN_MATERIAL, "a permutation of the 16-byte chunks of each row of a tile in "
         "shared memory (in the 128-byte pattern, chunk c of row r goes to c XOR (r mod 8)) so "
         "that the rows of one column of chunks fall in different banks; the TMA writes it, "
         "wgmma reads it", "12b"),
        ("setmaxnreg", NOT_IN_MATERIAL, "Hopper's PTX instruction that changes, while the kernel "
         "runs, how many registers each thread of a warpgroup may hold: a producer gives registers "
         "up (.dec), consumers take them (.inc)", "12b"),
        ("stall reason", "stall", "what a warp that could not issue an instruction was waiting "
         "for, as a profiler samples it (Nsight Compute: short_scoreboard, long_scoreboard, "
         "barrier, wait, math_pipe_throttle; kept in English in the material)", "12b"),
    ],
    "Distributed parallelism": [
        ("shard", "分片", "the part of a tensor one rank holds"),
        ("column parallel", "列并行",
         "split the weight along its output dimension N: each rank computes some output columns"),
        ("row parallel", "行并行",
         "split the weight along its contraction dimension K: each rank computes a partial sum"),
        ("output dimension (N)", "输出维", "the dimension of the weight that becomes the output's"),
        ("hidden dimension", "隐藏维", "the model width D that layers read and write"),
        ("element-wise", "逐元素", "applied to each element on its own (GELU): works on shards"),
        ("concatenation", "拼接", "putting output shards side by side"),
        ("collective communication", "集合通信",
         "an exchange in which every rank of a group takes part"),
        ("communication volume", "通信量", "the bytes one rank sends (the material's convention; "
         "it receives as many again, so say so when you count both)"),
        ("All-Reduce", "All-Reduce", "every rank ends with the sum of all ranks' data "
         "(kept in English in the material, which calls it a global sum, 全局求和)"),
        ("Reduce-Scatter", "Reduce-Scatter", "every rank ends with one summed chunk"),
        ("All-Gather", "All-Gather", "every rank ends with every rank's chunk"),
        ("logical ring", "逻辑环", "ranks ordered in a cycle; each sends only to the next"),
        ("binomial tree", NOT_IN_MATERIAL, "a reduce (or broadcast) in ceil(log2 N) rounds, ranks "
         "pairing at distances 1, 2, 4, ...; not pipelined, so each round sends the whole "
         "message: an all-reduce (reduce, then broadcast) puts 2 ceil(log2 N) S bytes on its "
         "critical path", "07"),
        ("double binary tree", NOT_IN_MATERIAL, "NCCL's tree all-reduce: two binary trees each carry "
         "half the data, every rank is an inner node of at most one of them, and the message "
         "moves in k chunks so that all levels work at once: about 2S bytes, like the ring, with a "
         "latency that grows with log2 N, not N", "07"),
        ("tensor parallelism (TP)", "张量并行", "splitting the weights within each layer"),
        ("context parallelism (CP)", "上下文并行", "splitting one long sequence's tokens"),
        ("data parallelism (DP)", "数据并行", "splitting the batch (samples, microbatches) over "
         "replicas of the model; plain DP copies all weights to each, ZeRO/FSDP shard weights, "
         "gradients and optimizer state among them"),
        ("pipeline parallelism (PP)", "流水线并行", "splitting the layers into stages"),
        ("pipeline bubble", "pipeline bubble", "the share of a pipeline-parallel step in which a stage "
         "sits idle, waiting for the first micro-batch to reach it or the last to come back: "
         "(p-1)/(m+p-1) for p stages and m micro-batches, for GPipe and 1F1B alike (kept in "
         "English in the material)", "13"),
        ("1F1B (one forward, one backward)", NOT_IN_MATERIAL, "the pipeline schedule that, once "
         "filled, alternates one forward and one backward micro-batch on every stage: GPipe's "
         "bubble, but stage s (from 0) holds the activations of at most p - s micro-batches, not "
         "all m", "13"),
        ("GPipe", NOT_IN_MATERIAL, "the pipeline schedule that runs all m forward micro-batches, "
         "then all backwards: the bubble (p-1)/(m+p-1), and every stage holds the activations of "
         "all m micro-batches at once", "13"),
        ("ring attention", NOT_IN_MATERIAL, "attention under context parallelism: each rank keeps its "
         "queries and passes its K/V block around the CP ring, cp - 1 times, computing against "
         "each block that arrives", "13"),
        ("ZeRO (Zero Redundancy Optimizer)", "ZeRO", "data parallelism that shards the model state "
         "over the DP ranks instead of copying it: stage 1 the optimizer state, stage 2 the "
         "gradients too, stage 3 the weights too (kept in English in the material)", "13"),
        ("orthogonal", "正交", "separate axes of the grid: a rank has one coordinate on each, "
         "chosen separately; the costs along them still interact at run time"),
        ("up projection", "上投影", "the FFN's first matrix, D to 4D (column parallel)"),
        ("down projection", "下投影", "the FFN's second matrix, 4D to D (row parallel)"),
        ("attention head", "注意力头", "one of the independent attention computations of a layer"),
    ],
    "Fused attention": [
        ("fused attention", NOT_IN_MATERIAL, "attention computed in one kernel in which the N x N "
         "scores S and weights P never leave the chip (FlashAttention is the best-known kernel of "
         "this kind): same FLOPs and a little more, far less HBM traffic", "16"),
        ("online softmax", NOT_IN_MATERIAL, "softmax in one pass: a running max m and a running "
         "sum l of exp(s - m), the sum rescaled by exp(m_old - m_new) when the max grows; two "
         "partial (m, l) merge in any order", "16"),
        ("log-sum-exp", NOT_IN_MATERIAL, "m + log l of a row, the log of its softmax's "
         "denominator: the one number per row a fused forward pass keeps for the backward pass",
         "16"),
        ("recomputation", NOT_IN_MATERIAL, "computing a value again where it is needed instead of "
         "storing it (activation checkpointing; fused attention's backward pass recomputes P "
         "from Q, K and the log-sum-exp): FLOPs spent to save memory and traffic", "04"),
    ],
}

TERMS = tuple(Term(*row[:3], topic, *row[3:]) for topic, rows in _TABLE.items() for row in rows)


def _key(text):
    return " ".join(text.casefold().split())


def _index():
    index = {}
    for term in TERMS:
        short, _, abbreviation = term.english.partition(" (")
        for name in (term.english, term.chinese, short, abbreviation.rstrip(")")):
            if name and name != NOT_IN_MATERIAL:
                index.setdefault(_key(name), term)
    return index


_INDEX = _index()


def lookup(text):
    """The :class:`Term` for ``text``, given in English or in Chinese ("tile", "分块", "Tiles").

    Raises KeyError naming the closest known terms when there is no such entry."""
    key = _key(text)
    for candidate in (key, key[:-1] if key.endswith("s") else None):
        if candidate in _INDEX:
            return _INDEX[candidate]
    close = difflib.get_close_matches(key, list(_INDEX), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise KeyError(f"{text!r} is not in the glossary{hint}")


def markdown():
    """The glossary page, one table per topic, in course order."""
    lines = ["# Glossary · 术语表", "",
             "The key terms of the course, with the Chinese term exactly as the course material "
             "writes it. Look one up in a notebook with `gl.glossary.lookup(\"tile\")` or "
             "`gl.glossary.lookup(\"分块\")`. " + NOT_IN_MATERIAL + " in place of the Chinese term: "
             "the material has none (the lessons add the term). *(lesson NN)*: the lesson that "
             "defines it.", "",
             "<!-- Generated from gemmlab/glossary.py by `python -m gemmlab.glossary "
             "docs/glossary.md`; edit the table there, not this page. -->"]
    for topic in _TABLE:
        lines += ["", f"## {topic}", "", "| English | 中文 | meaning |", "|---|---|---|"]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in
                                 (t.english, t.chinese, t.meaning
                                  + (f" *(lesson {t.lesson})*" if t.lesson else ""))) + " |"
                  for t in TERMS if t.topic == topic]
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Write the glossary page to the path given (or print it)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        with open(argv[0], "w", encoding="utf-8") as page:
            page.write(markdown())
    else:
        sys.stdout.write(markdown())


if __name__ == "__main__":
    main()
