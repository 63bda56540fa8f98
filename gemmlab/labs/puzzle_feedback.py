"""What a warm-up puzzle says (:mod:`gemmlab.labs.puzzles`): the checks of one run, in the order
a student should fix them, each naming the typical mistake it sees.

Order: a fault (an out-of-bounds access is named: no guard, rows and columns swapped, the wrong
axis broadcast, a term before the start), writes into an input, a shared-memory hazard (a
missing barrier, a neighbour's slot read before it is written, an in-place scan's race, a slot
nobody wrote), the result (out read before written, a missing block offset, elements never
written, a known wrong result, wrong values), elements written more than once, the wrong thread
for an element, too many global reads, and for the one-block reductions, shared memory and the
length of each thread's chain.
"""
import math

import numpy as np

from .observations import as_sentence, global_race_advice
from .puzzle_cases import GRID, LINE, WARP

SPAN_LIMIT = 64             # reads (global and shared) one thread may make in a one-block
                            # reduction or scan: a tree's log n levels fit, a serial loop does not


def first_problem(puzzle, case, out, trace):
    for check in CHECKS:
        message = check(puzzle, case, out, trace)
        if message:
            return message
    return None


def _thread_index(local, dims):
    x, rest = local % dims[0], local // dims[0]
    return (x, rest % dims[1], rest // dims[1])


def _names(puzzle, case):
    if case.layout == GRID:
        return "i = 16 * blockIdx.y + threadIdx.y (the row), j = 16 * blockIdx.x + threadIdx.x (the column)"
    if case.layout == LINE:
        return "i = 32 * blockIdx.x + threadIdx.x"
    return "i = threadIdx.x"


# -- faults ------------------------------------------------------------------------------------
def _fault(puzzle, case, out, trace):
    fault = trace.fault
    if fault is None:
        return None
    text = as_sentence(str(fault))
    named = _out_of_bounds_name(puzzle, case, fault, trace) if fault.kind == "out of bounds" \
        else None
    return f"{named[0]}: {text} {named[1]}" if named else text


def _out_of_bounds_name(puzzle, case, fault, trace):
    """(name, explanation) of an out-of-bounds access, or None when it matches no pattern."""
    index = tuple(fault.index)
    if fault.array not in trace.arrays:         # a shared array
        return ("a slot outside the shared array",
                "A shared array has only the slots it was declared with; the neighbour of the "
                "last thread wraps around to slot 0: (t + 1) % 32." if puzzle.name ==
                "puzzle_shared" else "A shared array has only the slots it was declared with: "
                "count the slots the block needs (the halo included) and declare that many.")
    block = fault.block
    thread = _thread_index(fault.thread, trace.block)
    own = case.own_index(block, thread)
    shape = trace.arrays[fault.array].shape
    if case.layout == GRID:
        return _grid_out_of_bounds(puzzle, case, fault, own, index, shape)
    (i,), (mine,) = index, own
    if i < 0:
        return ("a term before the start",
                "For i < 2 the terms a[i-2] and a[i-1] do not exist: the pool counts them as 0. "
                "Read a term only when its index is >= 0.")
    if i == mine:
        left = case.n - (mine - thread[0])
        threads, index = (("the block has 256 threads", "t") if case.layout != LINE else
                          (f"the last block has {WARP} threads but only {left} element(s) left",
                           "i"))
        return ("no guard",
                f"There are n = {case.n} elements and {threads}: the threads past the end "
                f"must not touch memory. Put the body under `if {index} < n:` (n = "
                f"{puzzle.inputs[0]}.shape[0]).")
    return None


def _grid_out_of_bounds(puzzle, case, fault, own, index, shape):
    row, col = own
    rows, cols = case.size
    if len(index) == 2 and index == (col, row):
        return ("rows and columns swapped",
                f"this thread handles row i = {row} and column j = {col} ({_names(puzzle, case)}), "
                f"but it indexed [{col}, {row}]: threadIdx.x runs along the columns, so that a "
                f"warp's 32 threads touch neighbouring elements of one row (one coalesced access).")
    if len(index) == 1 and len(puzzle.inputs) == 2:
        first = fault.array == puzzle.inputs[0]
        if index == ((col,) if first else (row,)):
            return ("the wrong axis broadcast",
                    f"{puzzle.inputs[0]} holds one value per ROW ({rows} of them: index it with i) "
                    f"and {puzzle.inputs[1]} one per COLUMN ({cols}: index it with j); this thread "
                    f"(i = {row}, j = {col}) indexed {fault.array} with its "
                    f"{'column' if first else 'row'}.")
    if index == own or (len(index) == 1 and index[0] in own):
        return ("no guard",
                f"The blocks on the bottom and right edges have threads past the last row or "
                f"column ({rows} x {cols} is not a whole number of 16 x 16 blocks): put the "
                f"body under `if i < rows and j < cols:`.")
    return None


def _inputs_written(puzzle, case, out, trace):
    for name in puzzle.inputs:
        array = trace.arrays[name]
        if array.thread_writes:
            gid = next(iter(array.thread_writes))
            return (f"{trace.who(gid)} wrote into {name}: {name} is an input, the kernel only "
                    f"reads it (and writes {puzzle.output}).")


# -- shared memory -----------------------------------------------------------------------------
def _shared_hazard(puzzle, case, out, trace):
    no_barrier = max(trace.barriers.values(), default=0) == 0
    if trace.races:
        race = trace.races[0]
        text = race.describe()
        if race.space == "global":
            return f"a race through global memory: {text}. {global_race_advice(race)}"
        if race.kind == "write-write":
            return f"two writers of one slot: {text}. Give every slot of the shared array one writer."
        if no_barrier:
            return (f"a missing barrier: {text}. The threads of a block do not run in step: "
                    f"without cuda.syncthreads() between the writes into shared memory and the "
                    f"reads of other threads' slots, a thread may read a slot before its owner "
                    f"has written it.")
        if race.had_value and puzzle.scan:
            return (f"an in-place scan's race: {text}. In a step, thread t adds s[t - d] while "
                    f"thread t - d is overwriting s[t - d] with its own new sum. Read the value "
                    f"into a local variable, cuda.syncthreads(), then write, cuda.syncthreads() "
                    f"(or keep two buffers and switch between them each step).")
        if race.had_value:
            return (f"a missing barrier: {text}. A slot was overwritten while another thread "
                    f"was still reading its old value: each step of the tree must finish "
                    f"(cuda.syncthreads()) before the next one writes.")
        return (f"a neighbour's slot read before it is written: {text}. The barrier must stand "
                f"after every write into shared memory and before the first read of another "
                f"thread's slot (reading it into a variable before cuda.syncthreads() is reading "
                f"it too early).")
    if trace.uninitialized:
        name, index, who, block, line = trace.uninitialized[0]
        at = f" at {line}" if line else ""
        if no_barrier:
            return (f"a missing barrier: {who} of {block} read {name}[{', '.join(map(str, index))}]"
                    f"{at} before any thread had written it. Put cuda.syncthreads() between the "
                    f"writes into shared memory and the reads.")
        fill = ("store 0 into the slots past the end (s[t] = a[i] if i < n, else 0)"
                if puzzle.name != "puzzle_pool" else "load the two elements before the block "
                "too (the halo), and store 0 wherever an index falls outside a")
        return (f"a slot nobody wrote: {who} of {block} read {name}"
                f"[{', '.join(map(str, index))}]{at}, which no thread of the block wrote (on a GPU "
                f"shared memory starts with garbage, whatever the simulator shows): {fill}.")


# -- the result --------------------------------------------------------------------------------
def _result(puzzle, case, out, trace):
    array = trace.arrays[puzzle.output]
    if array.read_before_write is not None:
        index, gid, line = array.read_before_write
        at = f" at {line}" if line else ""
        return (f"{trace.who(gid)} read {puzzle.output}[{', '.join(map(str, index))}]{at} before "
                f"writing it: {puzzle.output} is an output only and starts with garbage. Keep "
                f"sums in a local variable or in shared memory and write the output once.")
    writes = array.counts("writes")
    unwritten = np.argwhere(writes == 0)
    if len(unwritten):
        return (_missing_offset(puzzle, case, writes, unwritten)
                or _swapped_owner(puzzle, case, array, trace)
                or _never_written(puzzle, case, out, unwritten))
    wrong = ~(np.abs(out - case.expected) <= case.tolerance)
    if not wrong.any():
        return None
    inputs = [case.inputs[name] for name in puzzle.inputs]
    for name, produce, meaning in puzzle.known_wrong:
        other = produce(*inputs)
        if other is not None and np.allclose(out, other, rtol=1e-5, atol=1e-5):
            return f"{name}: {meaning}."
    index = tuple(int(i) for i in np.argwhere(wrong)[0])
    got = out[index]
    got = "NaN (a value read from memory nobody wrote?)" if np.isnan(got) else f"{got:.7g}"
    within = (f" (within lesson 01's float32 summation bound, {case.tolerance[index]:.2g})"
              if puzzle.reduction else "")
    return (f"{puzzle.output}[{', '.join(map(str, index))}] is {got}, expected "
            f"{case.expected[index]:.7g}{within}; {int(wrong.sum())} of {out.size} elements are "
            f"wrong.")


def _missing_offset(puzzle, case, writes, unwritten):
    """Every block did the first block's elements: the thread's index lacks the block's offset."""
    if case.layout not in (LINE, GRID):
        return None
    first = writes[:WARP] if case.layout == LINE else writes[:16, :16]
    outside = (unwritten[:, 0] >= WARP if case.layout == LINE
               else (unwritten[:, 0] >= 16) | (unwritten[:, 1] >= 16))
    if outside.all() and first.max() > 1:
        offset = ("i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x"
                  if case.layout == LINE else
                  "i = cuda.blockIdx.y * 16 + cuda.threadIdx.y and j = cuda.blockIdx.x * 16 + "
                  "cuda.threadIdx.x")
        return (f"a missing block offset: every block wrote the first block's elements (written "
                f"{first.max()} times) and {len(unwritten)} of {writes.size} elements were never "
                f"written. threadIdx counts from 0 in every block: the element is {offset}.")


def _swapped_owner(puzzle, case, array, trace):
    """A 2-D kernel whose threads write out[j, i] where they own out[i, j]."""
    if case.layout != GRID:
        return None
    for (i, j), gid in np.ndenumerate(array.counts("writer")):
        if gid < 0:
            continue
        block, thread = trace.locate(gid)
        if case.own_index(block, thread) == (j, i) != (i, j):
            return (f"rows and columns swapped: out[{i}, {j}] was written by {trace.who(gid)}, "
                    f"which handles row {j} and column {i} ({_names(puzzle, case)}). threadIdx.x "
                    f"runs along the columns: a warp's threads then touch neighbouring elements "
                    f"of one row, one coalesced access.")


def _never_written(puzzle, case, out, unwritten):
    index = tuple(int(i) for i in unwritten[0])
    block, thread = case.owner(index)
    who = _who(case, block, thread)
    return (f"{puzzle.output}[{', '.join(map(str, index))}] was never written (it still holds the "
            f"poison {out[index]:.6g}); {who} handles it. {len(unwritten)} of {out.size} "
            f"elements were never written: is a guard too strict, or a thread's index off?")


def _who(case, block, thread):
    if case.layout == GRID:
        return f"thread ({thread[0]},{thread[1]}) of block ({block[0]},{block[1]})"
    return f"thread {thread[0]} of block {block[0]}"


def _writes_once(puzzle, case, out, trace):
    writes = trace.arrays[puzzle.output].counts("writes")
    if writes.max() > 1:
        index = tuple(int(i) for i in np.argwhere(writes == writes.max())[0])
        one = ("let one thread (thread 0) write it" if out.size == 1 else
               "give each element one thread that writes it once")
        return (f"{puzzle.output}[{', '.join(map(str, index))}] was written {writes.max()} times: "
                f"{one}.")


def _ownership(puzzle, case, out, trace):
    if case.layout not in (LINE, GRID):
        return None
    array = trace.arrays[puzzle.output]
    swapped = _swapped_owner(puzzle, case, array, trace)
    if swapped:
        return swapped
    for index, gid in np.ndenumerate(array.counts("writer")):
        block, thread = trace.locate(gid)
        if case.own_index(block, thread) != index:
            owner = _who(case, *case.owner(index))
            return (f"{puzzle.output}[{', '.join(map(str, index))}] was written by "
                    f"{trace.who(gid)}, but with the puzzle's launch {owner} handles it "
                    f"({_names(puzzle, case)}).")


# -- what the puzzle measures ------------------------------------------------------------------
def reads(puzzle, case, trace):
    """{input: (reads in all, the budget)} for the puzzles with a read budget."""
    if puzzle.max_reads is None:
        return {}
    budget = puzzle.max_reads(case)
    return {name: (int(trace.arrays[name].counts("reads").sum()), budget)
            for name in puzzle.inputs}


def _traffic(puzzle, case, out, trace):
    for name, (total, budget) in reads(puzzle, case, trace).items():
        if total > budget:
            size = case.inputs[name].size
            return (f"too many global reads: {name} was read {total} times for its {size} "
                    f"elements ({total / size:.1f} per element); the budget is {budget}, "
                    f"{puzzle.reads_rule}.")


def thread_reads(trace):
    """Each thread's reads, global and shared together (by global thread id): the length of its
    chain, whatever memory it reads the terms from."""
    work = list(trace.shared_reads)
    for array in trace.arrays.values():
        for gid, count in array.thread_reads.items():
            work[gid] += count
    return work


def _reduction(puzzle, case, out, trace):
    if not puzzle.reduction:
        return None
    work = thread_reads(trace)
    longest = max(work)
    if trace.atomic_chain > SPAN_LIMIT:         # the dataflow's critical path, across threads
        return (f"a serial chain of {trace.atomic_chain} atomics on one address: a GPU applies "
                f"them one at a time. Add level by level in shared memory, lesson 03's tree.")
    if longest > SPAN_LIMIT:
        gid = work.index(longest)
        levels = math.ceil(math.log2(256))
        return (f"a serial loop: {trace.who(gid)} read {longest} values (global and shared "
                f"memory together), one after another: O(n) steps for one thread. A parallel "
                f"version takes log n steps: let the threads work together, level by level, as "
                f"the reduction tree of lesson 03: {levels} levels for 256 slots, each thread at "
                f"most {SPAN_LIMIT} reads, with cuda.syncthreads() between the levels.")
    if not trace.shared:
        return ("no shared memory: the work is to be done by the block's threads together in a "
                "cuda.shared.array of 256 float32, each thread one slot.")


CHECKS = (_fault, _inputs_written, _shared_hazard, _result, _writes_once, _ownership, _traffic,
          _reduction)


def summary(puzzle, runs):
    """The PASS message: the cases, and what was measured."""
    labels = ", ".join(case.label for case, _, _ in runs)
    parts = [f"right at {labels}, with no race, no out-of-bounds access and every barrier "
             f"reached by all threads"]
    case, _, trace = max(runs, key=lambda run: run[0].expected.size)
    for name, (total, budget) in reads(puzzle, case, trace).items():
        parts.append(f"at {case.label} {name} was read {total} times from global memory "
                     f"(budget {budget})")
    if puzzle.reduction:
        parts.append(f"the longest chain of reads in one thread was "
                     f"{max(thread_reads(trace))} (a serial loop: {case.n})")
    return "; ".join(parts) + "."
