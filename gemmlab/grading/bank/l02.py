"""Lesson 02, from neurons to GEMM: weighted sums as XW = Y, nn.Linear's weight layout,
row-major indices, byte addresses and strides, and the naive triple loop."""
import numpy as np

from ._choices import options_text
from ...judging import Array, Choice, Exact, Function, Question, Shape, Wrong

# The seed's example: two inputs with three features, two neurons.
X = np.array([[1, 2, 3], [4, 5, 6]])
W = np.array([[7, 8], [9, 10], [11, 12]])          # one column per neuron
WEIGHT = W.T                                         # nn.Linear stores out x in

LINEAR_IN, LINEAR_OUT = 512, 2048
B_SHAPE = (300, 70)                                  # (K, N)
A_SHAPE, A_BASE, A_ELEMENT = (6, 10), 4096, (2, 7)   # float32 A, its base address, one element
ITEMSIZE = 4


def _row_major_index(r, c, rows, cols):
    return r * cols + c


def _index_cases():
    rng = np.random.default_rng(2)
    cases = []
    for rows, cols in ((3, 5), (7, 2), (4, 9), (1, 6), (11, 3)):
        for _ in range(3):
            cases.append((int(rng.integers(rows)), int(rng.integers(cols)), rows, cols))
    return cases


def _index_hidden(rng):
    shapes = [tuple(int(v) for v in rng.integers(1, 40, size=2)) for _ in range(6)]
    return [(int(rng.integers(rows)), int(rng.integers(cols)), rows, cols) for rows, cols in shapes]


def _byte_address():
    i, k = A_ELEMENT
    return A_BASE + _row_major_index(i, k, *A_SHAPE) * ITEMSIZE


def _naive_matmul(A, B):
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N))
    for i in range(M):
        for j in range(N):
            acc = 0.0
            for k in range(K):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc
    return C


def _accumulator_not_reset(A, B):
    """The accumulator set to 0 once per row instead of once per output: C[i, j] carries the
    sums of the outputs to its left."""
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        acc = 0.0
        for j in range(B.shape[1]):
            for k in range(A.shape[1]):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc
    return C



STRIDE_REASON = {
    "a": "a matrix is stored column after column, and B has N columns, so going from B[k, j] to "
         "B[k+1, j] skips over one whole column of N elements",
    "b": "row-major storage puts whole rows one after another, and a row of B holds N elements: "
         "between B[k, j] and B[k+1, j] lies exactly one row",
    "c": "the stride of each dimension equals the size of that same dimension, whatever the "
         "layout: B's second dimension is N, so moving along k costs N",
}
PLUS_EQUALS = {
    "a": "AB, the same as with C[i, j] = acc: the loop writes each output element once, so += has "
         "nothing else to add to",
    "b": "2 AB: the loop accumulates acc over k and then adds it into C[i, j], so each product can "
         "end up counted twice",
    "c": "C_old + AB: the result would depend on what C held before, and a second call would add "
         "AB again",
}


def _matmul_cases():
    rng = np.random.default_rng(3)
    return [(rng.integers(-4, 5, (m, k)), rng.integers(-4, 5, (k, n)))
            for m, k, n in ((2, 3, 2), (3, 1, 4), (1, 5, 3), (4, 3, 1))]


def _matmul_hidden(rng):
    shapes = [(int(rng.integers(1, 7)), int(rng.integers(1, 7)), int(rng.integers(2, 7)))
              for _ in range(4)]
    return [(rng.standard_normal((m, k)), rng.standard_normal((k, n))) for m, k, n in shapes]


