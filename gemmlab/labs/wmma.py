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
C: M x N in FP32) in the answer runtime (:mod:`gemmlab.judging.runtime`), where A, B, C and
every fragment are handles: the matrices never enter it. Each fragment call there asks the
judge, whose :class:`Fragments` holds the matrices and fragments, does the call with this
module's function of that name and counts it; a function that lives here (a file's, a test's)
is called on the named matrices and counted the same way. The judge names an MMA count other
than ceil(M/16) ceil(N/16) ceil(K/16), C never stored, a store inside the K loop, C loaded into
the accumulator (C += AB), a stored accumulator whose MMAs are not its tile's K range, wrong or
missing results.
"""
import math
import threading
from collections import Counter
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ..judging import FAIL, NOT_ATTEMPTED, PASS, AnswerTypeError, values
from ..judging.cell import CellFunction
from ..judging.runtime import served
from ..judging.verdict import count
from .kernel_lab import check_parameters, describe_answer
from .limits import Stop, seconds, where
from .output_hints import wrong_fragment_tile
from .watchdog import Watchdog

FRAG = 16
INPUT_TYPES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
MAX_HELD = 20_000       # fragments the judge holds for one run (1 KiB each): a loop is refused
# What the answer runtime shows of a fragment (a handle: its numbers stay with the judge)
FRAGMENT_SEEN = {"what": "a fragment", "repr": "<a fragment: a handle, its numbers are the judge's>",
                 "rule": "a fragment's array stays with the judge, which does each call: pass the "
                         "fragment to wmma.mma_sync and wmma.store_matrix_sync"}


class FragmentError(ValueError):
    """A fragment call with the wrong arguments; the message says what was expected."""


class Fragment:
    """A 16 x 16 fragment: ``use`` is "matrix" (an FP16/BF16 input) or "accumulator" (FP32);
    ``origin``: (matrix, row, col) it was loaded from; ``mmas`` counts the MMA steps that built
    an accumulator, and ``chain`` links their (A origin, B origin) pairs, newest first
    (``(pair, rest)``: a step costs one link, however long the chain)."""
    __slots__ = ("data", "use", "origin", "mmas", "chain")

    def __init__(self, data, use, origin=None, mmas=0, chain=()):
        self.data, self.use, self.origin, self.mmas, self.chain = data, use, origin, mmas, chain

    def __repr__(self):
        return f"Fragment({self.use}, 16 x 16 {self.data.dtype}, after {self.mmas} MMA steps)"

    def pairs(self, limit=64):
        """The (A origin, B origin) pairs of its last ``limit`` MMA steps."""
        found, chain = [], self.chain
        while chain and len(found) < limit:
            pair, chain = chain
            found.append(pair)
        return found


class Operand:
    """A matrix of the lab by its name (A, B, C), as the judge's fragment calls use it."""

    def __init__(self, name, data):
        self.name, self.array = name, data
        self.shape, self.dtype, self.ndim = data.shape, data.dtype, data.ndim

    def __repr__(self):
        return f"Operand({self.name}: {self.shape[0]} x {self.shape[1]} {self.dtype})"


_local = threading.local()      # .run: the Fragments whose calls this thread counts, if any


def _count(kind, *what):
    run = getattr(_local, "run", None)
    if run is not None:
        run.count(kind, *what)


def _matrix(X, what):
    if isinstance(X, Operand):
        return X.name, X.array
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
    return Fragment(tile, use, (name, row, col))


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
    return Fragment(mma(a.data, b.data, c.data), "accumulator", None, c.mmas + 1,
                    ((a.origin, b.origin), c.chain))


def store_matrix_sync(X, row, col, acc):
    """Write the accumulator fragment ``acc`` into X at (row, col), the part inside X."""
    name, data = _matrix(X, "store_matrix_sync")
    row, col = _origin(name, data, row, col, "store_matrix_sync")
    if not isinstance(acc, Fragment) or acc.use != "accumulator":
        raise FragmentError(f"store_matrix_sync: the fragment must be an accumulator, got {acc!r}")
    _count("store", name, (row, col), (acc.mmas, acc.pairs()))
    part = data[row:row + FRAG, col:col + FRAG]
    part[...] = acc.data[:part.shape[0], :part.shape[1]]


CALLS = {f.__name__: f for f in (fill_fragment, load_matrix_sync, mma_sync, store_matrix_sync)}


