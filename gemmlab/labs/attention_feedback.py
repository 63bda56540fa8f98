"""What lesson 16's kernels are told (:mod:`gemmlab.labs.attention_lab`): the checks of one run,
in the order a student should fix them, each naming the classic mistake it sees.

Order: a fault (an overflow: no max subtraction; a row with no key: a causal mask off by one; an
access outside an array: no guard at the ragged edge), writes into an input, a shared-memory
hazard (the barrier missing before the next K/V tile overwrites the current one, or after the
loads; a slot of the last tile nobody wrote), the output read before it is written, the result
(rows never written, inf or NaN, the result of a known mistake, wrong values), an output written
more than once, and too many global reads (K and V read per query row, as the unfused kernels
read S; two passes over K; causal tiles loaded that could be skipped).
"""
import numpy as np

from .observations import as_sentence, global_race_advice


def first_problem(lab, case, out, trace):
    for check in CHECKS:
        message = check(lab, case, out, trace)
        if message:
            return message
    return None


def _row(case, fault):
    if fault.block is None or fault.thread is None:
        return None
    return case.row_of(fault.block, fault.thread)


NO_MAX = ("no max subtraction: exp of a raw score overflows. Row {row} has a score of 1000; "
          "exp(1000) is past every float format (float32 overflows past 88.7, float16 past 11.1, "
          "even float64 past 709.8), and inf / inf is NaN. Subtract the row's running max m "
          "first: exp(s - m) <= 1, and the max cancels in the ratio.")


def _fault(lab, case, out, trace):
    fault = trace.fault
    if fault is None:
        return None
    text, row = as_sentence(str(fault)), _row(case, fault)
    if fault.kind == "exception" and "OverflowError" in text:
        return f"{NO_MAX.format(row=case.hot_row)} ({text})"
    if fault.kind == "exception" and "ZeroDivisionError" in text and case.causal and row == 0:
        return (f"a causal mask off by one: row 0 saw no key at all, so its sum l stayed 0 "
                f"({text}) Query i attends to keys j <= i: its own key, j = i, is kept.")
    if fault.kind == "out of bounds":
        return (f"an access past the edge: {text} The last block and the last K/V tile are "
                f"partial ({case.label}, tiles of {lab.tile}): guard every row and every key "
                f"index against the array's length.")
    return text


def _inputs_written(lab, case, out, trace):
    for name in case.inputs:
        if name in trace.arrays and trace.arrays[name].thread_writes:
            gid = next(iter(trace.arrays[name].thread_writes))
            return f"{trace.who(gid)} wrote into {name}: {name} is an input, the kernel only reads it."


def _shared_hazard(lab, case, out, trace):
    if trace.races:
        race = trace.races[0]
        text = race.describe()
        if race.space == "global":
            return f"a race through global memory: {text}. {global_race_advice(race)}"
        if race.had_value:
            return (f"a missing barrier {lab.overwrite}: {text}. A thread went on to overwrite a "
                    f"slot while another thread still read the old value: the block must wait "
                    f"(cuda.syncthreads()) after using the shared data and before overwriting it.")
        return (f"a missing barrier after the loads: {text}. Put cuda.syncthreads() between the "
                f"writes into shared memory and the reads of other threads' slots.")
    if trace.uninitialized:
        name, index, who, block, line = trace.uninitialized[0]
        at = f" at {line}" if line else ""
        return (f"a slot nobody wrote: {who} of {block} read {name}[{', '.join(map(str, index))}]"
                f"{at}, which no thread of the block wrote (on a GPU shared memory starts with "
                f"garbage). {lab.unwritten_advice}")


def _output_read(lab, case, out, trace):
    rbw = trace.arrays[lab.output].read_before_write
    if rbw is not None:
        index, gid, line = rbw
        at = f" at {line}" if line else ""
        return (f"{trace.who(gid)} read {lab.output}[{', '.join(map(str, index))}]{at} before "
                f"writing it: {lab.output} is an output only and starts with garbage. Keep the "
                f"running values in registers (local variables or a cuda.local.array) and write "
                f"{lab.output} once at the end.")


def _where(index):
    return ", ".join(str(int(i)) for i in index)


def _result(lab, case, out, trace):
    writes = trace.arrays[lab.output].counts("writes")
    unwritten = np.argwhere(writes == 0)
    if len(unwritten):
        index = tuple(unwritten[0])
        return (f"{lab.output}[{_where(index)}] was never written (it still holds the poison "
                f"{out[index]:.6g}); {len(unwritten)} of {out.size} elements were never written. "
                f"Is a guard too strict, or a row's index off?")
    bad = ~np.isfinite(out)
    if bad.any():
        index = tuple(np.argwhere(bad)[0])
        row = int(index[0]) if out.ndim == 2 else None
        if row is None or row == case.hot_row:
            return NO_MAX.format(row=case.hot_row) + f" ({lab.output}[{_where(index)}] is {out[index]}.)"
        if case.causal and row == 0:
            return ("a causal mask off by one: row 0 is NaN because it saw no key (0 / 0). Query "
                    "i attends to keys j <= i: its own key, j = i, is kept.")
        return (f"{lab.output}[{_where(index)}] is {out[index]}: an exponential overflowed, or "
                f"a sum stayed 0 (0 / 0), or a value came from memory nobody wrote.")
    allowed = lab.tolerance + case.slack
    wrong = ~(np.abs(out - case.expected) <= allowed)
    if not wrong.any():
        return None
    for name, result, meaning in case.known_wrong:
        if np.allclose(out, result, rtol=1e-4, atol=allowed, equal_nan=True):
            return f"{name}: {meaning}."
    index = tuple(np.argwhere(wrong)[0])
    return (f"{lab.output}[{_where(index)}] is {out[index]:.7g}, expected "
            f"{case.expected[index]:.7g}; {int(wrong.sum())} of {out.size} elements are wrong.")


def _written_once(lab, case, out, trace):
    writes = trace.arrays[lab.output].counts("writes")
    if writes.max() > 1:
        index = tuple(np.argwhere(writes == writes.max())[0])
        return (f"{lab.output}[{_where(index)}] was written {writes.max()} times: every write "
                f"is traffic to global memory. Keep the running values in registers and write "
                f"each element once, at the end.")


def reads(case, trace):
    """{input: (global reads in all, the budget)} of the budgeted inputs."""
    return {name: (int(trace.arrays[name].counts("reads").sum()), budget)
            for name, budget in case.budgets.items()}


def _traffic(lab, case, out, trace):
    for name, (total, budget) in reads(case, trace).items():
        if total > budget:
            return lab.too_many_reads(case, name, total, budget)


CHECKS = (_fault, _inputs_written, _shared_hazard, _output_read, _result, _written_once, _traffic)


def summary(lab, runs):
    """The PASS message: the cases, and the reads measured."""
    labels = "; ".join(case.label for case, _, _ in runs)
    parts = [f"right at {labels}, with no race, no out-of-bounds access and every barrier "
             f"reached by all threads"]
    case, _, trace = max(runs, key=lambda run: run[0].expected.size)
    for name, (total, budget) in reads(case, trace).items():
        size = case.inputs[name].size
        parts.append(f"at {case.label} {name} was read {total} times for its {size} elements "
                     f"({total / size:.2f} per element; budget {budget})")
    return "; ".join(parts) + "."
