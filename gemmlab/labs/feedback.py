"""What a kernel lab says: the checks of one run, in the order a student should fix them, each
returning the message for the mistake it sees (or None), and the summary of a passing kernel.

Order: a fault (out of bounds, a barrier not every thread reaches, an exception, an endless
loop), writes into the inputs, a shared-memory race, a read of shared memory nobody wrote, the
result (unwritten elements, C += AB, a layout mistake, wrong values and where), C written more
than once, the wrong owner, and then what the lab measures: global traffic, barriers per K tile,
the ping-pong overlap (:mod:`.overlap`), shared reads per FMA and register prefetch. Every check
reads a run's observations (:class:`gemmlab.labs.observations.Observed`), never the run itself.
"""
import numpy as np

from . import overlap
from .observations import as_sentence, global_race_advice
from .output_hints import shared_index_swapped
from .registers import prefetch_steps

OUT_OF_BOUNDS_HINT = (" When M, N or K is not a multiple of the tile, the last blocks and K tiles "
                      "reach past the matrices: guard every global access (row < M, col < N, "
                      "k < K) and, for a tile, store a zero where the matrix ends.")


def untouched(trace):
    """The kernel did nothing at all: no read of A or B, no write of C, no fault."""
    arrays = trace.arrays
    return (trace.fault is None and not any(arrays[n].thread_reads for n in ("A", "B"))
            and not arrays["C"].thread_writes)


def first_problem(lab, case, C, trace):
    for check in CHECKS:
        message = check(lab, case, C, trace)
        if message:
            return message
    return None


def _fault(lab, case, C, trace):
    if trace.fault is not None:
        hint = OUT_OF_BOUNDS_HINT if trace.fault.kind == "out of bounds" else ""
        return as_sentence(str(trace.fault)) + hint


def _inputs_written(lab, case, C, trace):
    for name in ("A", "B"):
        array = trace.arrays[name]
        if array.thread_writes:
            gid = next(iter(array.thread_writes))
            return (f"{trace.who(gid)} wrote into {name}: A and B are the inputs, the kernel "
                    f"only reads them (and writes C).")


def _race(lab, case, C, trace):
    if not trace.races:
        return None
    race = trace.races[0]
    if race.space == "global":
        return f"{race.describe()}: a race through global memory. {global_race_advice(race)}"
    text = race.describe() + ": a shared-memory race."
    if race.kind == "write-write":
        return text + " Give every element of the tile one writer."
    if not race.had_value:
        return text + (" The read came before the tile was complete: put cuda.syncthreads() "
                       "between the loads into shared memory and the loop that reads them.")
    if lab.one_barrier:
        return text + (" The load of the next tile went into the buffer still being read "
                       "(load 覆盖正在计算的槽位): compute tile t from buffer t % 2 and load "
                       "tile t+1 into the other one, (t+1) % 2.")
    return text + (" The next tile's load overwrote data another thread was still reading: put "
                   "cuda.syncthreads() after the compute loop, before the next load.")


def _uninitialized(lab, case, C, trace):
    if trace.uninitialized:
        name, index, who, block, line = trace.uninitialized[0]
        at = f" at {line}" if line else ""
        return (f"{who} of {block} read {name}[{', '.join(map(str, index))}]{at} before any "
                f"thread of the block had written it. Shared memory is not cleared when a block "
                f"starts: on a GPU that element holds garbage left by an earlier block or "
                f"kernel, whatever the simulator shows, so the result would change from run to "
                f"run. At the edges store zeros into the tile where the matrix ends, instead of "
                f"skipping the store.")


def _result(lab, case, C, trace):
    ref, tol = case.reference(), case.tolerance()
    c_array = trace.arrays["C"]
    writes = c_array.counts("writes")
    if c_array.read_before_write is not None:
        (i, j), gid, line = c_array.read_before_write
        added = np.allclose(C, case.C0.astype(np.float64) + ref, atol=0, rtol=1e-5)
        return (f"{trace.who(gid)} read C[{i}, {j}]{f' at {line}' if line else ''} before writing it"
                f"{': the result is the old C plus A B' if added else ''}. The lab computes "
                f"C = A B: C is an output only. Accumulating into it (C += A B, as with beta = 1) "
                f"is a different operation; keep the sum in a register and write C once.")
    unwritten = np.argwhere(writes == 0)
    if len(unwritten):
        i, j = unwritten[0]
        return (f"C[{i}, {j}] was never written (it still holds the poison {C[i, j]:.6g}); "
                f"{_owner(lab, i, j)} owns it. {len(unwritten)} of {C.size} elements were never "
                f"written{_where(lab, case, unwritten)}.")
    wrong = ~(np.abs(C - ref) <= tol)
    if not wrong.any():
        return None
    layout = _layout(case, C) or shared_index_swapped(case.A, case.B, C, lab.tile)
    if layout:
        return layout
    i, j = np.argwhere(wrong)[0]
    got = "NaN (a value read from memory nobody wrote?)" if np.isnan(C[i, j]) else f"{C[i, j]:.6g}"
    return (f"C[{i}, {j}] is {got}, expected {ref[i, j]:.6g} ({_owner(lab, i, j)} computes it); "
            f"{int(wrong.sum())} of {C.size} elements are wrong"
            f"{_where(lab, case, np.argwhere(wrong), C)}.")