QUESTIONS = [
    Question(
        id="02.two_neurons",
        answer_name="Y",
        prompt="Y for inputs X = [[1,2,3],[4,5,6]] (one input per row) and two neurons whose "
               "weights are the columns of W = [[7,8],[9,10],[11,12]], as a 2 x 2 array.",
        answer=lambda: X @ W,
        kind=Array(),
        wrong=[
            Wrong(lambda: (X @ W).T, "that is Y transposed. In XW = Y each input keeps its row: "
                                     "row m of Y holds input m's outputs, column n is neuron n."),
            Wrong(lambda: X[:, :2] * W[:2, :], "that multiplies entries pairwise. A neuron's output "
                                              "is a dot product: all three features times the "
                                              "three weights, summed."),
        ],
        hint="Y[m, n] is input m (row m of X) dotted with neuron n's weights (column n of W).",
        explain="Every output is one dot product; stacking inputs as rows of X and neurons as "
                "columns of W turns all of them into one matrix product.",
    ),
    Question(
        id="02.linear_weight_shape",
        answer_name="weight_shape",
        prompt=f"The shape of nn.Linear(in_features={LINEAR_IN}, out_features={LINEAR_OUT}).weight.",
        answer=lambda: (LINEAR_OUT, LINEAR_IN),
        kind=Shape(),
        wrong=[
            Wrong((LINEAR_IN, LINEAR_OUT),
                  "that is the shape of W in X @ W (in x out). PyTorch stores the weight as "
                  "out x in and computes Y = X @ weight.T, so this lesson's W is weight.T."),
        ],
        hint="One row of the weight per output feature.",
        explain="Each row of weight is one neuron's weights, contiguous in memory.",
    ),
    Question(
        id="02.linear_layer_output",
        answer_name="Y_linear",
        prompt="With weight = [[7,9,11],[8,10,12]] stored out x in as nn.Linear does, compute "
               "Y = X @ weight.T for X = [[1,2,3],[4,5,6]].",
        answer=lambda: X @ WEIGHT.T,
        kind=Array(),
        wrong=[
            Wrong(lambda: WEIGHT @ X.T, "that is weight @ X.T = Y.T: outputs down the rows and "
                                       "inputs across. Y keeps one row per input."),
        ],
        hint="weight.T is this lesson's W: one column per neuron.",
        explain="The same numbers as XW: only where the weights sit in memory differs.",
    ),
    Question(
        id="02.row_major_index",
        prompt="Write row_major_index(r, c, rows, cols): the element index of [r, c] in a "
               "contiguous row-major rows x cols array (counting from 0).",
        answer=_row_major_index,
        kind=Function(cases=_index_cases, hidden=_index_hidden),
        wrong=[
            Wrong(lambda r, c, rows, cols: r * rows + c,
                  "the row stride is the length of a row, which is the number of COLUMNS. Moving "
                  "down one row skips a whole row of cols elements."),
            Wrong(lambda r, c, rows, cols: c * rows + r,
                  "that is column-major order (Fortran, cuBLAS's default). Row-major stores one "
                  "row after another, so the column index moves fastest."),
        ],
        hint="How many elements lie before row r? Then how many before column c inside row r?",
        explain="A[i,k] is i*K + k, B[k,j] is k*N + j and C[i,j] is i*N + j.",
    ),
    Question(
        id="02.b_row_stride",
        prompt=f"B has shape (K, N) = {B_SHAPE}, row-major and contiguous. By how many elements "
               f"does the address move when k grows by 1 (B's row stride)?",
        answer=lambda: B_SHAPE[1],
        kind=Exact(int, unit="elements"),
        wrong=[
            Wrong(B_SHAPE[0], "that is K, the number of rows. One step down a row skips a whole "
                              "row, and a row of B holds N elements."),
            Wrong(B_SHAPE[1] * ITEMSIZE, "that is the stride in bytes (for FP32). The question "
                                         "counts elements."),
            Wrong(1, "1 is the stride along a row (j grows by 1). Going down a column (k grows "
                     "by 1) jumps a whole row."),
        ],
        hint="What lies between B[k, j] and B[k+1, j] in memory?",
    ),
    Question(
        id="02.byte_address",
        answer_name="address",
        prompt=f"A float32 array A of shape {A_SHAPE} (row-major, contiguous) starts at byte "
               f"address {A_BASE}. The byte address of A[{A_ELEMENT[0]}, {A_ELEMENT[1]}].",
        answer=_byte_address,
        kind=Exact(int, unit="B"),
        wrong=[
            Wrong(lambda: A_BASE + _row_major_index(*A_ELEMENT, *A_SHAPE),
                  "that adds the element index, not the byte offset: each float32 takes 4 bytes, "
                  "so multiply the index by 4."),
            Wrong(lambda: A_BASE + (A_ELEMENT[0] * A_SHAPE[0] + A_ELEMENT[1]) * ITEMSIZE,
                  "the row stride is the number of columns (10), not of rows (6)."),
            Wrong(lambda: A_BASE + (A_ELEMENT[1] * A_SHAPE[0] + A_ELEMENT[0]) * ITEMSIZE,
                  "that is the column-major address; this array is row-major."),
        ],
        hint="address = base + (i * K + k) * bytes per element.",
    ),
    Question(
        id="02.transpose_strides",
        prompt=f"weight is a contiguous float32 array of shape ({LINEAR_OUT}, {LINEAR_IN}). "
               f"weight.T.strides, the byte strides of its transpose, as a tuple.",
        answer=lambda: np.empty((LINEAR_OUT, LINEAR_IN), dtype=np.float32).T.strides,
        kind=Shape(),
        wrong=[
            Wrong((LINEAR_IN * ITEMSIZE, ITEMSIZE),
                  "those are weight's own strides. .T copies nothing: it is a view that swaps "
                  "the two strides, so the transpose walks the same memory column-wise."),
            Wrong((1, LINEAR_IN), "NumPy strides count bytes, not elements: multiply by 4."),
            Wrong((ITEMSIZE, LINEAR_OUT * ITEMSIZE),
                  "the first stride is right; the second is weight's row stride, and a row of "
                  f"weight holds {LINEAR_IN} elements ({LINEAR_IN * ITEMSIZE} B), not {LINEAR_OUT}."),
        ],
        hint="Transposing swaps the strides and keeps the memory.",
        explain="A transposed view is not contiguous: never assume layout from the shape alone.",
    ),
    Question(
        id="02.naive_matmul",
        prompt="Write naive_matmul(A, B) that returns C = AB with three explicit loops (i, j, k), "
               "one accumulator per output starting at 0.",
        answer=_naive_matmul,
        kind=Function(cases=_matmul_cases, hidden=_matmul_hidden),
        wrong=[
            Wrong(_accumulator_not_reset,
                  "the accumulator is reset once per row instead of once per output, so each "
                  "C[i, j] also contains the outputs to its left. Start acc at 0 inside the j loop: "
                  "the function computes C = AB, not C += AB."),
            Wrong(lambda A, B: np.zeros((np.shape(A)[0], np.shape(B)[1])),
                  "every output is 0: the accumulated value is never stored into C[i, j]."),
        ],
        hint="for i: for j: acc = 0; for k: acc += A[i, k] * B[k, j]; C[i, j] = acc.",
        explain="i and j pick an output; k walks its dot product.",
    ),
    Question(
        id="02.b_row_stride_reason",
        prompt="Why is the row stride of a row-major B of shape (K, N) equal to N, not K? Pick "
               "one:\n" + options_text(STRIDE_REASON),
        answer="b",
        kind=Choice(tuple(STRIDE_REASON)),
        wrong=[
            Wrong("a", "that describes column-major storage (Fortran, cuBLAS's default). In "
                       "row-major order the elements of a row are neighbours, and the next row "
                       "starts after all N of them."),
            Wrong("c", "the stride of a dimension is how far the address moves when that index "
                       "grows by 1: for k that is a whole row of N elements, for j one element. "
                       "The size K of the first dimension only sets the total size."),
        ],
        explain="Strides follow from the layout, not from the shape alone: a transposed view has "
                "the same shape as a copy but other strides.",
    ),
    Question(
        id="02.plus_equals_meaning",
        prompt="The naive loop writes C[i, j] = acc. If it wrote C[i, j] += acc into a C that "
               "already held values, what would it compute? Pick one:\n"
               + options_text(PLUS_EQUALS),
        answer="c",
        kind=Choice(tuple(PLUS_EQUALS)),
        wrong=[
            Wrong("a", "+= adds to whatever C[i, j] held: C_old + AB, which is GEMM with beta = 1. "
                       "The course's naive loop computes C = AB, a function of A and B alone."),
            Wrong("b", "the loop adds AB once per call; 2 AB would need C_old = AB, i.e. a second "
                       "call on the result of a first one."),
        ],
        explain="Fixing C = AB makes every faster version checkable against one reference; "
                "accumulation is asked for explicitly, as beta C_in.",
    ),
]
