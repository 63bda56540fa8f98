"""Lesson 00, start here: a warm-up question that shows how checks answer, then the opening of
the course's first lecture (seed 002) up to the out-of-memory example: tokens and streaming, the
training loop's two overlaps, operators and kernels, two GPUs, two software stacks, the memory
path and the energy sum. Its discussion questions Q01-Q03 are checked here."""
from ...perfmodel import MEMORY_PATH, training_timeline, timeline_end
from ._choices import options_text
from ...judging import Choice, Exact, Number, Question, Wrong



def _link(prefix):
    return next(link.bandwidth.value for link in MEMORY_PATH if link.name.startswith(prefix))


# Lesson 00's training loop: 8 batches; prepare 24 ms (one CPU core), copy 4 ms, compute 10 ms.
LOOP = dict(n_batches=8, t_prepare=24.0, t_copy=4.0, t_compute=10.0)
# The energy scenario: 300 MW on average for a year.
POWER_MW, HOURS = 300, 24 * 365

WHERE_PARALLEL = {
    "a": "across the tokens of one answer: the GPU computes the next tokens at the same time as "
         "the current one, since they all follow from the same prompt",
    "b": "inside each step: the matrix and vector operations that produce every token are many "
         "independent pieces of arithmetic",
    "c": "in showing the text: the GPU can draw the characters of each new token on the screen in "
         "parallel, while the CPU runs the model",
}
STREAMING = {
    "a": "it removes the dependency between tokens: each token is sent as soon as it is ready, so "
         "the model can compute them in any order it likes",
    "b": "it makes each token faster to compute: the model sends a small piece of text at a time "
         "instead of the whole answer, so each step has less to do",
    "c": "it hides part of the waiting behind the user's reading, and keeps the order: each token "
         "is still computed from the ones before it",
}
PREFETCH = {
    "a": "the workers load the next batches straight into GPU memory (two batches each), so the "
         "GPU finds its inputs there and does not wait for data or for a copy",
    "b": "the workers prepare the next batches on the CPU while the GPU computes; the copy to the "
         "GPU overlaps only if it is asynchronous (pinned memory, its own stream, a second buffer) "
         "and issued early",
    "c": "everything but the compute: the four workers can prepare batches in parallel on the CPU, "
         "and with pin_memory=True the copy to the GPU may take no time, so the GPU waits only on "
         "its own kernels",
}
LINE_OP_KERNEL = {
    "a": "yes: each line of Python is one operator, and the framework hands each operator to the "
         "GPU as exactly one kernel launch, in program order",
    "b": "partly: one line is always one kernel launch, but an operator such as a whole layer can "
         "span several lines of Python and so several kernels",
    "c": "no: one line can call several operators, one operator can launch several kernels, and a "
         "compiler can fuse several operators into one kernel",
}
TWO_CARDS = {
    "a": "each card's kernels work on its own 3 GB: a larger tensor fits on neither, and data "
         "reaches the other card only by a copy over a far slower link, so the model is split and "
         "the exchanges planned",
    "b": "they are the same: the driver pools the two 3 GB memories into one 6 GB address space, "
         "and each kernel reads whichever card holds its data at the speed of local memory",
    "c": "only for speed: two older cards compute more slowly than one newer one, but their 6 GB "
         "act as one pool once both sit in one machine, and the driver spreads a large tensor over "
         "the two of them",
}
SAME_PYTHON = {
    "a": "yes: the model is defined by its Python code, and the framework sends the same operator "
         "calls to either chip, so both run the same program and give bit-identical results",
    "b": "the programs can differ, since each vendor compiles its own kernels, but the speed is "
         "the same whenever the two chips are rated at the same peak FLOP/s for the data type that "
         "the model uses",
    "c": "no: the framework maps the operators to each stack's own libraries, compilers and "
         "kernels (CUDA on NVIDIA, CANN on Ascend): programs, speed and even the last bits can "
         "differ",
}
MEGAWATTS = {
    "a": "yes: chips may differ in detail, but they turn watts into FLOP/s at about the same rate, "
         "so a site's computing performance is proportional to the power it can draw",
    "b": "no: MW is power capacity; the FLOP/s it buys depend on the chips, how busy they are and "
         "how much of the power goes to CPUs, networking and cooling",
    "c": "yes, as long as both sites use GPUs: their FLOP/s per watt are close enough that the "
         "same megawatts of GPUs always deliver the same computing performance",
}
# Why GPUs: one 4K frame at 60 frames per second.
FRAME_W, FRAME_H, FPS = 3840, 2160, 60
FRAME_PARALLEL = {
    "a": "the many similar pieces of work inside a stage (vertices, pixels), each running the same "
         "program; the stages still follow one another",
    "b": "every stage of the graphics pipeline at once: geometry, rasterisation and shading of a "
         "frame all start together, since no pixel depends on anything else",
    "c": "only whole frames: the frames of a game are independent, so the GPU renders several at a "
         "time, while the work inside one frame runs in order",
}


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
    Question(
        id="00.token_is_word",
        prompt="A language model reads and writes tokens. Is one token always one word? "
               "True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "a tokenizer cuts text into pieces of a fixed vocabulary: a rare or long "
                           "word becomes several tokens ('un', 'believ', 'able'), and a space or a "
                           "comma can be a token of its own.")],
        explain="Counts of tokens and of words differ, and so do batch sizes counted in either.",
    ),
    Question(
        id="00.where_parallel",
        prompt="Each token of an answer depends on the tokens before it. Where does the GPU's "
               "parallelism act? Pick one:\n" + options_text(WHERE_PARALLEL),
        answer="b",
        kind=Choice(tuple(WHERE_PARALLEL)),
        wrong=[
            Wrong("a", "the next token is computed from the current one, so the tokens of one "
                       "answer come out one after another; no hardware computes a request's "
                       "future tokens before its present one exists."),
            Wrong("c", "drawing text is a negligible part of the work: the GPU's parallel work is "
                       "the model's arithmetic, inside each step."),
        ],
        explain="Within one step, thousands of dot products are independent; across steps, the "
                "dependency stays.",
    ),
    Question(
        id="00.streaming_hides",
        prompt="Streaming shows each token as soon as it is computed. What does that change? Pick "
               "one:\n" + options_text(STREAMING),
        answer="c",
        kind=Choice(tuple(STREAMING)),
        wrong=[
            Wrong("a", "the model still needs token t to compute token t + 1; streaming changes "
                       "when you see a token, not the order in which tokens can be computed."),
            Wrong("b", "each token costs the same compute; what shrinks is the time you wait "
                       "before you can start reading, because reading overlaps the computing."),
        ],
        explain="Overlap hides waiting without removing work or dependencies: the pipeline idea "
                "the GEMM lessons reuse.",
    ),
    Question(
        id="00.prefetch_overlap",
        prompt="DataLoader(..., num_workers=4, prefetch_factor=2, pin_memory=True) feeds a "
               "training loop. What overlaps with the GPU's compute? Pick one:\n"
               + options_text(PREFETCH),
        answer="b",
        kind=Choice(tuple(PREFETCH)),
        wrong=[
            Wrong("a", "the workers' prefetch happens on the CPU side: prepared batches wait in "
                       "host memory. Each still has to be copied to the GPU, and with an ordinary "
                       "copy on the compute stream the GPU waits for it."),
            Wrong("c", "pinned memory lets the copy run asynchronously (so it can overlap), but "
                       "the bytes still cross PCIe and take their time."),
        ],
    ),
    Question(
        id="00.loop_with_workers_ms",
        prompt="The lesson's loop: 8 batches, each 24 ms to prepare on one CPU core, 4 ms to copy "
               "to the GPU and 10 ms to compute. With 4 DataLoader workers (prefetch 2) and the "
               "copy on the compute stream (no copy/compute overlap), how long does the loop take, "
               "in ms (exact)?",
        answer=lambda: timeline_end(training_timeline(**LOOP, workers=4, prefetch=2)),
        kind=Number(unit="ms"),
        wrong=[
            Wrong(lambda: timeline_end(training_timeline(**LOOP)),
                  "that is the main process loading every batch itself: the 4 workers prepare "
                  "the next batches while the GPU works, so only the first preparation shows."),
            Wrong(lambda: timeline_end(training_timeline(**LOOP, workers=4, overlap_copy=True)),
                  "that hides the copies too, which needs an asynchronous copy of the next batch "
                  "(pinned memory, its own stream, a second buffer). Worker prefetch alone "
                  "happens on the CPU: each copy still waits for the previous compute."),
            Wrong(LOOP["n_batches"] * LOOP["t_compute"],
                  "that is the compute alone; the first batch's preparation and every copy "
                  "still show."),
        ],
        hint="The first batch's preparation, then each batch's copy and compute one after another.",
    ),
    Question(
        id="00.line_operator_kernel",
        prompt="Is one line of PyTorch one operator, and one operator one GPU kernel? Pick one:\n"
               + options_text(LINE_OP_KERNEL),
        answer="c",
        kind=Choice(tuple(LINE_OP_KERNEL)),
        wrong=[
            Wrong("a", "y = relu(x @ W + b) is one line and three operators (matmul, add, "
                       "maximum); a library may launch several kernels for one operator, and a "
                       "fused kernel can do several operators' work in one launch."),
            Wrong("b", "a kernel is what the GPU runs; a line of Python may launch none, one or "
                       "many of them, depending on the operators it calls."),
        ],
    ),
    Question(
        id="00.two_cards",
        prompt="AlexNet was trained on two GPUs with 3 GB each. Why are they not one GPU with "
               "6 GB? Pick one:\n" + options_text(TWO_CARDS),
        answer="a",
        kind=Choice(tuple(TWO_CARDS)),
        wrong=[
            Wrong("b", "each GPU addresses its own memory: a 4 GB tensor fits on neither card, "
                       "although 6 GB are free in total."),
            Wrong("c", "speed is not the point: capacity is per card, and every exchange between "
                       "the cards goes over a link (today PCIe is 75x slower than an H200's own "
                       "HBM)."),
        ],
        explain="Splitting a model over devices means planning capacity and communication "
                "together, as the AlexNet authors did.",
    ),
    Question(
        id="00.hbm_over_pcie",
        prompt="From the course's hardware table: how many times faster does an H200 read its own "
               "HBM (4.8 TB/s) than data arrives from the host over PCIe 5.0 x16 in one "
               "direction (exact)?",
        answer=lambda: _link("HBM3e") / _link("PCIe"),
        kind=Number(unit="x"),
        wrong=[
            Wrong(lambda: _link("HBM3e") / (2 * _link("PCIe")),
                  "the datasheet's 128 GB/s adds both directions; data going one way gets "
                  "64 GB/s."),
            Wrong(1, "PCIe and NVLink bandwidths are not memory bandwidth: they connect devices, "
                     "while HBM feeds the GPU's own chip, far faster."),
        ],
    ),
    Question(
        id="00.same_python",
        prompt="The same Python model code runs on an NVIDIA GPU (CUDA) and on an Ascend NPU "
               "(CANN). Are the programs and their performance the same? Pick one:\n"
               + options_text(SAME_PYTHON),
        answer="c",
        kind=Choice(tuple(SAME_PYTHON)),
        wrong=[
            Wrong("a", "the Python only names operators; each platform's libraries and "
                       "compilers turn them into its own kernels. Even on one CPU, NumPy's BLAS "
                       "and a naive loop compute the same product with different speed and bits."),
            Wrong("b", "peak FLOP/s is an upper limit, not a speed: the kernels, the data movement "
                       "and the software stack decide how much of it a program gets."),
        ],
    ),
    Question(
        id="00.in_memory_is_in_core",
        prompt="Once a matrix has been copied into the GPU's memory, can the arithmetic units "
               "use it without any further data movement? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "the arithmetic works on registers: a kernel must first load its "
                           "operands from GPU memory into registers (caches may keep copies on "
                           "the way) and store its results back.")],
    ),
    Question(
        id="00.every_gpu_hbm",
        prompt="Does every GPU use HBM for its device memory? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "HBM is one kind of device memory, used by high-end AI chips; many GPUs "
                           "use GDDR (the L40S, for one: 48 GB of GDDR6 at 864 GB/s).")],
    ),
    Question(
        id="00.energy_twh",
        prompt=f"A site draws {POWER_MW} MW on average for a whole year (365 days). How much "
               f"energy is that, in TWh (4 significant figures)?",
        answer=lambda: POWER_MW * 1e6 * HOURS / 1e12,
        kind=Number(sig=4, unit="TWh"),
        wrong=[
            Wrong(lambda: POWER_MW * 1e3 * HOURS, "that is kWh; 1 TWh is 10^9 kWh."),
            Wrong(lambda: POWER_MW * HOURS / 1e3, "that is GWh (MW x h / 1000); 1 TWh is "
                                                  "1000 GWh."),
            Wrong(lambda: POWER_MW * 1e6 * 24 / 1e12, "that is one day; a year has 365."),
            Wrong(POWER_MW, "MW is power, a rate; energy is power times time: multiply by the "
                            "8760 hours of a year."),
        ],
        hint="MW x hours gives MWh; 1 TWh = 10^6 MWh.",
    ),
    Question(
        id="00.megawatts_compute",
        prompt="Two data centres have 300 MW each. Do they deliver the same computing "
               "performance? Pick one:\n" + options_text(MEGAWATTS),
        answer="b",
        kind=Choice(tuple(MEGAWATTS)),
        wrong=[
            Wrong("a", "FLOP/s per watt depend on the chip: an H200 offers about 1.8x an A100's "
                       "dense FP16 peak per watt of board power, and only part of a site's power "
                       "reaches the GPUs."),
            Wrong("c", "GPUs differ by generation and use: the same megawatts buy very different "
                       "FLOP/s, and a MW figure says nothing about how busy the chips are."),
        ],
    ),
    Question(
        id="00.loss_is_accuracy",
        prompt="A scaling-law plot shows a bigger model reaching a lower predicted loss. Does that "
               "tell you its accuracy on a given task? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "the loss measures how well the model predicts the next text, averaged "
                           "over the training distribution; a task's accuracy is another quantity, "
                           "and what a model can do has to be evaluated separately.")],
    ),
    Question(
        id="00.frame_pixels_per_second",
        answer_name="pixels_per_second",
        prompt="A game renders 3840 x 2160 pixels at 60 frames per second. How many output pixel "
               "positions per second is that (3 significant figures)?",
        answer=lambda: FRAME_W * FRAME_H * FPS,
        kind=Number(sig=3, unit="pixels/s"),
        wrong=[Wrong(lambda: FRAME_W * FRAME_H, "that is one frame; there are 60 of them every "
                                                "second.")],
        explain="About 5 x 10^8 similar pieces of work a second, each possibly several samples, "
                "shading steps and memory reads: the throughput GPUs were built for.",
    ),
    Question(
        id="00.frame_parallel",
        prompt="What can run in parallel when a GPU draws a frame? Pick one:\n"
               + options_text(FRAME_PARALLEL),
        answer="a",
        kind=Choice(tuple(FRAME_PARALLEL)),
        wrong=[
            Wrong("b", "the graphics pipeline still has stages that depend on each other: a pixel "
                       "is shaded only after the geometry that covers it is known. What runs in "
                       "parallel is the mass of similar work inside a stage."),
            Wrong("c", f"one frame alone holds {FRAME_W * FRAME_H / 1e6:.1f} million pixels, each "
                       f"shaded by the same program: there is plenty of parallel work inside a "
                       f"frame."),
        ],
    ),
]
