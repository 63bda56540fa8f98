"""The hint ladders of the labs and puzzles: for each, three or more hints in the order
:func:`gemmlab.grading.hints.hint` gives them (the idea, then the structure, then the one step
most students miss), and which hint a failed check's feedback puts first.

A ladder never contains the answer's code (a test compares every hint with the solution's lines):
it says what to do and why, in words and in the names the exercise already uses.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Ladder:
    steps: tuple                # hints, in order: idea, structure, the step most students miss
    first_for: tuple = ()       # (regular expression on the feedback, index of the hint to start with)


BARRIER_MISSING = r"before the tile was complete|syncthreads\(\) between|race|read-write"
BARRIER_LATE = r"overwrote data another thread|after the compute loop|write-write"
EDGES = r"never written|poison|out of bounds|outside|before any thread|uninitiali[sz]ed|edge"
LAYOUT = r"transpose|swapped|B @ A|wrong order|A\^T|B\^T|shared index|tile of"

LADDERS = {
    "03.puzzle_map": Ladder((
        "One thread per element: each thread works out which element is its own from where it "
        "sits in the grid, and does that one addition.",
        "The global index is the block's number times the threads per block, plus the thread's "
        "number inside its block; then one guarded read of a and one write of out.",
        "The last block has threads past the end of the array (n is not a multiple of 32): a "
        "thread whose index is not below the array's length must touch no memory at all.",
    ), ((EDGES, 2),)),
    "03.puzzle_zip": Ladder((
        "The same as puzzle_map, with two inputs: every thread adds one element of a to the "
        "element of b at the same position.",
        "One global index per thread, one guard on it, and the same index used into a, b and "
        "out.",
        "The guard compares the index with the length of the arrays, and it has to come before "
        "any read, not only before the write.",
    ), ((EDGES, 2),)),
    "03.puzzle_map2d": Ladder((
        "A 2-D launch gives each thread a row and a column: threadIdx.y and blockIdx.y tell the "
        "row, the x components tell the column.",
        "Row from the y components (block number times 16 plus the thread's y), column from the "
        "x components; then a guard on both before the one read and the one write.",
        "The rows are the first index of a 2-D array: out[row, col]. Taking x as the row swaps "
        "the roles, and a non-square array then goes out of bounds.",
    ), ((EDGES, 2), (LAYOUT, 2))),
    "03.puzzle_broadcast": Ladder((
        "Each output element combines one element of each vector: which one of a depends only on "
        "the row, which one of b only on the column.",
        "The launch of puzzle_map2d: a row and a column per thread, a guard on both, then one "
        "sum of an element of a and an element of b.",
        "a has as many elements as out has rows and b as many as it has columns: guard the row "
        "against the rows and the column against the columns, not both against one length.",
    ), ((EDGES, 2), (LAYOUT, 2))),
    "03.puzzle_shared": Ladder((
        "Shared memory lets a thread use what another thread of its block read: each global "
        "element is read once into shared memory, and the neighbour comes from there.",
        "Three phases: each thread fills its own slot of the shared array (zero past the end of "
        "a), the block waits at a barrier, then each thread reads its slot and its neighbour's.",
        "Without the barrier a thread reads its neighbour's slot before the neighbour has "
        "written it: the wait goes between the writes into shared memory and the reads of "
        "another thread's slot.",
    ), ((BARRIER_MISSING, 2), (EDGES, 1))),
    "03.puzzle_pool": Ladder((
        "Each output needs the two elements before it: read the block's elements once into "
        "shared memory, plus the two just before the block, and sum from there.",
        "A shared array with room for the block's 32 elements and 2 more: every thread stores "
        "its element at an offset of 2, two threads also fetch the two elements before the "
        "block (zero before index 0), a barrier, then three reads from shared memory.",
        "The two extra elements belong to the previous block's range: fetching them with the "
        "block's own first two threads, at indices block start minus 2 and minus 1, keeps the "
        "reads within n + 2 per block; other threads reading them again costs reads.",
    ), ((BARRIER_MISSING, 1), (r"reads", 2), (EDGES, 1))),
    "03.puzzle_dot": Ladder((
        "A sum of 256 products is a tree: add pairs, then pairs of pairs, 8 levels in all, with "
        "the whole block working on each level.",
        "Each thread stores its product (zero past n) into shared memory; then a loop over "
        "strides 128, 64, ..., 1 where the threads below the stride add the slot one stride "
        "away into their own; at the end one thread writes slot 0 to out.",
        "Every level needs a barrier after it, and the barrier must be reached by all threads: "
        "put it outside the condition that picks the threads that add, not inside it.",
    ), ((BARRIER_MISSING, 2), (r"barrier", 2), (EDGES, 0))),
    "03.puzzle_prefix": Ladder((
        "An inclusive scan in shared memory by doubling: after the step with distance d, each "
        "slot holds the sum of the last 2d inputs up to it.",
        "Load each element into shared memory (zero past n), a barrier, then for d = 1, 2, 4, "
        "..., 128: threads at or above d add the slot d before their own; at the end each thread "
        "writes its slot to out.",
        "In a step a thread reads slot t - d while thread t - d may be writing it: read the value "
        "into a local variable, wait at a barrier, then write, and wait again before the next "
        "step.",
    ), ((BARRIER_MISSING, 2), (r"write-write|race", 2), (EDGES, 1))),
    "05.lab_naive": Ladder((
        "One thread per element of C: the thread computes the dot product of a row of A with a "
        "column of B and writes it once.",
        "Row from the y components (blockIdx.y times 16 plus threadIdx.y), column from the x "
        "components; if both lie inside C, loop over k adding A's element (row, k) times B's "
        "element (k, col) into a local variable, then store it.",
        "The grid covers C in whole blocks of 16, so some threads fall outside C: both the row "
        "and the column need a guard, against M and N (not against K).",
    ), ((EDGES, 2), (LAYOUT, 1), (r"read C", 1))),
    "05.lab_tiled": Ladder((
        "Each value a block loads from global memory is used 16 times: the block copies a 16 x 16 "
        "tile of A and one of B into shared memory, and the dot products read them from there.",
        "Per K tile: every thread loads one element of the A tile and one of the B tile (zero "
        "where the tile sticks out of the matrix), a barrier, 16 multiply-adds from shared "
        "memory, a barrier, next tile; the running sum stays in a register and C is written once "
        "at the end.",
        "The second barrier, after the multiply-adds: without it a fast thread starts loading the "
        "next tile over values a slower thread of the block is still reading.",
        "The tile of A a thread loads sits at its own row and column k0 + threadIdx.x; the tile "
        "of B at row k0 + threadIdx.y and its own column. Store each at the same (threadIdx.y, "
        "threadIdx.x) place in its shared tile, and read the A tile along its row, the B tile "
        "down its column.",
    ), ((BARRIER_LATE, 2), (BARRIER_MISSING, 1), (LAYOUT, 3), (EDGES, 1))),
    "06.lab_column": Ladder((
        "Column parallelism splits the output's columns: each rank's columns of Y need all of X "
        "and only that rank's columns of W.",
        "The rank multiplies the whole X by its own block of W and returns that product: an "
        "M x N/p block of Y.",
        "No communication is needed in the forward pass: an all-reduce or all-gather here "
        "either sums results that should stay apart or returns the whole Y instead of the "
        "rank's part.",
    ), ((r"all_reduce|all_gather|shape", 2),)),
    "06.lab_row": Ladder((
        "Row parallelism splits the inner dimension: each rank computes part of every dot "
        "product, and the parts add up to Y.",
        "Multiply the rank's columns of X by its rows of W (a full-shape partial product), then "
        "sum the partial products over the ranks and return the sum.",
        "The parts are summed, not concatenated: the collective is the all-reduce; an "
        "all-gather gives an array p times too large.",
    ), ((r"all_gather|shape|p times", 2),)),
    "07.lab_ring": Ladder((
        "A ring all-reduce cuts x into N chunks; in reduce-scatter each chunk travels around the "
        "ring collecting every rank's share, then in all-gather the finished chunks travel around "
        "once more.",
        "N - 1 reduce-scatter steps: send one chunk to the next rank, receive one from the "
        "previous rank and add it to your own chunk of that number; then N - 1 all-gather steps: "
        "send a finished chunk, receive one and store it (no addition).",
        "Which chunk moves at step s depends on the rank and the step, shifted by one between "
        "what you send and what you receive; and every rank must send and receive in one "
        "exchange, or all ranks wait for each other (use sendrecv).",
    ), ((r"deadlock|waits", 2), (r"chunk", 2))),
    "08.lab_pingpong": Ladder((
        "With two shared buffers per operand, the loads of the next tile can be under way while "
        "the current tile is being used: the load no longer waits for the compute.",
        "Before the loop: load tile 0 into buffer 0 and wait. In the loop: fetch the next tile's "
        "elements from global memory into registers, multiply-add from the current buffer, store "
        "the registers into the other buffer, wait once, swap the buffers.",
        "The buffer number alternates with the tile number (tile t in buffer t % 2), so the "
        "single barrier per tile is enough only if the store goes into the buffer that is NOT "
        "being read in this step.",
    ), ((BARRIER_LATE, 2), (r"buffer still being read|overwrote", 2), (BARRIER_MISSING, 1),
        (EDGES, 1))),
    "09.lab_ffn": Ladder((
        "Megatron's FFN is a column-parallel layer followed by a row-parallel one, so the "
        "activation in between never needs to be communicated.",
        "Up projection with the rank's column shard and its bias slice, GELU on that shard, down "
        "projection with the rank's row shard, one all-reduce of the partial outputs, then the "
        "down bias.",
        "The down bias is added once, after the all-reduce: added on every rank before it, it "
        "ends up counted p times.",
    ), ((r"bias|p times|b_down", 2), (r"all_reduce", 1))),
    "10.lab_outer": Ladder((
        "Each thread computes a 4 x 4 block of C: per k it loads 4 values of A and 4 of B and "
        "does 16 multiply-adds, 2 loads per multiply-add fewer than a dot product each.",
        "Load the block's A and B tiles into shared memory and wait; for each k of the tile, "
        "read the thread's 4 values of the A column and 4 of the B row into local arrays, then "
        "update the 4 x 4 accumulator with their outer product; wait before the next tile; at "
        "the end store the 16 results, each under its own bounds check.",
        "The 64 threads cover the 32 x 32 tile as an 8 x 8 grid of micro-tiles: a thread's "
        "micro-tile row and column come from its index divided by 8 and its remainder, each "
        "times 4.",
    ), ((BARRIER_LATE, 1), (BARRIER_MISSING, 1), (EDGES, 1), (LAYOUT, 2))),
    "11.lab_twolevel": Ladder((
        "Two levels of double buffering: shared memory tiles (the next tile loads while this one "
        "is used) and register fragments (the values for k + 1 are read while the FMAs of k run).",
        "Before the k loop, read the fragments for k = 0 into register set 0; in the loop, read "
        "k + 1 into the other set first, then do the FMAs of k from the current set; across K "
        "tiles, lab 08's two shared buffers and one barrier per tile.",
        "At the last k of a tile there is no k + 1 in this tile: the next fragments come from the "
        "next tile's buffer, which must already be stored and behind a barrier.",
    ), ((BARRIER_LATE, 2), (BARRIER_MISSING, 2), (EDGES, 1))),
    "12.lab_wmma": Ladder((
        "A Tensor Core works on whole 16 x 16 fragments: C is a grid of fragments, and each is "
        "the sum over K of A's fragments times B's.",
        "Three loops of step 16: over C's fragment rows and columns, and inside, over K. Start "
        "each C fragment from a zero accumulator, add one MMA per step of K, and store it once "
        "after the K loop.",
        "The fragments must come from matching places: for C's fragment at (i, j) and step k, "
        "A's fragment is at row i and column k, B's at row k and column j. Any other pairing "
        "multiplies the wrong tiles and every element is wrong.",
    ), ((LAYOUT, 2), (r"stored .* times|store", 1), (r"calls of mma_sync", 1),
        (r"loaded C", 1))),
    "13.lab_groups": Ladder((
        "Ranks are numbered in mixed radix, tp fastest: each rank has four coordinates, and a "
        "group is the ranks that differ only in one of them.",
        "Turn the coordinates into a rank (tp, then cp, dp, pp, each times the sizes of the "
        "faster axes); then for every choice of the other three coordinates, one group walking "
        "the chosen axis.",
        "The stride of an axis is the product of the sizes of the faster axes: 1 for tp, tp "
        "for cp, tp cp for dp, tp cp dp for pp.",
    ), ((r"rank|group", 2),)),
    "14.lab_attention": Ladder((
        "Heads are independent: each rank computes attention for its own heads with no "
        "communication, and only the output projection mixes them.",
        "Project X with the rank's Q, K and V columns, split into its heads, attention per head, "
        "concatenate the heads, multiply by the rows of W_O that belong to those heads, "
        "all-reduce, then the bias.",
        "The rows of W_O to use are the ones of this rank's heads (rank times h/p heads of d_h "
        "rows each), and b_o is added once, after the all-reduce.",
    ), ((r"bias|b_o|p times", 2), (r"rows", 2))),
    "16.puzzle_online_softmax": Ladder((
        "A row's softmax needs only two numbers besides the scores: the largest score m, and "
        "the sum l of exp(score - m). Both can be kept running while the row is read once.",
        "First loop over the row: the new max is the larger of m and the score; the sum so far "
        "is multiplied by exp(old max - new max) and the new exp term added. Second loop: each "
        "element of out is exp(score - m) / l.",
        "Start from m = -inf and l = 0: exp(-inf - m) is 0, so the first score needs no special "
        "case. Forgetting to rescale l is right only while the max never grows.",
    ), ((r"overflow|max subtraction", 2), (r"rescaled", 2), (r"reads", 0), (EDGES, 1))),
    "16.puzzle_merge": Ladder((
        "A state (m, l) describes any part of the row; two states merge into the state of both "
        "parts, so the block can reduce states as lesson 03's tree reduced sums.",
        "Each thread stores its element's state (the score and 1, or -inf and 0 past n) in two "
        "shared arrays; then a loop over strides 128, 64, ..., 1 where the threads below the "
        "stride merge the state one stride away into their own; thread 0 writes the result.",
        "Rescale both sums to the larger max before adding them, and skip the exponentials when "
        "both states are empty (-inf minus -inf is NaN); a barrier after every level, outside "
        "the condition.",
    ), ((BARRIER_MISSING, 2), (r"barrier", 2), (r"rescaled|NaN|overflow", 2))),
    "16.lab_flash": Ladder((
        "Fused attention is the online softmax of puzzle 1 with a vector in place of a number: "
        "besides m and l each row keeps acc, its unnormalised output, rescaled the same way, "
        "and S never leaves the chip.",
        "Per block: zero acc, m = -inf, l = 0; for each K/V tile: load it into shared memory "
        "(thread t loads row t of K and of V, if inside K), wait, update the row's m, l and acc "
        "key by key, wait again; at the end write acc / l once.",
        "Three details fail most kernels: acc is multiplied by exp(old max - new max) as l is; "
        "the second barrier keeps the next tile's loads from overwriting keys others still "
        "read; with causal, key j counts for query i when j <= i (its own key included), and "
        "the loop over tiles ends at the block's last row.",
    ), ((r"rescaled", 2), (r"barrier", 2), (r"causal", 2), (r"reads", 1), (EDGES, 1))),
    "15.lab_budget": Ladder((
        "The layer's time per GPU is four separate terms: compute, the TP all-reduces, the data "
        "parallel gradient all-reduce, and the pipeline's point-to-point messages.",
        "Work out each term from the contract in the exercise: the sizes each GPU holds (tokens "
        "split by cp, d_ff by tp), the GEMMs' time from their FLOPs and traffic, and each "
        "collective's bytes times its cost per byte.",
        "Mind what divides what: the DP gradient all-reduce is shared over the microbatches and "
        "runs over dp x cp ranks, and the pipeline messages are per stage boundary, layers / pp.",
    ), ((r"gemm", 1), (r"dp_allreduce|pp_p2p", 2))),
}