class Fragments:
    """The judge's side of one run of ``lab_wmma``: A, B, C (its own copies), every fragment the
    answer made (``held``, by the number of its handle in the runtime), the count of its calls
    (``mmas``, ``loads`` per matrix, ``stores`` per C fragment: the MMA steps of each stored
    accumulator and their pairs)
    and the first call refused (``refused``: the message)."""

    def __init__(self, A, B, C):
        self.held = dict(enumerate((Operand("A", A), Operand("B", B), Operand("C", C))))
        self.calls, self.mmas, self.loads, self.stores = 0, 0, {}, {}
        self.refused = None

    def count(self, kind, name=None, at=None, built=None):
        self.calls += 1
        if kind == "load":
            self.loads[name] = self.loads.get(name, 0) + 1
        elif kind == "mma":
            self.mmas += 1
        elif kind == "store" and name == "C":
            self.stores.setdefault(at, []).append(built)

    def run(self, fn, time_limit):
        """Call ``fn`` on A, B, C, counting its fragment calls: in the runtime on handles, each
        call asked here (:meth:`answer`); a function here on the named matrices. The error
        message, or None if it returned."""
        _local.run = self
        watchdog = None
        try:
            if isinstance(fn, CellFunction):
                served(fn, self.answer, *map(self.handle, range(3)))
            else:
                with Watchdog(time_limit) as watchdog:
                    fn(*(self.held[i] for i in range(3)))
        except Stop as stop:
            return (f"your function did not finish within {seconds(time_limit)} (it was"
                    f"{_line(stop, fn) or ' running'}): is there an endless loop?"
                    if watchdog and watchdog.fired else "stopped")
        except TimeoutError as exc:     # the runtime's deadline
            return f"your function did not finish: {exc}."
        except Exception as exc:        # the student's code: reported, never raised
            return f"your function raised {type(exc).__name__}: {exc}{_line(exc, fn)}."
        finally:
            _local.run = None
        if self.refused:        # before what the answer raised later, past the refused call
            return f"your function raised FragmentError: {self.refused}."
        return None

    def handle(self, index):
        """What the runtime holds of the matrix ``held[index]``: its number, what may be seen."""
        name, (rows, cols) = self.held[index].name, self.held[index].shape
        return {"handle": index, "seen": {
            "what": name, "shape": (rows, cols), "dtype": str(self.held[index].dtype), "ndim": 2,
            "repr": f"<{name}: {rows} x {cols}, a handle: its numbers are the judge's>",
            "rule": f"{name} is only read and written through fragments in this lab: "
                    f"wmma.load_matrix_sync({name}, row, col) and "
                    f"wmma.store_matrix_sync(C, row, col, acc); its numbers stay with the judge, "
                    f"which does each call ({name} is a handle: {name}.shape, {name}.dtype)"}}

    def answer(self, ask):
        """Do one call the runtime asked for (``{"call", "args", "kwargs", "ref", "at"}``): what
        it made is held under ``ref``; the first call that cannot be done is kept in
        ``refused`` (the reason and where), and none after it is done."""
        if self.refused:
            return
        try:
            ref, call = ask["ref"], CALLS[ask["call"]]
            if type(ref) is not int or ref in self.held:
                raise FragmentError(f"a second call numbered {ref!r} (the runtime numbers them)")
            if len(self.held) >= MAX_HELD:
                raise FragmentError(f"more than {MAX_HELD} fragments in one run (the product "
                                    f"needs a few hundred)")
            self.held[ref] = call(*map(self._argument, ask["args"]),
                                  **{str(k): self._argument(v) for k, v in ask["kwargs"].items()})
        except Exception as exc:  # what the answer's process asked for: refused, with the reason
            where = ask.get("at") if isinstance(ask, dict) else ""
            self.refused = f"{str(exc)[:500]}{str(where or '')[:120]}"

    def _argument(self, data):
        """A held object for a handle's data, else the plain value (never an array)."""
        if isinstance(data, dict) and data.get("t") == "handle":
            if self.held.get(data.get("v")) is None:
                raise FragmentError("this handle holds no fragment or matrix (what a store "
                                    "returns holds nothing)")
            return self.held[data.get("v")]
        value = values.decode(data)
        if isinstance(value, np.ndarray):
            raise FragmentError("the fragment calls take the lab's A, B, C and fragments")
        return value