def _layout(case, C):
    """A result that is another product of A and B than A @ B (square cases show it)."""
    A, B = case.A.astype(np.float64), case.B.astype(np.float64)
    candidates = (
        ("(A @ B).T", lambda: (A @ B).T, "the transpose of A B: rows and columns of C are "
         "swapped (C[col, row] written instead of C[row, col])"),
        ("A @ B.T", lambda: A @ B.T, "A B^T: B is read transposed (B[col, k] instead of "
         "B[k, col]); in row-major B (K x N), element (k, n) is B[k, n]"),
        ("A.T @ B", lambda: A.T @ B, "A^T B: A is read transposed (A[k, row] instead of "
         "A[row, k])"),
        ("B @ A", lambda: B @ A, "B A: the factors are multiplied in the wrong order"),
    )
    for name, product, meaning in candidates:
        try:
            other = product()
        except ValueError:          # shapes that do not multiply
            continue
        if other.shape == C.shape and np.allclose(C, other, rtol=1e-5, atol=1e-5):
            return f"the result equals {name}, {meaning}."


def _where(lab, case, elements, C=None):
    """Where wrong elements are, when that says what went wrong (``C``: the result, to recognise
    a missing last K tile)."""
    rows, cols = elements[:, 0], elements[:, 1]
    edge_rows = case.M - case.M % lab.tile if case.M % lab.tile else None
    edge_cols = case.N - case.N % lab.tile if case.N % lab.tile else None
    on_edge = np.zeros(len(elements), bool)
    if edge_rows is not None:
        on_edge |= rows >= edge_rows
    if edge_cols is not None:
        on_edge |= cols >= edge_cols
    if on_edge.all() and (edge_rows is not None or edge_cols is not None):
        return (", all in the blocks on the edge of C, which reach past the matrix: an edge "
                "guard that is missing or wrong?")
    if case.K % 16 and len(elements) == case.M * case.N and C is not None \
            and _without_last_k_tile(case, C):
        return (f" (K = {case.K} is not a multiple of the K tile, and the result is the product "
                f"without the last, partial K tile: compute that tile too, with zeros where A "
                f"and B end)")
    return ""


def _without_last_k_tile(case, C):
    """Whether C is A B with the last partial K tile (of any tile depth up to 32) left out."""
    A, B = case.A.astype(np.float64), case.B.astype(np.float64)
    for depth in (8, 16, 32):
        full = case.K - case.K % depth
        if case.K % depth and np.allclose(C, A[:, :full] @ B[:full], rtol=1e-4, atol=1e-5):
            return True
    return False


def _owner(lab, i, j):
    bx, by = j // lab.tile, i // lab.tile
    if lab.fixed_owner:
        return f"thread ({j % lab.tile},{i % lab.tile}) of block ({bx},{by})"
    return f"a thread of block ({bx},{by})"


def _writes_once(lab, case, C, trace):
    writes = trace.arrays["C"].counts("writes")
    if writes.max() > 1:
        i, j = np.argwhere(writes == writes.max())[0]
        return (f"C[{i}, {j}] was written {writes.max()} times: keep the running sum in a "
                f"register (a local variable) and write each element of C once, at the end.")


