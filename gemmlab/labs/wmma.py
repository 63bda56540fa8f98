"""Lab 12: the fragment loop of a Tensor Core GEMM, written against the course's emulation.

The interface mirrors CUDA's ``nvcuda::wmma``, one 16 x 16 fragment at a time, with the numerics
of :func:`gemmlab.tensorcore.mma` (exact products of FP16/BF16 inputs, FP32 accumulation):

    acc = wmma.fill_fragment(0.0)                  # a 16 x 16 FP32 accumulator fragment
    a = wmma.load_matrix_sync(A, row, col)         # the 16 x 16 tile of A at (row, col)
    acc = wmma.mma_sync(a, b, acc)                 # D = A B + C: one Tensor Core step
    wmma.store_matrix_sync(C, row, col, acc)       # the fragment into C at (row, col)

A load past an edge of the matrix fills zeros there (as the kernel's zero-filled shared tiles
do) and a store writes only the part inside C; a fragment's origin must lie inside its matrix.

The lab question (:class:`WmmaLab`) calls ``lab_wmma(A, B, C)`` (A: M x K, B: K x N in FP16,
C: M x N in FP32), wrapped so that only these calls use them, where the function lives
(:func:`run_fragments`, a run helper), and counts the calls; the judging process names an MMA
count other than ceil(M/16) ceil(N/16) ceil(K/16), a store inside the K loop, C loaded into the
accumulator (C += AB), C written outside the stores, wrong or missing results.
"""
import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from types import SimpleNamespace

from ..judging import FAIL, NOT_ATTEMPTED, PASS, AnswerTypeError, where_it_lives
from ..judging.verdict import count
from .kernel_lab import check_parameters, describe_answer
from .limits import Stop, seconds, where
from .output_hints import wrong_fragment_tile
from .watchdog import Watchdog

FRAG = 16
INPUT_TYPES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


class FragmentError(ValueError):
    """A fragment call with the wrong arguments; the message says what was expected."""


class Fragment:
    """A 16 x 16 fragment: ``use`` is "matrix" (an FP16/BF16 input) or "accumulator" (FP32);
    ``mmas`` counts the MMA steps that built an accumulator."""
    __slots__ = ("data", "use", "mmas")

    def __init__(self, data, use, mmas=0):
        self.data, self.use, self.mmas = data, use, mmas

    def __repr__(self):
        return f"Fragment({self.use}, 16 x 16 {self.data.dtype}, after {self.mmas} MMA steps)"


class Operand:
    """A matrix the lab hands to the student's function: usable only through the fragment calls,
    so that every access is one the check sees (its array is not public: no ``.data``)."""

    def __init__(self, name, data):
        self.name, self._array = name, data
        self.shape, self.dtype, self.ndim = data.shape, data.dtype, data.ndim

    def _refuse(self, *args):
        raise TypeError(f"{self.name} is only read and written through fragments in this lab: "
                        f"wmma.load_matrix_sync({self.name}, row, col) and "
                        f"wmma.store_matrix_sync(C, row, col, acc)")

    __getitem__ = __setitem__ = __array__ = __matmul__ = __rmatmul__ = _refuse

    def __repr__(self):
        return f"Operand({self.name}: {self.shape[0]} x {self.shape[1]} {self.dtype})"


class _Record:
    """What the fragment calls did during one check."""

    def __init__(self):
        self.calls = 0
        self.mmas = 0
        self.loads = {}                   # operand name -> fragments loaded from it
        self.stores = {}                  # (row, col) -> list of the stored fragments' MMA counts


_record = None      # the check in progress, if any


def _matrix(X, what):
    if isinstance(X, Operand):
        return X.name, X._array
    if isinstance(X, np.ndarray) and X.ndim == 2:
        return None, X
    raise FragmentError(f"{what} needs a 2-D matrix (an array, or the A, B, C the lab passes), "
                        f"got {type(X).__name__}")


