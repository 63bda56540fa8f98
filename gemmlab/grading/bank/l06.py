"""Lesson 06, column and row parallel: the shape ledger of Y = X W over p ranks, concat vs sum,
the collective the layout needs, and the transposed-storage trap."""
import numpy as np

from ...parallel import column_parallel, parallel_kind, row_parallel, shape_ledger
from ...labs.solutions import solution
from ...labs.tensor import ColumnLab, RowLab
from ...judging import Choice, Exact, Function, Question, Shape, Wrong

# The seed's exercise: X is 8 x 12, W is 12 x 20, p = 4 ranks.
X_SHAPE, W_SHAPE, P = (8, 12), (12, 20), 4


def _ledger(mode):
    return shape_ledger(X_SHAPE, W_SHAPE, P)[mode]


def _transposed(shape):
    return tuple(reversed(shape))


STORED_NOTE = ("that is the block as PyTorch stores it (out x in). The ledger is written for the "
               "math W of Y = X W, which is in x out: transpose it back first.")


def _row_partials_cases():
    rng = np.random.default_rng(606)
    return [(rng.standard_normal((5, 12)), rng.standard_normal((12, 8)), 4),
            (rng.standard_normal((3, 9)), rng.standard_normal((9, 6)), 3),
            (rng.standard_normal((2, 6)), rng.standard_normal((6, 6)), 1)]


def _row_partials_hidden(rng):
    cases = []
    for _ in range(3):
        p = int(rng.integers(2, 6))
        m, k, n = int(rng.integers(1, 7)), p * int(rng.integers(1, 4)), p * int(rng.integers(1, 3))
        cases.append((rng.standard_normal((m, k)), rng.standard_normal((k, n)), p))
    return cases


