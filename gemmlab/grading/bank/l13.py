"""Lesson 13, 4D parallelism: the rank count as a product, coordinates in Megatron's order, groups
built by fixing three axes, which axis each parallelism cuts, and orthogonal vs independent."""
from ...parallel import RankGrid
from ...parallel.memory_per_rank import memory_per_rank, ring_attention_kv_bytes
from ...parallel.pipeline_schedule import simulate
from ...labs.groups import GroupsLab
from ...labs.solutions import solution
from ._choices import options_text
from ...judging import Array, Choice, Exact, Function, Number, Question, Wrong

# The seed's exercise: DP = 4, PP = 2, CP = 2, TP = 8.
EXERCISE = dict(tp=8, cp=2, dp=4, pp=2)
SMALL = dict(tp=2, cp=2, dp=2, pp=2)
SMALL_RANK = 5
COORDS = dict(tp=3, cp=1, dp=2, pp=1)


def _group(axis):
    return lambda: RankGrid(**SMALL).group(axis, SMALL_RANK)


def _rank_in(order):
    return lambda: RankGrid(**EXERCISE, order=order).rank(**COORDS)


def coords_of(rank, tp, cp, dp, pp):
    """(tp, cp, dp, pp) coordinates of ``rank`` in Megatron's order (tp fastest)."""
    return tuple(RankGrid(tp=tp, cp=cp, dp=dp, pp=pp).coords(rank))


def _coords_in(order):
    def coords(rank, tp, cp, dp, pp):
        return tuple(RankGrid(tp=tp, cp=cp, dp=dp, pp=pp, order=order).coords(rank))
    return coords


def _coords_cases():
    return [(0, 2, 2, 2, 2), (5, 2, 2, 2, 2), (21, 8, 2, 2, 4), (107, 8, 2, 4, 2),
            (13, 3, 1, 5, 2)]


def _coords_hidden(rng):
    cases = []
    for _ in range(6):
        tp, cp, dp, pp = (int(v) for v in rng.integers(2, 6, size=4))
        cases.append((int(rng.integers(tp * cp * dp * pp)), tp, cp, dp, pp))
    return cases


AXIS_OPTIONS = ("contexts", "layers", "tokens", "features")
AXIS_PROMPT = "'contexts' (samples or microbatches), 'layers', 'tokens' (of one sequence) or " \
              "'features'"




TP_FIXES = {
    "a": "i_TP is fixed; i_DP, i_PP and i_CP walk over their ranges",
    "b": "nothing is fixed: the TP group spans all 128 ranks",
    "c": "i_DP, i_PP and i_CP are fixed; i_TP walks all of 0 .. 7",
}
FOUR_D = {
    "a": "that the model's tensors have four dimensions (batch, sequence, heads, head size)",
    "b": "four kinds of parallelism (DP, PP, CP, TP) combined on a grid of ranks",
    "c": "that the job runs on four GPUs, one for each of the four parts of the model",
}
TP_SPLITS = {
    "a": "whichever dimension of a layer's matrices suits it: features, attention heads, the FFN's "
         "hidden units, a matrix's input or output dimension",
    "b": "always the hidden feature dimension H and only that, so that every layer's weight "
         "matrices are cut in the same way, the same on every rank of the group",
    "c": "the tokens of the sequence: each TP rank takes a contiguous slice of the positions and "
         "runs the whole layer on them",
}

WORK_VOLUME = {
    "a": "no: it is a picture of the task's coordinates; what is held depends on the run: "
         "inference keeps one layer's activations at a time, training keeps or recomputes them for "
         "the backward pass",
    "b": "yes: the L x S x H tensor is allocated when the run starts, since every layer writes its "
         "token x feature plane into it and the backward pass reads them all",
    "c": "yes, but only on the last pipeline stage, which gathers every layer's plane from the "
         "earlier stages before it computes the loss",
}
B_AXIS = {
    "a": "not necessarily: B counts the task's independent contexts; data loading, gradient "
         "accumulation and pipeline microbatches can lay them out differently in memory",
    "b": "yes: B is always the first dimension of the input tensor that the framework sees, and "
         "every training step processes exactly those B contexts together, side by side",
    "c": "no: B counts the GPUs of the data-parallel group, each of which holds one context, so B "
         "equals the data-parallel degree DP",
}