def _origin(name, X, row, col, what):
    for label, value in (("row", row), ("col", col)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise FragmentError(f"{what}: {label} must be a whole number, got {value!r}")
    rows, cols = X.shape
    if not (0 <= row < rows and 0 <= col < cols):
        raise FragmentError(f"{what}({name or 'X'}, {row}, {col}): the fragment's origin is "
                            f"outside {name or 'the matrix'}, which is {rows} x {cols}")
    return int(row), int(col)


def _count(kind, name=None):
    if _record is not None:
        _record.calls += 1
        if kind == "load":
            _record.loads[name] = _record.loads.get(name, 0) + 1
        elif kind == "mma":
            _record.mmas += 1


def fill_fragment(value=0.0):
    """A 16 x 16 FP32 accumulator fragment filled with ``value``."""
    _count("fill")
    return Fragment(np.full((FRAG, FRAG), value, dtype=np.float32), "accumulator")


def load_matrix_sync(X, row, col):
    """The 16 x 16 tile of X whose top-left element is X[row, col], zero past X's edges: an
    input fragment for FP16/BF16 X, an accumulator fragment for FP32 X."""
    name, data = _matrix(X, "load_matrix_sync")
    row, col = _origin(name, data, row, col, "load_matrix_sync")
    if data.dtype in INPUT_TYPES:
        use = "matrix"
    elif data.dtype == np.float32:
        use = "accumulator"
    else:
        raise FragmentError(f"load_matrix_sync: fragments hold FP16/BF16 inputs or FP32 "
                            f"accumulators, got {data.dtype}")
    _count("load", name)
    tile = np.zeros((FRAG, FRAG), dtype=data.dtype)
    part = data[row:row + FRAG, col:col + FRAG]
    tile[:part.shape[0], :part.shape[1]] = part
    return Fragment(tile, use)


def mma_sync(a, b, c):
    """D = A B + C on fragments (``gemmlab.tensorcore.mma``): a new accumulator fragment."""
    from ..tensorcore import mma
    for label, frag, use in (("a", a, "matrix"), ("b", b, "matrix"), ("c", c, "accumulator")):
        if not isinstance(frag, Fragment):
            raise FragmentError(f"mma_sync: {label} must be a fragment, got {type(frag).__name__}")
        if frag.use != use:
            raise FragmentError(f"mma_sync: {label} must be {'an input' if use == 'matrix' else 'an accumulator'} "
                                f"fragment, got {frag!r}")
    _count("mma")
    return Fragment(mma(a.data, b.data, c.data), "accumulator", c.mmas + 1)


def store_matrix_sync(X, row, col, acc):
    """Write the accumulator fragment ``acc`` into X at (row, col), the part inside X."""
    name, data = _matrix(X, "store_matrix_sync")
    row, col = _origin(name, data, row, col, "store_matrix_sync")
    if not isinstance(acc, Fragment) or acc.use != "accumulator":
        raise FragmentError(f"store_matrix_sync: the fragment must be an accumulator, got {acc!r}")
    _count("store")
    if _record is not None:
        _record.stores.setdefault((row, col), []).append(acc.mmas)
    part = data[row:row + FRAG, col:col + FRAG]
    part[...] = acc.data[:part.shape[0], :part.shape[1]]


@dataclass(frozen=True)
class WmmaLab:
    """The code-question kind of ``12.lab_wmma``: ``lab_wmma(A, B, C)`` on the fragment API."""
    shapes: tuple = ((40, 40, 40), (40, 56, 72), (33, 17, 50))
    seed: int = 12
    time_limit: float = 60.0

    proxy_judge = True                  # runs go through where_it_lives: judged here

    def coerce(self, answer):
        check_function(describe_answer(answer))
        return answer

    def judge(self, question, fn, rng=None):
        """(status, feedback) for ``fn``, wherever it lives."""
        try:
            check_function(where_it_lives(fn, describe_answer))
        except AnswerTypeError as exc:
            return FAIL, f"{exc}."
        status, text = self.verdict(fn, rng)
        if status == PASS and question.explain:
            text += " " + question.explain
        return status, text

    def cases(self, rng=None):
        if rng is None:
            rng, shapes = np.random.default_rng(self.seed), self.shapes
        else:
            n = int(rng.integers(17, 48))
            shapes = [(n, n, n)] + [tuple(int(v) for v in rng.integers(1, 80, 3)) for _ in range(2)]
        for M, N, K in shapes:
            A = rng.uniform(-1, 1, (M, K)).astype(np.float16)
            B = rng.uniform(-1, 1, (K, N)).astype(np.float16)
            yield M, N, K, A, B, rng.uniform(1000, 2000, (M, N)).astype(np.float32)

    def verdict(self, fn, rng=None):
        runs, failed, cases = [], None, list(self.cases(rng))
        for number, (M, N, K, A, B, C0) in enumerate(cases):
            if failed and rng is None:
                break                   # check(): the first failure says it all
            label = f"M x N x K = {M} x {N} x {K}"
            try:
                ran = where_it_lives(fn, run_fragments, A.copy(), B.copy(), C0.copy(),
                                     self.time_limit)
            except Exception:  # past a failure, a broken run (its time is up) ends the count
                if failed is None:
                    raise
                break
            record = SimpleNamespace(calls=ran["calls"], mmas=ran["mmas"], loads=ran["loads"],
                                     stores={(r, c): list(m) for r, c, m in ran["stores"]})
            error, C = ran["error"], np.asarray(ran["C"], dtype=np.float32)
            if number == 0 and error is None and record.calls == 0:
                return NOT_ATTEMPTED, ("your function makes no fragment call yet: write its "
                                       "body and run the cell again.")
            problem = error or _problem(A, B, C0, C, record)
            if problem:
                failed = failed or f"at {label}: {problem}"
            else:
                runs.append((M, N, K, record))
        count(len(runs), len(cases))            # hidden cases all run: those right counted
        if failed:
            return FAIL, failed
        shapes = ", ".join(f"{M}x{N}x{K}" for M, N, K, _ in runs)
        M, N, K, record = runs[-1]
        return PASS, (f"right at {shapes}; at {M}x{N}x{K} {record.mmas} MMA steps "
                      f"(= {_steps(M, N, K)}) and each of the {len(record.stores)} C fragments "
                      f"stored once, after its K loop.")


def check_function(described):
    """An AnswerTypeError unless :func:`describe_answer` describes a plain three-parameter
    function."""
    if described["kernel"]:
        raise AnswerTypeError("this lab's function is plain Python (NumPy fragments), not "
                              "a @cuda.jit kernel: remove the decorator")
    if not described["callable"] or described["parameters"] < 0:
        raise AnswerTypeError(f"expected a function, got {described['type']}: pass its "
                              f"name without calling it")
    check_parameters(described["parameters"], ("A", "B", "C"), "function")


def run_fragments(fn, A, B, C, time_limit):
    """Run helper (where ``fn`` lives): call ``fn`` on wrapped operands while counting; plain
    data: C after the call, the calls, MMA steps, loads per operand, stores per C fragment
    ([row, col, [MMA counts]]) and the error message (None if it returned)."""
    global _record
    operands = {"A": Operand("A", A), "B": Operand("B", B), "C": Operand("C", C)}
    record = _Record()
    _record = record
    error = None
    try:
        with Watchdog(time_limit) as watchdog:
            fn(operands["A"], operands["B"], operands["C"])
    except Stop as stop:
        error = (f"your function did not finish within {seconds(time_limit)} (it was"
                 f"{_line(stop, fn) or ' running'}): is there an endless loop?"
                 if watchdog.fired else "stopped")
    except Exception as exc:        # the student's code: reported, never raised
        error = f"your function raised {type(exc).__name__}: {exc}{_line(exc, fn)}."
    finally:
        _record = None
    return {"C": C, "calls": record.calls, "mmas": record.mmas, "loads": dict(record.loads),
            "stores": [[r, c, list(m)] for (r, c), m in record.stores.items()], "error": error}


def _line(exc, fn):
    """' at line 12 (`...`)': the line of ``fn``'s cell that ``exc`` passed through last."""
    code = getattr(fn, "__code__", None)
    return where(exc, code.co_filename) if code else ""


def _steps(M, N, K):
    m, n, k = (math.ceil(v / FRAG) for v in (M, N, K))
    return f"{m} x {n} x {k} = ceil(M/16) ceil(N/16) ceil(K/16)"


def _operands_swapped(A, B):
    """C as the fragment loop computes it with mma_sync(b, a, acc): tile (i, j) is the sum over k
    of B's tile (k, j) times A's tile (i, k), zero-padded to whole fragments (None if a tile of
    B times a tile of A does not fit)."""
    M, K = A.shape
    N = B.shape[1]
    pad = lambda X, r, c: np.pad(X, ((0, -r % FRAG), (0, -c % FRAG)))
    Ap, Bp = pad(A, M, K), pad(B, K, N)
    out = np.zeros((Ap.shape[0], Bp.shape[1]))
    for i in range(0, Ap.shape[0], FRAG):
        for j in range(0, Bp.shape[1], FRAG):
            for k in range(0, Ap.shape[1], FRAG):
                out[i:i + FRAG, j:j + FRAG] += (Bp[k:k + FRAG, j:j + FRAG]
                                                @ Ap[i:i + FRAG, k:k + FRAG])
    return out[:M, :N]


def _problem(A, B, C0, C, record):
    M, K = A.shape
    N = B.shape[1]
    if record.loads.get("C"):
        return ("you loaded C into the accumulator: the result is the old C plus A B (C += AB). "
                "C = A B starts from a zero accumulator (wmma.fill_fragment(0.0)); loading C "
                "is what beta = 1 would do.")
    stored = {(r + i, c + j) for r, c in record.stores for i in range(FRAG) for j in range(FRAG)}
    outside = [(int(i), int(j)) for i, j in np.argwhere(C != C0) if (i, j) not in stored]
    if outside:
        return (f"C{list(outside[0])} was written outside wmma.store_matrix_sync: every C fragment "
                f"is stored from an accumulator that went through mma_sync.")
    want = math.ceil(M / FRAG) * math.ceil(N / FRAG) * math.ceil(K / FRAG)
    if record.mmas != want:
        hint = (" A loop that stops at the last full fragment (range(M // 16)) misses the edges: "
                "step by 16 up to the end (range(0, M, 16))." if record.mmas < want else
                " Each (fragment of C, step of K) pair needs exactly one MMA: a loop that runs "
                "past the matrices, or that repeats, adds steps.")
        return f"{record.mmas} calls of mma_sync, but the product needs {want} ({_steps(M, N, K)})." + hint
    repeated = {pos: mmas for pos, mmas in record.stores.items() if len(mmas) > 1}
    if repeated:
        (row, col), mmas = next(iter(repeated.items()))
        return (f"the C fragment at ({row}, {col}) was stored {len(mmas)} times (after "
                f"{', '.join(map(str, mmas))} MMA steps): a store inside the K loop. The "
                f"accumulator stays in registers for the whole K loop and is stored once, at "
                f"the end.")
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    ref = A64 @ B64
    from ..tensorcore import accumulation_bound
    tol = accumulation_bound(K) * (np.abs(A64) @ np.abs(B64)) + 4 * 2.0 ** -24 * np.abs(ref) + 1e-30
    wrong = ~(np.abs(C - ref) <= tol)
    if not wrong.any():
        return None
    unstored = C == C0
    if unstored.any():
        i, j = np.argwhere(unstored)[0]
        return (f"C[{i}, {j}] was never stored (it holds the poison {C[i, j]:.6g}): "
                f"{int(unstored.sum())} of {C.size} elements were not written.")
    swapped = _operands_swapped(A64, B64)
    if swapped is not None and np.allclose(C, swapped, rtol=1e-3, atol=1e-3):
        return ("the result is what mma_sync(b, a, acc) gives: the operands of each step are "
                "swapped, so every tile of C sums B's fragment times A's (B_kj A_ik) instead of "
                "A_ik B_kj, and a matrix product does not commute. mma_sync(a, b, c) computes "
                "a b + c: pass the fragment of A first.")
    if A.shape == B.shape and np.allclose(C, B64 @ A64, rtol=1e-3, atol=1e-3):
        return ("the result equals B @ A: A and B swapped roles. The A fragment of C's tile at "
                "(i, j) comes from A at (i, k), the B fragment from B at (k, j).")
    tile = wrong_fragment_tile(A64, B64, C)
    if tile:
        return tile
    i, j = np.argwhere(wrong)[0]
    return (f"C[{i}, {j}] is {C[i, j]:.6g}, expected {ref[i, j]:.6g} (the C fragment at "
            f"({i // FRAG * FRAG}, {j // FRAG * FRAG})); {int(wrong.sum())} of {C.size} elements "
            f"are wrong.")


LAB = WmmaLab()