QUESTIONS = [
    Question(
        id="06.column_Wr_shape",
        prompt="Column parallel, X 8x12, W 12x20, p = 4: the shape of each rank's weight W_r.",
        answer=lambda: _ledger("column").W_r,
        kind=Shape(),
        wrong=[
            Wrong(lambda: _ledger("row").W_r, "that is the row-parallel block, cut along K. Column "
                                              "parallel cuts W's columns: the N = 20 outputs."),
            Wrong(W_SHAPE, "that is the whole W: each of the 4 ranks holds only a quarter of it."),
            Wrong(lambda: _transposed(_ledger("column").W_r), STORED_NOTE),
        ],
        hint="Column parallel keeps all K = 12 rows of W and gives each rank N/p of its columns.",
        explain="Each rank holds K x N/p: all input features, a quarter of the output features.",
    ),
    Question(
        id="06.column_Yr_shape",
        prompt="Column parallel, X 8x12, W 12x20, p = 4: the shape of each rank's local result Y_r.",
        answer=lambda: _ledger("column").local,
        kind=Shape(),
        wrong=[
            Wrong(lambda: _ledger("row").local, "a local result with Y's full 8x20 shape is a "
                                                "row-parallel partial sum. Column parallel gives "
                                                "each rank only its N/p output columns."),
            Wrong((2, 20), "column parallel does not cut the rows of X (the tokens): every rank "
                           "multiplies the whole X, so all M = 8 rows are there."),
        ],
        hint="Y_r = X W_r: (8 x 12) times (12 x 5).",
        explain="A narrower local result is the mark of column parallel: different columns of Y.",
    ),
    Question(
        id="06.row_Wr_shape",
        prompt="Row parallel, X 8x12, W 12x20, p = 4: the shape of each rank's weight W_r.",
        answer=lambda: _ledger("row").W_r,
        kind=Shape(),
        wrong=[
            Wrong(lambda: _ledger("column").W_r, "that is the column-parallel block. Row parallel "
                                                 "cuts W's rows: the K = 12 contraction."),
            Wrong(lambda: _transposed(_ledger("row").W_r), STORED_NOTE),
        ],
        hint="Row parallel gives each rank K/p of W's rows and keeps all N columns.",
        explain="Each rank holds K/p x N: a slice of the contraction for every output.",
    ),
    Question(
        id="06.row_Xr_shape",
        prompt="Row parallel, X 8x12, W 12x20, p = 4: the shape of the input block X_r each rank "
               "multiplies.",
        answer=lambda: _ledger("row").X_r,
        kind=Shape(),
        wrong=[
            Wrong(X_SHAPE, "with the whole X the product X W_r is not even defined: X has 12 "
                           "columns, W_r only 3 rows. Row parallel must cut X along K too."),
            Wrong((2, 12), "that cuts X's rows (the tokens), which is data or sequence "
                           "parallelism. Row parallel cuts X's columns, along K, to match W_r."),
        ],
        hint="X_r's columns must match W_r's rows.",
        explain="X is cut along the same K as W, so X_r W_r is defined on every rank.",
    ),
    Question(
        id="06.row_Pr_shape",
        prompt="Row parallel, X 8x12, W 12x20, p = 4: the shape of each rank's local result P_r.",
        answer=lambda: _ledger("row").local,
        kind=Shape(),
        wrong=[
            Wrong(lambda: _ledger("column").local, "that is a column shard. Row parallel keeps all "
                                                   "N outputs: P_r has Y's full shape, with only "
                                                   "part of the sum in it."),
            Wrong((8, 3), "P_r = X_r W_r is (8 x 3) times (3 x 20): the contraction 3 disappears."),
        ],
        hint="P_r = X_r W_r: (8 x 3) times (3 x 20).",
        explain="Full shape, incomplete values: the mark of a row-parallel partial sum.",
    ),
    Question(
        id="06.column_merge",
        prompt="How do the column-parallel local results Y_r combine into Y: 'concat' or 'sum'?",
        answer=lambda: _ledger("column").merge,
        kind=Choice(("concat", "sum")),
        wrong=[Wrong("sum", "each Y_r holds different output columns of Y; adding them mixes "
                            "unrelated features. They sit side by side: concatenate along N.")],
        hint="Do two ranks' Y_r describe the same entries of Y or different ones?",
        explain="Different columns: concatenate (an all-gather, if every rank needs all of Y).",
    ),
    Question(
        id="06.row_merge",
        prompt="How do the row-parallel local results P_r combine into Y: 'concat' or 'sum'?",
        answer=lambda: _ledger("row").merge,
        kind=Choice(("concat", "sum")),
        wrong=[Wrong("concat", "each P_r already has Y's full M x N shape; concatenating gives an "
                               "M x pN matrix. XW = X_0 W_0 + ... + X_{p-1} W_{p-1}: add them.")],
        hint="Write XW as a block product along K.",
        explain="Partial sums add up: an all-reduce (sum) if every rank needs Y.",
    ),
    Question(
        id="06.stored_split_kind",
        prompt="A PyTorch nn.Linear(12, 20) stores its weight as a 20x12 tensor. You cut that "
               "tensor along axis 0 into four 5x12 pieces. Which tensor parallelism is that: "
               "'column' or 'row'?",
        answer=lambda: parallel_kind("out_in", 0),
        kind=Choice(("column", "row")),
        wrong=[Wrong("row", "you named the split after what you see in memory. The stored tensor "
                            "is out x in, the transpose of the math W: its axis 0 is the 20 "
                            "outputs, and cutting the outputs is column parallel.")],
        hint="Which of the 20 and the 12 is the output dimension N?",
        explain="Rebuild the math shapes (input, contraction, output) before naming a split.",
    ),
    Question(
        id="06.sharded_exit",
        prompt="After a row-parallel layer on 4 ranks, the next operation wants Y's rows split over "
               "the ranks (rank r keeps a quarter of the tokens). Which collective merges the "
               "partial sums: 'all-gather', 'all-reduce' or 'reduce-scatter'?",
        answer="reduce-scatter",
        kind=Choice(("all-gather", "all-reduce", "reduce-scatter")),
        wrong=[
            Wrong("all-reduce", "it gives the right values, but every rank receives all of Y and "
                                "then drops three quarters of it: twice the bytes a reduce-scatter "
                                "sends. Row parallel is not married to all-reduce."),
            Wrong("all-gather", "all-gather concatenates pieces; partial sums must be added."),
        ],
        hint="You need a sum, and each rank keeps only part of the result.",
        explain="The math says 'sum'; the layout the next step wants picks the collective.",
    ),
    Question(
        id="06.gather_before_gelu",
        prompt="A column-parallel layer is followed by an elementwise GELU and then a row-parallel "
               "layer. Must the column layer's output be all-gathered before the GELU? "
               "(True or False)",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "GELU works on each number alone, and the row-parallel layer wants "
                           "exactly the column block each rank already holds. Gathering first "
                           "is correct but pure extra traffic; the gather can wait, here forever.")],
        hint="What does each operation need from the other ranks' columns?",
        explain="Column then row: the output layout of one is the input layout of the next.",
    ),
    Question(
        id="06.row_partials",
        prompt="Write row_partials(X, W, p) returning the list of the p row-parallel partial sums "
               "P_r = X_r W_r (r = 0 .. p-1).",
        answer=row_parallel,
        kind=Function(_row_partials_cases, hidden=_row_partials_hidden),
        wrong=[
            Wrong(column_parallel, "your function keeps the whole X and cuts W's columns: that is "
                                   "column parallel. Cut W's rows and X's columns, both along K."),
            Wrong(lambda X, W, p: [X @ W] * p, "every rank computes the whole product: nothing is "
                                               "split. Each P_r uses only K/p columns of X."),
        ],
        hint="np.split(X, p, axis=1) and np.split(W, p, axis=0) cut along K.",
        explain="Their sum is X W, whatever the split.",
    ),
    Question(
        id="06.lab_column",
        prompt="Lab: write column_rank(comm, X, W_r), one rank's forward pass of a column-parallel "
               "layer Y = X W: X is the whole M x K input, W_r this rank's K x N/p block of W's "
               "columns; return this rank's M x N/p output Y_r.",
        answer=lambda: solution("06.lab_column", name="column_rank"),
        kind=ColumnLab(),
        answer_name="column_rank",
        hint="Every rank already holds everything its output columns need.",
        explain="Column parallel needs no communication in the layer itself: the shards are "
                "finished output columns, gathered only if the next operation wants them whole.",
    ),
    Question(
        id="06.lab_row",
        prompt="Lab: write row_rank(comm, X_r, W_r), one rank's forward pass of a row-parallel "
               "layer Y = X W: X_r is this rank's M x K/p block of X's columns, W_r the matching "
               "K/p x N block of W's rows; return the whole M x N output Y, on every rank "
               "(comm.all_reduce(a) sums an array over the ranks; comm.all_gather(a, axis) "
               "concatenates).",
        answer=lambda: solution("06.lab_row", name="row_rank"),
        kind=RowLab(),
        answer_name="row_rank",
        hint="X_r W_r has Y's full shape but only part of each dot product.",
        explain="Row parallel: full-shape partial sums, merged by one sum all-reduce.",
    ),
    Question(
        id="06.column_X_shape",
        prompt="Column parallel, X 8x12, W 12x20, p = 4: the shape of the X each rank multiplies.",
        answer=lambda: _ledger("column").X_r,
        kind=Shape(),
        wrong=[
            Wrong(lambda: _ledger("row").X_r,
                  "cutting X along K as well makes each rank's product a partial sum over its "
                  "slice of K: that is row parallel. Column parallel keeps the whole X on every "
                  "rank."),
            Wrong((2, 12), "column parallel does not cut the tokens (the rows of X): every rank "
                           "multiplies the whole X by its columns of W."),
        ],
        explain="Every rank has all of X and a quarter of W's output columns.",
    ),
    Question(
        id="06.column_concat_shape",
        prompt="Column parallel, X 8x12, W 12x20, p = 4: the shape of Y once the four Y_r are "
               "concatenated.",
        answer=lambda: (X_SHAPE[0], W_SHAPE[1]),
        kind=Shape(),
        wrong=[
            Wrong(lambda: _ledger("column").local, "that is one rank's shard; four of them side "
                                                   "by side along N give Y."),
            Wrong((4 * X_SHAPE[0], W_SHAPE[1] // 4),
                  "the shards are columns of Y: they go side by side along N (axis 1), not under "
                  "each other along the tokens."),
        ],
        explain="Concatenating along N rebuilds Y, 8 x 20, exactly.",
    ),
]
