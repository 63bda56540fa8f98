"""The GPU's execution model, drawn from what the simulator saw a kernel do (lesson 03, 05).

Every picture here reads the plain data of one observed block (:mod:`gemmlab.labs.observed`,
from :func:`gemmlab.labs.observe.observe`): which thread touched which element, in which barrier
interval. The hardware runs the threads of a block in warps of 32 consecutive thread ids, and
one instruction of a warp makes the accesses of its 32 lanes at once
(:mod:`gemmlab.perfmodel.warps`). So the n-th access each lane makes to an array (in one
interval) is one warp instruction: :func:`warp_access` collects it from the record, for
:func:`~gemmlab.perfmodel.warps.sectors` (coalescing) and
:func:`~gemmlab.perfmodel.warps.conflict_ways` (bank conflicts). The simulator itself runs
threads in no such groups; the grouping is the hardware's rule applied to its record.
"""
import numpy as np

from ..perfmodel.warps import BANKS, SECTOR_BYTES, WARP_SIZE, banks, conflict_ways, sectors, warp_of

WARP_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3",
                "#8c8c8c")


def warp_access(picture, array, warp=0, nth=0, write=False, interval=None):
    """{lane: flat element index}: the ``nth`` read (or write, if ``write``) that each lane of
    ``warp`` made of ``array`` (in barrier ``interval``, if given): one warp instruction's
    accesses. Lanes that made fewer accesses are left out."""
    wanted = _array_number(picture, array)
    seen, found = {}, {}
    acc = picture["accesses"]
    for thread, inter, w, arr, element in zip(acc["thread"], acc["interval"], acc["write"],
                                               acc["array"], acc["element"], strict=True):
        which, lane = warp_of(thread)
        if (which != warp or arr != wanted or bool(w) != bool(write)
                or (interval is not None and inter != interval)):
            continue
        count = seen.get(lane, 0)
        seen[lane] = count + 1
        if count == nth:
            found[lane] = int(element)
    return dict(sorted(found.items()))


def warps_seen(picture):
    """The warps of the observed block that made any access, sorted."""
    return sorted({warp_of(t)[0] for t in picture["accesses"]["thread"]})