@dataclass(frozen=True)
class WmmaLab:
    """The code-question kind of ``12.lab_wmma``: ``lab_wmma(A, B, C)`` on the fragment API."""
    shapes: tuple = ((40, 40, 40), (40, 56, 72), (33, 17, 50))
    seed: int = 12
    time_limit: float = 60.0

    proxy_judge = True                  # runs only through Fragments.run: judged here
    in_runtime = True                   # a cell's answer runs in the answer runtime

    def coerce(self, answer):
        check_function(describe_answer(answer))
        return answer

    def judge(self, question, fn, rng=None):
        """(status, feedback) for ``fn``: an answer in the runtime, or a function here."""
        if not isinstance(fn, CellFunction):
            try:
                check_function(describe_answer(fn))
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
            run = Fragments(A.copy(), B.copy(), C0.copy())
            error = run.run(fn, self.time_limit)
            if number == 0 and error is None and run.calls == 0:
                return NOT_ATTEMPTED, ("your function makes no fragment call yet: write its "
                                       "body and run the cell again.")
            problem = error or _problem(A, B, C0, run)
            if problem:
                failed = failed or f"at M x N x K = {M} x {N} x {K}: {problem}"
            else:
                runs.append((M, N, K, run))
        count(len(runs), len(cases))            # hidden cases all run: those right counted
        if failed:
            return FAIL, failed
        shapes = ", ".join(f"{M}x{N}x{K}" for M, N, K, _ in runs)
        M, N, K, run = runs[-1]
        return PASS, (f"right at {shapes}; at {M}x{N}x{K} {run.mmas} MMA steps "
                      f"(= {_steps(M, N, K)}) and each of the {len(run.stores)} C fragments "
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


def _problem(A, B, C0, record):
    M, K = A.shape
    N = B.shape[1]
    C = record.held[2].array
    if record.loads.get("C"):
        return ("you loaded C into the accumulator: the result is the old C plus A B (C += AB). "
                "C = A B starts from a zero accumulator (wmma.fill_fragment(0.0)); loading C "
                "is what beta = 1 would do.")
    want = math.ceil(M / FRAG) * math.ceil(N / FRAG) * math.ceil(K / FRAG)
    if record.mmas != want:
        hint = (" A loop that stops at the last full fragment (range(M // 16)) misses the edges: "
                "step by 16 up to the end (range(0, M, 16))." if record.mmas < want else
                " Each (fragment of C, step of K) pair needs exactly one MMA: a loop that runs "
                "past the matrices, or that repeats, adds steps.")
        return f"{record.mmas} calls of mma_sync, but the product needs {want} ({_steps(M, N, K)})." + hint
    if not record.stores:
        return ("C was never stored: C is written only by wmma.store_matrix_sync(C, row, col, "
                "acc), from an accumulator that mma_sync built along the whole K range, and "
                "no call stored any of its fragments.")
    repeated = {pos: built for pos, built in record.stores.items() if len(built) > 1}
    if repeated:
        (row, col), built = next(iter(repeated.items()))
        return (f"the C fragment at ({row}, {col}) was stored {len(built)} times (after "
                f"{', '.join(str(mmas) for mmas, _ in built)} MMA steps): a store inside the K loop. The "
                f"accumulator stays in registers for the whole K loop and is stored once, at "
                f"the end.")
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    ref = A64 @ B64
    from ..tensorcore import accumulation_bound
    tol = accumulation_bound(K) * (np.abs(A64) @ np.abs(B64)) + 4 * 2.0 ** -24 * np.abs(ref) + 1e-30
    wrong = ~(np.abs(C - ref) <= tol)
    if not wrong.any():
        return _unbuilt(record.stores, K)
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


def _unbuilt(stores, K):
    """The C fragment stored from an accumulator whose MMA steps are not A's fragments (i, k)
    times B's (k, j) for every k of the K range, named; None if every one is."""
    for (row, col), built in stores.items():
        want = Counter((("A", row, k), ("B", k, col)) for k in range(0, K, FRAG))
        mmas, pairs = built[-1]
        if mmas != len(pairs) or Counter(pairs) != want:
            return (f"the C fragment at ({row}, {col}) was stored from an accumulator whose "
                    f"{mmas} MMA steps are not A's fragments ({row}, k) times B's "
                    f"(k, {col}) for each k = 0, 16, ... below K = {K}: a stored fragment is "
                    f"the sum over its whole K range, built in the accumulator that is stored.")
    return None


LAB = WmmaLab()
