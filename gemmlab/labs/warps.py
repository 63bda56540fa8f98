"""Warp-level primitives for the instrumented simulator, with the GPU's rules.

A thread that calls ``syncwarp``, a ``shfl_*_sync``, a vote (``all_sync``, ``any_sync``,
``eq_sync``, ``ballot_sync``), a ``match_*_sync`` or ``activemask`` stops there (the simulator's
scheduler, :mod:`gemmlab.labs.simulator`, lets every other thread run first). When every thread
of the block has stopped, :func:`step` takes the warps' waiting lanes and, for each group that
can go, computes what each lane gets, as the hardware would:

- The threads a mask names must all arrive at the same primitive with the same mask. A mask that
  names a lane which has exited, or which waits somewhere else, is a named error; so is a mask
  that leaves out the calling lane itself. Lanes past the end of the block (a block of 10
  threads has a warp of 10 lanes) are not in the warp at all: a mask may name them, as
  numba-cuda's own tests do, but a shuffle may not read them.
- A shuffle reads the value of its source lane (``shfl_sync``: lane ``src & 31``;
  ``shfl_up_sync``: ``lane - delta``, ``shfl_down_sync``: ``lane + delta``, ``shfl_xor_sync``:
  ``lane ^ mask``); a source outside the warp gives the lane its own value (PTX's rule), and a
  source the mask does not name (it has exited, or does not take part) is a named error.
- ``activemask`` is the set of the warp's lanes that stopped at the same ``activemask`` call:
  the lanes that arrive together, as converged lanes do on the GPU.
- ``syncwarp`` orders the memory accesses of the lanes it names (the race check asks the
  simulator's warp generation, which it counts up).

The signatures are numba.cuda's (``syncwarp(mask=0xFFFFFFFF)``, ``shfl_sync(mask, value,
src_lane)``, ``ballot_sync(mask, predicate)``, ...), and so are the types returned: a ballot is
an int32, a vote a bool, ``activemask`` and ``lanemask_lt`` a uint32.
"""
from dataclasses import dataclass

import numpy as np

FULL_MASK = 0xFFFFFFFF
WARP = 32

SHUFFLES = {"shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"}


@dataclass
class Request:
    """What a lane waits for: the primitive, its mask, its value (or predicate), the shuffle's
    lane argument, and where in the kernel it was called ('line 12 (`...`)')."""
    kind: str
    mask: int
    value: object
    arg: int
    site: str


class WarpError(Exception):
    """A warp primitive that cannot complete as called; the message names lanes and lines."""


def source_lane(kind, lane, arg):
    """The lane a shuffle reads, or None when it falls outside the warp (the lane keeps its own
    value)."""
    arg = int(arg)
    if kind == "shfl_sync":
        return arg & (WARP - 1)
    j = {"shfl_up_sync": lane - arg, "shfl_down_sync": lane + arg,
         "shfl_xor_sync": lane ^ arg}[kind]
    return j if 0 <= j < WARP else None


def step(lanes, waiting, describe):
    """Complete what can be completed among one warp's waiting lanes.

    ``lanes``: lane -> thread for the lanes that exist; ``waiting``: lane -> :class:`Request` of
    the lanes stopped at a primitive; ``describe(lane)``: where that lane is ('has exited',
    'waits at line 9 (...)'). Returns (results: lane -> value for the lanes that go on,
    syncwarps: whether a syncwarp completed, blocked: the first reason a group cannot go, or
    '')."""
    results, synced, blocked = {}, False, ""
    for lane in sorted(waiting):
        if lane in results:
            continue
        request = waiting[lane]
        if request.kind == "activemask":
            group = [other for other, r in waiting.items()
                     if r.kind == "activemask" and r.site == request.site]
            mask = sum(1 << other for other in group)
            results.update({other: np.uint32(mask) for other in group})
            continue
        mask = int(request.mask) & FULL_MASK
        if not mask >> lane & 1:
            raise WarpError(f"lane {lane} called {request.kind} at {request.site} with mask "
                            f"{mask:#010x}, which does not name lane {lane} itself: the calling "
                            f"lane must be in the mask")
        members = [m for m in range(WARP) if mask >> m & 1 and m in lanes]
        reason = _why_not(request, lane, members, lanes, waiting, describe)
        if reason:
            blocked = blocked or reason
            continue
        results.update(_complete(request.kind, members, waiting, lanes, describe))
        synced = synced or request.kind == "syncwarp"
    return results, synced, blocked


def _why_not(request, lane, members, lanes, waiting, describe):
    """Why the lanes ``members`` cannot complete ``request`` now ('' when they can); a lane
    that will never arrive raises :class:`WarpError`."""
    for m in members:
        other = waiting.get(m)
        if other is None:
            where = describe(m)
            if where == "has exited":
                raise WarpError(f"lane {lane} called {request.kind} at {request.site} with mask "
                                f"{int(request.mask) & FULL_MASK:#010x}, which names lane {m}, "
                                f"but lane {m} has exited: a mask may name only the lanes that "
                                f"reach the call")
            return (f"lane {lane} waits at {request.kind} at {request.site} for lane {m}, which "
                    f"{where}")
        if other.kind != request.kind or (int(other.mask) & FULL_MASK) != \
                (int(request.mask) & FULL_MASK):
            return (f"lane {lane} waits at {request.kind} at {request.site} with mask "
                    f"{int(request.mask) & FULL_MASK:#010x}, lane {m} at {other.kind} at "
                    f"{other.site} with mask {int(other.mask) & FULL_MASK:#010x}: the lanes a "
                    f"mask names must all reach the same call with the same mask")
    return ""


def _complete(kind, members, waiting, lanes, describe):
    """lane -> what ``kind`` returns to each of the ``members``."""
    values = {m: waiting[m].value for m in members}
    if kind == "syncwarp":
        return dict.fromkeys(members)
    if kind in SHUFFLES:
        out = {}
        for m in members:
            j = source_lane(kind, m, waiting[m].arg)
            if j is None:
                out[m] = values[m]
            elif j in values:
                out[m] = values[j]
            else:
                where = describe(j) if j in lanes else "does not exist"
                raise WarpError(
                    f"lane {m} called {kind} at {waiting[m].site}, which reads lane {j}, but lane "
                    f"{j} {'is not named by the mask' if where.startswith('waits') else where}"
                    f" (mask {int(waiting[m].mask) & FULL_MASK:#010x}): a shuffle may read only "
                    f"a lane that takes part in it")
        return out
    truth = [bool(values[m]) for m in members]
    if kind == "ballot_sync":
        bits = sum(1 << m for m, v in zip(members, truth, strict=True) if v)
        return dict.fromkeys(members, np.uint32(bits).view(np.int32))
    if kind in ("all_sync", "any_sync", "eq_sync"):
        result = {"all_sync": all(truth), "any_sync": any(truth),
                  "eq_sync": all(truth) or not any(truth)}[kind]
        return dict.fromkeys(members, result)
    if kind == "match_any_sync":
        return {m: np.uint32(sum(1 << o for o in members if values[o] == values[m]))
                for m in members}
    same = all(values[o] == values[members[0]] for o in members)        # match_all_sync
    mask = np.uint32(sum(1 << o for o in members) if same else 0)
    return dict.fromkeys(members, (mask, same))
