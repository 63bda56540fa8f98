"""Warps, the hardware's unit of execution: how a warp's accesses meet memory, and how a warp
scheduler hides latency with other warps (lesson 03).

* The threads of a block run in **warps** of 32 consecutive thread ids (x fastest); one
  instruction of a warp makes the accesses of its 32 lanes at once (:func:`warp_of`).
* Global memory is fetched in 32-byte sectors: :func:`sectors` counts those one warp access
  needs (4 when the lanes read 32 neighbouring floats: coalesced; 32 when they are a row apart).
* Shared memory has 32 banks of 4-byte words; a bank delivers one word per pass:
  :func:`conflict_ways` is the number of passes one warp access needs (its bank conflict).
* :func:`warp_schedule` is a cycle-by-cycle model of one scheduler. Each warp runs a chain of
  instructions, each needing the result of the one before, ready ``latency`` cycles after it
  issued (a load from memory, say). At most one instruction issues per cycle, from the ready warp
  that issued least recently (round robin). One warp alone leaves the scheduler idle while it
  waits; with as many warps as the latency has cycles, some warp is always ready. Real
  schedulers choose among more warps and more kinds of stall; the arithmetic of hiding is this.
"""
from .parallelism import Interval

WARP_SIZE = 32
BANKS = 32                  # shared memory: 32 banks, each 4 bytes wide
BANK_BYTES = 4
SECTOR_BYTES = 32           # global memory is fetched in 32-byte sectors


def warp_of(thread):
    """(warp, lane) of a thread's linear id inside its block (x fastest, then y, then z)."""
    return divmod(int(thread), WARP_SIZE)


def sectors(elements, itemsize=4):
    """The 32-byte sectors that the elements (flat indices, or a {lane: index} dict) fall in,
    sorted: what one warp's access to global memory fetches."""
    return sorted({int(e) * itemsize // SECTOR_BYTES for e in _values(elements)})


def banks(elements, itemsize=4):
    """{lane: bank} of one warp's shared-memory access ({lane: flat index}); bank = the 4-byte
    word's address mod 32."""
    return {lane: int(e) * itemsize // BANK_BYTES % BANKS for lane, e in elements.items()}


def conflict_ways(elements, itemsize=4):
    """The most distinct 4-byte words any one bank must deliver for one warp access: 1 is
    conflict-free (lanes reading the same word share it: a broadcast), n an n-way conflict,
    served in n passes."""
    words = {}
    for e in _values(elements):
        word = int(e) * itemsize // BANK_BYTES
        words.setdefault(word % BANKS, set()).add(word)
    return max((len(w) for w in words.values()), default=0)


def _values(elements):
    return elements.values() if isinstance(elements, dict) else elements


def warp_schedule(warps, instructions, latency):
    """dict(issues, cycles, busy, timeline): the cycle each instruction of each warp issues
    (``issues[w]``, a list), the cycles from the first issue to the last (both counted), the
    fraction of those cycles in which the scheduler issued something, and the timeline as
    :class:`~gemmlab.perfmodel.Interval` bars (one lane per warp: "compute" for the issue
    cycle, "wait" until the warp issues again)."""
    if min(warps, instructions, latency) < 1:
        raise ValueError(f"need at least one warp, one instruction and a latency of 1 cycle; "
                         f"got {warps}, {instructions}, {latency}")
    ready = [0] * warps                 # the first cycle each warp's next instruction may issue
    issues = [[] for _ in range(warps)]
    cycle = 0
    while any(len(done) < instructions for done in issues):
        waiting = [w for w in range(warps) if len(issues[w]) < instructions and ready[w] <= cycle]
        if waiting:
            w = min(waiting, key=lambda v: (issues[v][-1] if issues[v] else -1, v))
            issues[w].append(cycle)
            ready[w] = cycle + latency
        cycle += 1
    cycles = max(times[-1] for times in issues) + 1
    timeline = []
    for w, times in enumerate(issues):
        for n, start in enumerate(times):
            timeline.append(Interval(f"warp {w}", "compute", "", start, start + 1))
            end = times[n + 1] if n + 1 < len(times) else start + latency
            if end > start + 1:
                timeline.append(Interval(f"warp {w}", "wait", "", start + 1, end))
    return {"issues": issues, "cycles": cycles, "busy": warps * instructions / cycles,
            "timeline": timeline}
