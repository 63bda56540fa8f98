"""What one block of a simulated launch did, as plain data: the picture of a student's kernel.

The instrumented simulator (:mod:`gemmlab.labs.simulator`) hands every global and shared access
to a :class:`BlockRecorder`, which keeps the accesses of the block being run and, at the end of
the launch, the accesses of the one block worth showing: the block of the fault (an
out-of-bounds access, a barrier not every thread reaches, ...), else the first block with a
shared-memory race, else the first block that read shared memory nobody had written, else the
last block of the grid (where the edges are), whatever order the blocks ran in. :meth:`BlockRecorder.plain` turns it into plain
data (dicts, lists, strings, numbers: JSON as it is), so that a picture can be drawn in a
process that never saw the simulator (:mod:`gemmlab.viz.kernel`)::

    {"block": [1, 0, 0], "block_dims": [32, 1, 1], "block_ndim": 1, "grid": [3, 1, 1],
     "grid_ndim": 1,
     "arrays": [{"name": "a", "space": "global", "shape": [70]}, {"name": "s", ...}],
     "accesses": {"thread": [...], "interval": [...], "write": [0 or 1, ...],
                  "array": [position in "arrays", ...], "element": [row-major flat index, ...]},
     "barriers": ["line 9 (`cuda.syncthreads()`)", ...],   # the barrier ending interval i
     "fault": None or {"kind", "message", "thread", "array", "index", "action"},
     "race": None or {"kind": "read-write" | "write-write" | "unwritten", "array", "index",
                      "threads": [reader, writer or None], "interval"},
     "truncated": False}

Threads are numbered inside the block as CUDA numbers them (x fastest); ``thread`` in a fault
is None when no single thread is to blame (a timeout, a barrier).

:func:`gemmlab.labs.observe.observe` runs a kernel and returns that plain data.
"""
from operator import itemgetter

MAX_ACCESSES = 200_000      # per block: beyond this the picture says it was cut short

FAULT, RACE, UNWRITTEN, PLAIN = 3, 2, 1, 0      # how much a block is worth showing


class BlockRecorder:
    """Keeps the accesses of the running block and the block worth showing (see the module)."""

    def __init__(self):
        self.accesses = []          # (thread, interval, "r"/"w", array, flat index)
        self.barriers = []
        self.kept = None            # (rank, block run, accesses, barriers, highlight)

    def start_block(self):
        self.accesses, self.barriers = [], []

    def access(self, thread, interval, op, array, flat):
        if len(self.accesses) < MAX_ACCESSES:
            self.accesses.append((thread, interval, op, array, flat))
        elif len(self.accesses) == MAX_ACCESSES:
            self.accesses.append(None)          # the mark of a cut

    def barrier(self, site_text):
        self.barriers.append(site_text)

    def end_block(self, block_run, rank, highlight=None):
        """The running block is over: keep it if it is worth more than the kept one (a plain
        block replaces a plain one before it in the grid, so the last block of the grid is kept
        when nothing went wrong, in whatever order the blocks ran)."""
        kept = self.kept
        if (kept is None or rank > kept[0]
                or rank == PLAIN == kept[0] and block_run.linear > kept[1].linear):
            self.kept = (rank, block_run, self.accesses, self.barriers, highlight)

    def plain(self, launch, fault=None):
        """The kept block as plain data (None if no block ran)."""
        if self.kept is None:
            return None
        rank, block_run, accesses, barriers, highlight = self.kept
        arrays = [{"name": name, "space": "global", "shape": list(array.shape)}
                  for name, array in launch.trace.arrays.items()]
        arrays += [{"name": array.name, "space": "shared", "shape": list(array.shape)}
                   for array in block_run.allocations.arrays.values()]
        truncated = bool(accesses) and accesses[-1] is None
        if truncated:
            accesses = accesses[:-1]
        number = {a["name"]: n for n, a in enumerate(arrays)}
        # one column at a time: zip(*accesses) would make an iterator per access, enough of them
        # to set off a full collection of the heap
        threads, intervals, ops, names, elements = (list(map(itemgetter(n), accesses))
                                                    for n in range(5))
        return {"block": list(block_run.idx), "block_dims": list(launch.block),
                "block_ndim": launch.block_ndim, "grid": list(launch.grid),
                "grid_ndim": launch.grid_ndim, "arrays": arrays,
                "accesses": {"thread": threads, "interval": intervals,
                             "write": [int(op == "w") for op in ops],
                             "array": list(map(number.__getitem__, names)),
                             "element": elements},
                "barriers": list(barriers),
                "fault": fault if rank == FAULT else None,
                "race": highlight if rank in (RACE, UNWRITTEN) else None,
                "truncated": truncated}