def _ownership(lab, case, C, trace):
    writer = trace.arrays["C"].counts("writer")
    for (i, j), gid in np.ndenumerate(writer):
        block, thread = trace.locate(gid)
        owner_block = (j // lab.tile, i // lab.tile, 0)
        if block != owner_block or (lab.fixed_owner and thread != (j % lab.tile, i % lab.tile, 0)):
            return (f"C[{i}, {j}] was written by {trace.who(gid)}, but with the lab's launch "
                    f"{_owner(lab, i, j)} owns it: {_ownership_rule(lab)}")
    if lab.per_thread > 1:
        return _micro_tiles(lab, case, trace)


def _ownership_rule(lab):
    if lab.fixed_owner:
        return (f"thread (x, y) of block (bx, by) computes C[by*{lab.tile} + y, bx*{lab.tile} + x]"
                f" (x runs along a row of C, so a warp's 32 threads write consecutive elements: "
                f"one coalesced store).")
    return (f"block (bx, by) computes the {lab.tile} x {lab.tile} tile of C at rows by*{lab.tile}, "
            f"columns bx*{lab.tile}.")


def _micro_tiles(lab, case, trace):
    """In blocks wholly inside C, every thread writes its per_thread x per_thread micro-tile."""
    want = lab.per_thread ** 2
    full_x, full_y = case.N // lab.tile, case.M // lab.tile
    writes = trace.arrays["C"].thread_writes
    for by in range(full_y):
        for bx in range(full_x):
            linear = by * trace.grid[0] + bx
            for local in range(trace.threads_per_block):
                gid = linear * trace.threads_per_block + local
                if writes.get(gid, 0) != want:
                    return (f"{trace.who(gid)} wrote {writes.get(gid, 0)} element(s) of C: in "
                            f"this lab each of the {trace.threads_per_block} threads owns a "
                            f"{lab.per_thread} x {lab.per_thread} micro-tile ({want} outputs) of "
                            f"the block's {lab.tile} x {lab.tile} tile.")


def traffic(lab, case, trace):
    """(mean reads per element of A, of B, and the tiled ideal for each)."""
    a = float(np.mean(trace.arrays["A"].counts("reads"))) if case.A.size else 0.0
    b = float(np.mean(trace.arrays["B"].counts("reads"))) if case.B.size else 0.0
    return a, b, -(-case.N // lab.tile), -(-case.M // lab.tile)


def _traffic(lab, case, C, trace):
    if not lab.tiled:
        return None
    a, b, ideal_a, ideal_b = traffic(lab, case, trace)
    for name, mean, ideal, other, side in (("A", a, ideal_a, case.N, "N"),
                                           ("B", b, ideal_b, case.M, "M")):
        if mean > 1.5 * ideal:
            naive = (f": this is the naive kernel's access pattern (every thread reads its "
                     f"whole {'row of A' if name == 'A' else 'column of B'} from global memory)"
                     if mean >= 0.8 * other else "")
            return (f"each element of {name} was read {mean:.1f} times on average instead of "
                    f"about {side}/T = {other}/{lab.tile} -> {ideal} (once per block "
                    f"{'column' if name == 'A' else 'row'}){naive}. Load each tile into shared "
                    f"memory once per block and let the block's threads read it there.")


def _barriers(lab, case, C, trace):
    if not lab.one_barrier:
        return None
    for block, barriers in trace.barriers.items():
        tiles = trace.read_intervals.get(block, 0)
        if barriers > tiles + 1:
            return (f"{barriers} barriers for the {tiles} K tiles the block computed: with two "
                    f"buffers one barrier per tile (plus one after the prologue's load) is "
                    f"enough, since tile t is read from one buffer while tile t+1 is stored "
                    f"into the other.")


def reads_per_fma(lab, case, trace):
    """Shared-memory reads per multiply-add, over the blocks wholly inside C (None if there is
    no such block); a thread's FMAs are its outputs times K."""
    full_x, full_y = case.N // lab.tile, case.M // lab.tile
    if not (full_x and full_y and case.K):
        return None
    n = trace.threads_per_block
    reads = sum(sum(trace.shared_reads[(by * trace.grid[0] + bx) * n:][:n])
                for by in range(full_y) for bx in range(full_x))
    fmas = full_x * full_y * lab.tile * lab.tile * case.K
    return reads / fmas


# Proxies: a lab's flag, what it measures, whether a case can (K % 32: no padded BK steps).
PROXIES = (("reads_per_fma", "reads per FMA",
            lambda lab, case: case.K % 32 == 0 and min(case.M, case.N) >= lab.tile),)


def unmeasured(lab, cases):
    """What ``lab`` measures that none of ``cases`` can measure ("" if none): a FAIL, not a PASS."""
    return ", ".join(words for flag, words, can in PROXIES
                     if getattr(lab, flag, False) and not any(can(lab, case) for case in cases))


def _reads_per_fma(lab, case, C, trace):
    if not (lab.reads_per_fma and PROXIES[0][2](lab, case)):
        return None
    ratio = reads_per_fma(lab, case, trace)
    if ratio is None or ratio <= 0.55:
        return None
    m = lab.per_thread
    fix = (f" Read this k's {m} values of A and {m} of B into local arrays (registers) once, "
           f"then do the {m * m} FMAs of their outer product: {2 * m} reads per {m * m} FMAs = "
           f"{2 * m / (m * m):.2g}.")
    if ratio >= 1.9:
        return (f"{ratio:.2f} shared-memory reads per FMA: every multiply-add reads both of its "
                f"operands from shared memory, as the one-output-per-thread tiled kernel does." + fix)
    if ratio >= 1:
        return (f"{ratio:.2f} shared-memory reads per FMA: each thread still reads at least one "
                f"value from shared memory per FMA; only values held in registers are reused." + fix)
    return f"{ratio:.2f} shared-memory reads per FMA, more than a {m} x {m} outer product needs." + fix


def _prefetch(lab, case, C, trace):
    if not lab.register_prefetch:
        return None
    record = trace.observed["fragments"]
    if record["uses"] == 0:
        return ("no value of A or B was read from a local array: hold the fragments (this k's "
                "values of A and B) in cuda.local.array registers, two sets of them, so the "
                "check can see the register level.")
    prefetched, steps = prefetch_steps(record)
    if steps and prefetched < steps:
        return (f"in {steps - prefetched} of {steps} steps a thread read the fragments of step "
                f"k+1 from shared memory only after the FMAs of step k had used step k's: "
                f"a single register buffer. With two register sets, issue the shared reads of "
                f"k+1 (into the other set) before the FMAs of k, so their latency hides under "
                f"the FMAs.")


def _overlap(lab, case, C, trace):
    if not lab.overlap:
        return None
    found = overlap.missing(trace.observed["tile_order"])
    if found is None:
        return None
    what, gid, interval = found
    who = trace.who(gid)
    if what == "load":
        return (f"{who} loaded the next K tile from global memory only after the multiply-adds "
                f"of the tile it was computing (barrier interval {interval}) had started: the "
                f"two buffers are there, but nothing overlaps, and every load's latency is paid "
                f"in full. Ping-pong: issue the loads of tile t+1 into registers first, then "
                f"compute tile t from shared memory, then store the registers into the other "
                f"buffer.")
    return (f"{who} stored the next K tile into shared memory before the multiply-adds of the "
            f"tile it was computing (barrier interval {interval}): the store has to wait for "
            f"the global load to arrive, so the load's latency is not hidden under the "
            f"arithmetic. Load tile t+1 into registers before the FMAs of tile t, and store it "
            f"into the other buffer after them.")


CHECKS = (_fault, _inputs_written, _race, _uninitialized, _result, _writes_once, _ownership,
          _traffic, _barriers, _overlap, _reads_per_fma, _prefetch)


def summary(lab, runs):
    """The PASS message: the shapes, and what was measured."""
    shapes = ", ".join(case.shape for case, _, _ in runs)
    parts = [f"right at {shapes}, with no race, no out-of-bounds access and every barrier "
             f"reached by all threads"]
    case, _, trace = max(runs, key=lambda r: r[0].M * r[0].N)
    if lab.tiled:
        a, b, ideal_a, ideal_b = traffic(lab, case, trace)
        parts.append(f"at {case.shape} each element of A was read {a:.1f} times and each of B "
                     f"{b:.1f} times (about N/T = {ideal_a} and M/T = {ideal_b}; without tiles: "
                     f"{case.N} and {case.M})")
    if lab.one_barrier:
        most = max(max(t.barriers.values()) - max(t.read_intervals.values(), default=0)
                   for _, _, t in runs)
        parts.append(f"one barrier per K tile{' plus the prologue' if most > 0 else ''}")
    if lab.reads_per_fma:
        ratios = [reads_per_fma(lab, c, t) for c, _, t in runs if PROXIES[0][2](lab, c)]
        parts.append(f"{max(ratios):.2f} shared-memory reads per FMA")
    if lab.overlap:
        steps = sum(overlap.steps(t.observed["tile_order"]) for _, _, t in runs)
        parts.append(f"in every K step the loads of the next tile were issued before the "
                     f"multiply-adds of this one and stored after them ({steps} thread-steps)")
    if lab.register_prefetch:
        steps = sum(prefetch_steps(t.observed["fragments"])[1] for _, _, t in runs)
        parts.append(f"every thread read the fragments of k+1 before the FMAs of k used those of "
                     f"k ({steps} thread-steps)")
    return "; ".join(parts) + "."