QUESTIONS = [
    Question(
        id="13.total_ranks",
        prompt="A training job uses DP = 4, PP = 2, CP = 2, TP = 8 on a full 4D grid. How many "
               "ranks does it need?",
        answer=lambda: RankGrid(**EXERCISE).size,
        kind=Exact(int),
        wrong=[
            Wrong(lambda: sum(EXERCISE.values()), "that adds the degrees. Each rank has one "
                                                  "coordinate on every axis, so the count is the "
                                                  "product of the four degrees."),
            Wrong(lambda: RankGrid(**EXERCISE).size // 2, "a factor is missing: all four degrees "
                                                          "multiply."),
        ],
        hint="Count the tuples (i_DP, i_PP, i_CP, i_TP).",
        explain="N = N_DP x N_PP x N_CP x N_TP, when every tuple is one GPU.",
    ),
    Question(
        id="13.tp_group_size",
        prompt="In the same job (DP = 4, PP = 2, CP = 2, TP = 8), how many ranks are in one TP "
               "group?",
        answer=lambda: len(RankGrid(**EXERCISE).group("tp", 0)),
        kind=Exact(int),
        wrong=[Wrong(lambda: len(RankGrid(**EXERCISE).groups("tp")),
                     "that is how many TP groups there are (one per (DP, PP, CP) tuple). One group "
                     "fixes those three coordinates and walks i_TP = 0 .. 7.")],
        hint="Which coordinate varies inside a TP group?",
        explain="A TP group fixes (i_DP, i_PP, i_CP) and walks i_TP: TP ranks.",
    ),
    Question(
        id="13.dp_group_members",
        prompt="Grid tp = cp = dp = pp = 2, Megatron order (tp fastest, then cp, dp, pp). List the "
               "ranks of rank 5's DP group, smallest first.",
        answer=_group("dp"),
        kind=Array(rtol=0, atol=0),
        wrong=[
            Wrong(_group("tp"), "that is rank 5's TP group: you walked the fastest coordinate. "
                                "In Megatron's order tp is fastest (stride 1), cp next (stride "
                                "2), dp after (stride 4)."),
            Wrong(_group("cp"), "that is rank 5's CP group (stride 2). The DP coordinate has "
                                "stride tp x cp = 4."),
            Wrong(_group("pp"), "that is rank 5's PP group (stride 8). The DP coordinate has "
                                "stride 4."),
        ],
        hint="Find rank 5's coordinates first; then change only i_DP.",
        explain="Fix three coordinates, walk the fourth.",
    ),
    Question(
        id="13.rank_of_coords",
        prompt="Grid TP = 8, CP = 2, DP = 4, PP = 2, Megatron order. Which rank sits at "
               "(i_TP, i_CP, i_DP, i_PP) = (3, 1, 2, 1)?",
        answer=_rank_in("tp-cp-dp-pp"),
        kind=Exact(int),
        wrong=[
            Wrong(_rank_in("pp-dp-cp-tp"), "you let pp vary fastest. Megatron's order has tp "
                                           "fastest, then cp, dp, pp."),
            Wrong(_rank_in("tp-dp-cp-pp"), "you put dp before cp. Megatron's order is "
                                           "tp, cp, dp, pp, fastest first."),
        ],
        hint="rank = i_TP + 8 (i_CP + 2 (i_DP + 4 i_PP)).",
        explain="Mixed-radix counting, with TP as the lowest digit.",
    ),
    Question(
        id="13.pp_axis",
        prompt=f"Which axis of the work does pipeline parallelism cut: {AXIS_PROMPT}?",
        answer="layers",
        kind=Choice(AXIS_OPTIONS),
        wrong=[
            Wrong("tokens", "cutting the tokens of a sequence is context parallelism. PP cuts "
                            "the network's depth into stages of layers."),
            Wrong("contexts", "giving different samples to different ranks is data parallelism. "
                              "PP gives different layers to different ranks."),
        ],
        hint="What does a pipeline 'stage' contain?",
        explain="PP: stages of consecutive layers, activations passed between neighbours.",
    ),
    Question(
        id="13.cp_axis",
        prompt=f"Which axis of the work does context parallelism cut: {AXIS_PROMPT}?",
        answer="tokens",
        kind=Choice(AXIS_OPTIONS),
        wrong=[
            Wrong("contexts", "CP is not ordinary batch splitting (that is DP): it cuts the "
                              "tokens of one long context over several ranks."),
            Wrong("features", "cutting features or heads is tensor parallelism."),
        ],
        hint="CP exists for sequences too long for one GPU.",
        explain="CP: slices of one sequence; attention then needs K/V from the other slices.",
    ),
    Question(
        id="13.orthogonal_means_independent",
        prompt="'The four parallelism axes are orthogonal' means that DP, PP, CP and TP do not "
               "interact at run time. True or False?",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "orthogonal means each axis can be indexed and sized separately. At "
                           "run time they share links and memory, CP sets the size of TP's "
                           "messages, and the pipeline schedule decides when DP synchronises.")],
        hint="Does changing CP change the size of a TP all-reduce?",
        explain="Orthogonal indexing, coupled costs: a 4D configuration is one joint choice.",
    ),
    Question(
        id="13.coords_of",
        prompt="Write coords_of(rank, tp, cp, dp, pp) returning the tuple (i_TP, i_CP, i_DP, i_PP) "
               "of rank on a grid of those degrees, in Megatron's order (tp fastest, then cp, dp, "
               "pp).",
        answer=coords_of,
        kind=Function(_coords_cases, compare=Array(rtol=0, atol=0), hidden=_coords_hidden),
        wrong=[
            Wrong(_coords_in("pp-dp-cp-tp"), "your function lets pp vary fastest; in Megatron's "
                                             "order tp is the lowest digit."),
            Wrong(_coords_in("tp-dp-cp-pp"), "your function puts dp before cp; the order is tp, "
                                             "cp, dp, pp."),
        ],
        hint="i_TP = rank % tp; then divide by tp and repeat with cp, dp, pp.",
        explain="The inverse of rank = i_TP + tp (i_CP + cp (i_DP + dp i_PP)).",
    ),
    Question(
        id="13.lab_groups",
        prompt="Lab: write groups(tp, cp, dp, pp, axis) returning every rank group along axis "
               "('tp', 'cp', 'dp' or 'pp') as a list of lists of ranks, with ranks numbered in "
               "Megatron's order (tp fastest, then cp, dp, pp). The order of the groups, and of "
               "the ranks inside a group, does not matter.",
        answer=lambda: solution("13.lab_groups", name="groups"),
        kind=GroupsLab(),
        answer_name="groups",
        hint="rank = i_tp + tp (i_cp + cp (i_dp + dp i_pp)). A group along an axis fixes the "
             "other three coordinates and walks that one.",
        explain="Each axis partitions the ranks into lines through the grid: the TP lines are "
                "runs of consecutive ranks, so they fit inside a node.",
    ),
    Question(
        id="13.tp_group_fixes",
        prompt="In the job with DP = 4, PP = 2, CP = 2, TP = 8, which coordinates does a TP group "
               "fix? Pick one:\n" + options_text(TP_FIXES),
        answer="c",
        kind=Choice(tuple(TP_FIXES)),
        wrong=[
            Wrong("a", "that describes the other groups of a rank seen together; a TP group is a "
                       "line along the TP axis: the other three coordinates fixed, i_TP walking."),
            Wrong("b", "the job has 128 ranks; a TP group has 8, one for each i_TP, sharing "
                       "their DP, PP and CP coordinates."),
        ],
    ),
    Question(
        id="13.four_d_meaning",
        prompt="What does '4D' in '4D parallelism' count? Pick one:\n" + options_text(FOUR_D),
        answer="b",
        kind=Choice(tuple(FOUR_D)),
        wrong=[
            Wrong("a", "4D counts kinds of parallelism. The tensors may have any rank (batch, "
                       "sequence, heads, head dimension, often flattened)."),
            Wrong("c", "the number of GPUs is the product of the four degrees, 128 in the "
                       "lesson's example."),
        ],
    ),
    Question(
        id="13.dp_full_copy",
        prompt="In data parallelism, does every rank always hold a full copy of the weights, "
               "gradients and optimizer state? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "plain DP does. ZeRO and FSDP shard the optimizer state, the gradients "
                           "and even the weights among the DP ranks (gathering weights when a "
                           "layer needs them), and they are still data parallelism.")],
    ),
    Question(
        id="13.tp_splits",
        prompt="Which dimension does tensor parallelism split? Pick one:\n" + options_text(TP_SPLITS),
        answer="a",
        kind=Choice(tuple(TP_SPLITS)),
        wrong=[
            Wrong("b", "'TP cuts the features' is the entry point: Megatron's attention splits "
                       "heads, its FFN the hidden units, and a linear layer can be split along "
                       "its input (row parallel) or output (column parallel) dimension."),
            Wrong("c", "splitting the tokens of a sequence is context parallelism."),
        ],
    ),
    Question(
        id="13.work_volume_stored",
        prompt="Lesson 13 stacks the layers' token x feature planes into an L x S x H work volume. "
               "Does a run hold that L x S x H tensor in memory? Pick one:\n"
               + options_text(WORK_VOLUME),
        answer="a",
        kind=Choice(tuple(WORK_VOLUME)),
        wrong=[
            Wrong("b", "the volume is a map of the work (which layer, which token, which feature), "
                       "not an allocation: a forward pass needs one layer's plane at a time, and "
                       "what training keeps for the backward pass is a choice (recomputation "
                       "keeps less)."),
            Wrong("c", "no stage allocates the whole volume; pipeline stages each hold their own "
                       "layers' activations, as the run needs them."),
        ],
    ),
    Question(
        id="13.b_axis_meaning",
        prompt="The fourth axis B of the task space B x L x S x H counts independent contexts. Is "
               "it the batch dimension of a framework tensor? Pick one:\n" + options_text(B_AXIS),
        answer="a",
        kind=Choice(tuple(B_AXIS)),
        wrong=[
            Wrong("b", "B is an axis of the task, not of one tensor: gradient accumulation splits "
                       "it over steps, pipeline parallelism into microbatches, a data loader into "
                       "batches; a framework's batch dimension is one of its physical layouts."),
            Wrong("c", "the GPUs of the DP group split B (data parallelism), but B itself counts "
                       "contexts, whatever the number of GPUs."),
        ],
    ),
    Question(
        id="13.bubble_fraction",
        answer_name="bubble_fraction",
        prompt="A pipeline of p = 4 stages runs m = 8 micro-batches with 1F1B; forward and backward "
               "steps cost the same on every stage. The share of the time a stage sits idle, the "
               "bubble (3 significant figures).",
        answer=lambda: simulate("1f1b", 4, 8).bubble_fraction(),
        kind=Number(sig=3),
        wrong=[
            Wrong(lambda: 3 / 8, "that is (p-1)/m, the bubble measured against the work; as a "
                                 "share of the whole schedule it is (p-1)/(m+p-1)."),
            Wrong(0, "1F1B does not remove the bubble: it has GPipe's (p-1)/(m+p-1); what it "
                     "saves is activation memory (at most p - s micro-batches held)."),
            Wrong(lambda: 1 / 8, "the fill and the drain each cost p - 1 slots; one slot per "
                                 "micro-batch is not the bubble."),
        ],
    ),
    Question(
        id="13.one_f_one_b_held",
        answer_name="held_stage0",
        prompt="Same pipeline (p = 4, m = 8) with 1F1B: the most micro-batches whose activations "
               "stage 0 holds at once.",
        answer=lambda: simulate("1f1b", 4, 8).peak_in_flight(0),
        kind=Exact(int, unit="micro-batches"),
        wrong=[
            Wrong(8, "that is GPipe, which runs all m forwards before any backward. 1F1B starts "
                     "each backward as soon as it can: stage s holds at most p - s."),
            Wrong(1, "stage 0 must run p forwards before the first backward comes back to it."),
        ],
    ),
    Question(
        id="13.zero2_gb",
        answer_name="zero2_gb",
        prompt="A 7e9-parameter model trains with mixed-precision Adam (16 B of model state per "
               "parameter: 2 weights, 2 gradients, 12 optimizer) on 8 data-parallel ranks with "
               "ZeRO stage 2. Model-state memory per rank, in GB (10^9 B), 4 significant figures.",
        answer=lambda: memory_per_rank("zero2", 7e9, 8)[0] / 1e9,
        kind=Number(sig=4, unit="GB"),
        wrong=[
            Wrong(lambda: memory_per_rank("dp", 7e9, 8)[0] / 1e9,
                  "that is plain DP: every rank keeps all 16 B. ZeRO-2 shards the optimizer "
                  "state and the gradients over the 8 ranks."),
            Wrong(lambda: memory_per_rank("zero3", 7e9, 8)[0] / 1e9,
                  "that is ZeRO-3, which also shards the weights; stage 2 keeps every weight."),
            Wrong(lambda: memory_per_rank("zero1", 7e9, 8)[0] / 1e9,
                  "that is ZeRO-1, which shards only the optimizer state; stage 2 shards the "
                  "gradients too."),
        ],
    ),
    Question(
        id="13.cp_states_divide",
        answer_name="cp_states_divide",
        prompt="True or False: context parallelism over 8 ranks divides each rank's model-state "
               "memory (weights, gradients, optimizer) by 8.",
        answer=False,
        kind=Exact(bool),
        wrong=[
            Wrong(True, "CP shards the sequence, not the weights: every CP rank keeps the whole "
                        "layer's weights, gradients and optimizer state; only the activations "
                        "divide."),
        ],
    ),
    Question(
        id="13.ring_attention_mib",
        answer_name="ring_attention_mib",
        prompt="Ring attention with T = 32768 tokens on cp = 4 ranks, K and V of 1024 BF16 values "
               "each per token: the MiB one rank sends per attention layer's forward (exact).",
        answer=lambda: ring_attention_kv_bytes(32768, 4, 1024) / 2**20,
        kind=Number(unit="MiB"),
        wrong=[
            Wrong(lambda: ring_attention_kv_bytes(32768, 4, 1024) / 3 / 2**20,
                  "that sends the K/V block once; around a ring of cp ranks it is passed on "
                  "cp - 1 times, so that every query meets every key."),
            Wrong(lambda: ring_attention_kv_bytes(32768, 4, 1024) / 2 / 2**20,
                  "that sends K only; V travels with it."),
            Wrong(lambda: 2 * 32768 * 1024 * 2 / 2**20,
                  "that is the whole sequence's K and V; each rank holds T / cp tokens of it and "
                  "sends its block cp - 1 times."),
        ],
    ),
]