def draw_warps(picture, array, ax=None):
    """Left: the threads of the observed block laid out as the block is (x across, y down),
    coloured by the warp they belong to. Right: every element of ``array`` the block touched,
    coloured by the warp whose lanes touched it."""
    import matplotlib.pyplot as plt
    dims = [int(d) for d in picture["block_dims"]]
    x, y = dims[0], dims[1] * dims[2]
    if ax is None:
        _, ax = plt.subplots(1, 2, figsize=(10, 3))
    ids = np.arange(x * y).reshape(y, x)
    ax[0].imshow(ids // WARP_SIZE, cmap=_warp_cmap(), vmin=0, vmax=len(WARP_COLOURS) - 1)
    for (r, c), t in np.ndenumerate(ids):
        ax[0].text(c, r, str(t % WARP_SIZE), ha="center", va="center", fontsize=6, color="white")
    ax[0].set_title(f"block of {x} x {y} threads: lane numbers, one colour per warp", fontsize=9)
    ax[0].set_xlabel("threadIdx.x")
    ax[0].set_ylabel("threadIdx.y")
    shape, owner = _array_shape(picture, array), {}
    acc = picture["accesses"]
    wanted = _array_number(picture, array)
    for thread, arr, element in zip(acc["thread"], acc["array"], acc["element"], strict=True):
        if arr == wanted:
            owner[int(element)] = warp_of(thread)[0]
    grid = np.full(int(np.prod(shape)), np.nan)
    for element, w in owner.items():
        grid[element] = w
    rows = shape[0] if len(shape) > 1 else 1
    ax[1].imshow(grid.reshape(rows, -1), cmap=_warp_cmap(), vmin=0, vmax=len(WARP_COLOURS) - 1)
    ax[1].set_title(f"{array}: the warp that touched each element", fontsize=9)
    ax[1].set_xlabel("column")
    ax[1].set_ylabel("row")
    return ax


def draw_warp_load(accesses, itemsize=4, ax=None, title=""):
    """One warp instruction's global accesses ({lane: element}, from :func:`warp_access`): each
    lane's byte address, and the 32-byte sectors the instruction must fetch (shaded)."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 2.6))
    for sector in sectors(accesses, itemsize):
        ax.axvspan(sector * SECTOR_BYTES, (sector + 1) * SECTOR_BYTES, color="#f5a524", alpha=0.35,
                   linewidth=0)
    lanes = list(accesses)
    addresses = [accesses[lane] * itemsize for lane in lanes]
    ax.scatter(addresses, lanes, s=10, color=WARP_COLOURS[0], zorder=3)
    ax.set_xlabel("byte address in the array")
    ax.set_ylabel("lane")
    count = len(sectors(accesses, itemsize))
    ax.set_title(f"{title}{': ' if title else ''}{len(lanes)} lanes, {count} sectors of "
                 f"{SECTOR_BYTES} B ({count * SECTOR_BYTES} bytes fetched for "
                 f"{len(lanes) * itemsize} used)", fontsize=9)
    return ax


def draw_banks(accesses, itemsize=4, ax=None, title=""):
    """One warp instruction's shared-memory accesses ({lane: element}): a lane x bank grid with a
    mark where a lane's word lies, and per bank the count of distinct words (the conflict)."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    grid = np.zeros((WARP_SIZE, BANKS))
    for lane, bank in banks(accesses, itemsize).items():
        grid[lane, bank] = 1
    ax.imshow(grid, cmap="Blues", vmin=0, vmax=1.3)
    ax.set_xlabel("bank")
    ax.set_ylabel("lane")
    ways = conflict_ways(accesses, itemsize)
    ax.set_title(f"{title}{': ' if title else ''}{ways}-way "
                 f"{'conflict' if ways > 1 else '(conflict-free)'}", fontsize=9)
    return ax


def draw_occupancy(threads, smem_bytes, registers, mark=None, sm=None, ax=None):
    """Resident warps per SM against registers per thread, for blocks of ``threads`` threads and
    ``smem_bytes`` of shared memory (:func:`gemmlab.perfmodel.blocks_per_sm`); ``mark``: a
    (registers, label) point to show, e.g. a compiled kernel's."""
    import matplotlib.pyplot as plt
    from ..perfmodel import HOPPER, blocks_per_sm
    sm = sm or HOPPER
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3))
    warps_per_block = -(-threads // WARP_SIZE)
    resident = [blocks_per_sm(r, threads, smem_bytes, sm)[0] * warps_per_block for r in registers]
    ax.step(list(registers), resident, where="post")
    ax.axhline(sm.max_threads // WARP_SIZE, color="grey", linestyle="--", linewidth=1)
    if mark is not None:
        r, label = mark
        ax.plot([r], [blocks_per_sm(r, threads, smem_bytes, sm)[0] * warps_per_block], "o",
                color="#c44e52")
        ax.annotate(label, (r, blocks_per_sm(r, threads, smem_bytes, sm)[0] * warps_per_block),
                    textcoords="offset points", xytext=(6, 6), fontsize=8)
    ax.set_xlabel("registers per thread")
    ax.set_ylabel("resident warps per SM")
    ax.set_title(f"{sm.name}: blocks of {threads} threads, {smem_bytes} B shared "
                 f"(dashed: the SM's maximum)", fontsize=9)
    return ax


def _array_number(picture, array):
    names = [a["name"] for a in picture["arrays"]]
    if array not in names:
        raise ValueError(f"the observed block never touched {array!r}; it touched {names}")
    return names.index(array)


def _array_shape(picture, array):
    return next(tuple(a["shape"]) for a in picture["arrays"] if a["name"] == array)


def _warp_cmap():
    from matplotlib.colors import ListedColormap
    cmap = ListedColormap(WARP_COLOURS)
    cmap.set_bad("#eeeeee")
    return cmap
