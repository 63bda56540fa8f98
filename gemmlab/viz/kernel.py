"""The picture of a student's kernel: what the threads of one block read and wrote.

It is drawn from plain data only (the ``observed`` block of a simulated launch, see
:mod:`gemmlab.labs.observed`), never from the simulator's objects, so that the run may happen in
another process. The picture is an SVG in HTML (a notebook output that a static page keeps):

* one column per thread (all of a block of up to 32 threads, else 16: those at fault first,
  then the lowest ids), one row per barrier interval, a dashed line for each
  ``cuda.syncthreads()`` between two rows;
* in each cell, every array the block touched in that interval (global and shared), restricted
  to the window of elements the block touched, long 1-D arrays wrapped at 32 elements a row:
  blue = read, orange = written, purple = both;
* after an out-of-bounds access, the element outside the array is drawn beyond its edge in red;
  after a race, the two threads and the element are red (after a read of shared memory nobody
  wrote, the reader and the element).

``check(question, kernel, show=True)`` draws it for every kernel lab; :func:`display_picture`
decides when it is drawn unasked.
"""
import html
import math

READ, WRITE = 1, 2
COLOURS = {READ: "#4c8bf5", WRITE: "#f5a524", READ | WRITE: "#9b59b6"}
FAULT = "#d62728"
IDLE = "#eeeeee"
ALL_THREADS_UP_TO = 32      # a block this small is drawn whole
SHOWN_THREADS = 16          # otherwise this many threads
MAX_INTERVALS = 8
WRAP = 32                   # a 1-D array is drawn in rows of this many elements
MAX_WINDOW = 512            # elements of a 1-D window, and 64 a side for 2-D
LABEL_W, HEAD_H, GAP = 96, 16, 14
PANELS_PER_ROW = 8


def needs_attention(picture):
    """Whether the picture shows a fault worth seeing unasked: an out-of-bounds access, a
    shared-memory race or a read of shared memory nobody wrote."""
    fault = picture.get("fault") or {}
    return fault.get("kind") == "out of bounds" or bool(picture.get("race"))


def display_picture(picture, show=False):
    """Display the picture in a notebook when asked (``show``) or when it needs attention."""
    if not (show or needs_attention(picture)):
        return
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return
    if get_ipython() is not None:
        display(draw(picture))


def draw(picture):
    """A :class:`KernelPicture` of ``picture`` (plain data from the simulator)."""
    return KernelPicture(picture)


class KernelPicture:
    """Renders as HTML in a notebook; ``.svg`` is the drawing, ``.text`` a one-paragraph account."""

    def __init__(self, picture):
        self.layout = _Layout(picture)
        self.svg = self.layout.svg()
        self.text = self.layout.describe()

    def _repr_html_(self):
        return (f'<div class="gemmlab-kernel-picture" style="overflow-x:auto">'
                f'{self.svg}<p style="font-size:12px;margin:2px 0">'
                f'{html.escape(self.text)}</p></div>')

    def __repr__(self):
        return self.text


class _Layout:
    """Reads the plain data (refusing what is not) and places every element of the drawing."""

    def __init__(self, p):
        self.block = [int(v) for v in p["block"]]
        self.dims = [int(v) for v in p["block_dims"]]
        self.block_ndim, self.grid_ndim = int(p["block_ndim"]), int(p["grid_ndim"])
        self.grid = [int(v) for v in p["grid"]]
        self.arrays = [(str(a["name"]), str(a["space"]), tuple(int(d) for d in a["shape"]))
                       for a in p["arrays"]]
        self.barriers = [str(b) for b in p["barriers"]]
        self.fault, self.race = p.get("fault"), p.get("race")
        self.label = " ".join(str(p.get(k, "")) for k in ("lab", "case")).strip()
        self.truncated = bool(p.get("truncated"))
        self.threads_per_block = math.prod(self.dims)
        self._collect(p["accesses"])
        self._highlight()
        self._choose()

    # -- reading ------------------------------------------------------------------------------
    def _collect(self, accesses):
        columns = [accesses[k] for k in ("thread", "interval", "write", "array", "element")]
        if len({len(c) for c in columns}) != 1:
            raise ValueError("the accesses' columns differ in length")
        self.touched = {}           # (thread, interval, array) -> {element index: READ|WRITE}
        self.extent = {}            # array -> list of element indices touched by the block
        self.intervals = len(self.barriers) + 1
        for thread, interval, write, array, element in zip(*columns, strict=True):
            name, _, shape = self.arrays[int(array)]
            index = _unflatten(int(element), shape)
            key = (int(thread), int(interval), name)
            cells = self.touched.setdefault(key, {})
            cells[index] = cells.get(index, 0) | (WRITE if write else READ)
            self.extent.setdefault(name, set()).add(index)
            self.intervals = max(self.intervals, int(interval) + 1)

    def _highlight(self):
        """The threads and the element (array, index, interval) at fault, if any."""
        self.hot_threads, self.hot = [], None
        last = self.intervals - 1
        if self.fault and self.fault.get("kind") == "out of bounds":
            if self.fault.get("thread") is not None:
                self.hot_threads = [int(self.fault["thread"])]
            self.hot = (str(self.fault["array"]), tuple(int(i) for i in self.fault["index"]),
                        last)
        elif self.race:
            self.hot_threads = [int(t) for t in self.race["threads"] if t is not None]
            self.hot = (str(self.race["array"]), tuple(int(i) for i in self.race["index"]),
                        int(self.race["interval"]))
        elif self.fault and self.fault.get("thread") is not None:
            self.hot_threads = [int(self.fault["thread"])]
        if self.hot:
            self.extent.setdefault(self.hot[0], set()).add(self.hot[1])

    def _choose(self):
        """The threads, intervals and array windows to draw."""
        limit = (self.threads_per_block if self.threads_per_block <= ALL_THREADS_UP_TO
                 else SHOWN_THREADS)
        chosen = list(dict.fromkeys(t for t in self.hot_threads if 0 <= t < self.threads_per_block))
        chosen += [t for t in range(self.threads_per_block) if t not in chosen][:limit - len(chosen)]
        self.shown = sorted(chosen)
        centre = self.hot[2] if self.hot else 0
        start = max(0, min(centre - MAX_INTERVALS // 2, self.intervals - MAX_INTERVALS))
        self.rows = list(range(start, min(self.intervals, start + MAX_INTERVALS)))
        self.windows = {name: _window(self.extent[name], shape)
                        for name, _, shape in self.arrays if name in self.extent}

    # -- drawing ------------------------------------------------------------------------------
    def _row_arrays(self, interval):
        names = {name for (t, i, name) in self.touched if i == interval}
        if self.hot and self.hot[2] == interval:
            names.add(self.hot[0])
        return [name for name, _, _ in self.arrays if name in names]

    def _panel_rows(self):
        """[(interval, [array names]), ...]: the inside of every thread's panel, top to bottom."""
        return [(interval, self._row_arrays(interval)) for interval in self.rows]

    def svg(self):
        panel_w = max([w.width for w in self.windows.values()] + [48]) + GAP
        inside = self._panel_rows()
        panel_h = HEAD_H + sum(sum(self.windows[n].height + 12 for n in names) + 14
                               for _, names in inside)
        parts = []
        y = self._title(parts, 0)
        for first in range(0, len(self.shown), PANELS_PER_ROW):
            threads = self.shown[first:first + PANELS_PER_ROW]
            self._labels(parts, y, inside, len(threads) * panel_w)
            for column, thread in enumerate(threads):
                self._panel(parts, LABEL_W + column * panel_w, y, thread, inside, panel_w, panel_h)
            y += panel_h + GAP
        width = LABEL_W + min(len(self.shown), PANELS_PER_ROW) * panel_w
        return (f'<svg xmlns="http://www.w3.org/2000/svg" class="kp" width="{width}" '
                f'height="{y}" viewBox="0 0 {width} {y}" font-family="sans-serif">'
                f'{"".join(parts)}</svg>')

    def _title(self, parts, y):
        legend = [(COLOURS[READ], "read"), (COLOURS[WRITE], "written"),
                  (COLOURS[READ | WRITE], "both"), (FAULT, "at fault")]
        parts.append(f'<text x="2" y="{y + 13}" font-size="12" font-weight="bold">'
                     f'{html.escape(self._heading())}</text>')
        y += 18
        x = 2
        for colour, text in legend:
            parts.append(f'<rect x="{x}" y="{y + 2}" width="10" height="10" fill="{colour}"/>'
                         f'<text x="{x + 13}" y="{y + 11}" font-size="10">{text}</text>')
            x += 20 + 6 * len(text)
        parts.append(f'<line x1="{x}" x2="{x + 24}" y1="{y + 7}" y2="{y + 7}" stroke="#555" '
                     f'stroke-dasharray="5,3"/><text x="{x + 28}" y="{y + 11}" font-size="10">'
                     f'cuda.syncthreads(); a dashed frame: past the end of the array</text>')
        return y + 22

    def _labels(self, parts, y, inside, width):
        """The left margin of a row of panels: the arrays' names and windows, the barriers."""
        y += HEAD_H
        for n, (interval, names) in enumerate(inside):
            if n:
                barrier = (self.barriers[interval - 1] if interval - 1 < len(self.barriers)
                           else "cuda.syncthreads()")
                parts.append(f'<line class="kp-barrier" x1="0" x2="{LABEL_W + width}" '
                             f'y1="{y + 4}" y2="{y + 4}" stroke="#555" stroke-dasharray="5,3">'
                             f'<title>{html.escape(barrier)}</title></line>')
            y += 14
            for name in names:
                window = self.windows[name]
                parts.append(f'<text x="2" y="{y + 8}" font-size="9" fill="#333">'
                             f'{html.escape(window.label(name))}<title>{html.escape(name)} '
                             f'({self._space(name)} memory)</title></text>')
                y += window.height + 12

    def _panel(self, parts, x, y, thread, inside, panel_w, panel_h):
        hot = thread in self.hot_threads
        if hot:
            parts.append(f'<rect class="kp-fault kp-panel" x="{x - 4}" y="{y}" '
                         f'width="{panel_w - 4}" height="{panel_h}" fill="#fff5f5" '
                         f'stroke="{FAULT}" stroke-width="1.5"/>')
        parts.append(f'<text x="{x}" y="{y + 12}" font-size="10" '
                     f'class="{"kp-thread kp-fault" if hot else "kp-thread"}" '
                     f'fill="{FAULT if hot else "#333"}">'
                     f'{html.escape(self._thread_name(thread))}</text>')
        y += HEAD_H
        for interval, names in inside:
            y += 14
            for name in names:
                parts.append(self._cells(self.windows[name], x, y, thread, interval, name))
                y += self.windows[name].height + 12

    def _cells(self, window, x, y, thread, interval, name):
        out = [f'<rect x="{x}" y="{y}" width="{window.width}" height="{window.height}" '
               f'fill="{IDLE}"/>']
        out += [f'<rect x="{x + cx}" y="{y + cy}" width="{w}" height="{h}" fill="#fff" '
                f'stroke="#999" stroke-dasharray="2,1" stroke-width="0.5"/>'
                for cx, cy, w, h in window.outside_parts()]
        size = window.cell
        for index, what in self.touched.get((thread, interval, name), {}).items():
            place = window.place(index)
            if place is not None:
                cx, cy = place
                kind = "both" if what == READ | WRITE else "write" if what == WRITE else "read"
                out.append(f'<rect class="kp-{kind}" x="{x + cx}" y="{y + cy}" width="{size}" '
                           f'height="{size}" fill="{COLOURS[what]}"><title>{html.escape(name)}'
                           f'[{", ".join(map(str, index))}]</title></rect>')
        if self.hot and self.hot[0] == name and self.hot[2] == interval and thread in self.hot_threads:
            place = window.place(self.hot[1])
            if place is not None:
                cx, cy = place
                outside = self.fault is not None      # an element outside the array: no colour
                out.append(f'<rect class="kp-fault kp-element" x="{x + cx - 2}" y="{y + cy - 2}" '
                           f'width="{size + 4}" height="{size + 4}" '
                           f'fill="{FAULT if outside else "none"}" stroke="{FAULT}" '
                           f'stroke-width="2"><title>{html.escape(name)}'
                           f'[{", ".join(map(str, self.hot[1]))}]</title></rect>')
        return "".join(out)

    # -- words --------------------------------------------------------------------------------
    def _thread_name(self, t):
        if self.block_ndim == 1:
            return f"t{t}"
        x, rest = t % self.dims[0], t // self.dims[0]
        return f"({x},{rest % self.dims[1]})"

    def _block_name(self):
        return (str(self.block[0]) if self.grid_ndim == 1
                else "(" + ",".join(map(str, self.block[:self.grid_ndim])) + ")")

    def _space(self, name):
        return next(space for n, space, _ in self.arrays if n == name)

    def _heading(self):
        grid = " x ".join(map(str, self.grid[:self.grid_ndim]))
        head = f"{self.label}: " if self.label else ""
        return (f"{head}block {self._block_name()} of a {grid} grid, "
                f"{self.threads_per_block} threads ({len(self.shown)} shown)")

    def describe(self):
        parts = [self._heading() + f", {self.intervals} barrier interval(s)"]
        if len(self.rows) < self.intervals:
            parts.append(f"intervals {self.rows[0]}-{self.rows[-1]} drawn")
        if self.fault:
            parts.append(str(self.fault.get("message", ""))[:400])
        elif self.race:
            who = " and ".join(self._thread_name(t) for t in self.hot_threads)
            index = ", ".join(map(str, self.hot[1]))
            what = ("read a slot nobody had written" if self.race.get("kind") == "unwritten"
                    else "raced")
            parts.append(f"{who} {what}: {self.hot[0]}[{index}] in interval {self.hot[2]}")
        if self.truncated:
            parts.append("the block made more accesses than are drawn")
        return "; ".join(parts) + "."


class _Window:
    """The elements of one array that the drawing shows, and where each one goes: 1-D arrays in
    lines of 32 elements, N-d arrays as 2-D (leading axes merged)."""

    def __init__(self, shape, lows, highs):
        self.shape, self.lows, self.highs = shape, lows, highs
        self.flat_shape = (shape if len(shape) <= 1
                           else (math.prod(shape[:-1]), shape[-1]))
        if len(shape) <= 1:
            length = highs[0] - lows[0] + 1
            self.cell = 4 if length <= 2 * WRAP else 3
            self.columns, self.lines = min(length, WRAP), -(-length // WRAP)
        else:
            self.lines, self.columns = (h - l + 1 for l, h in zip(lows, highs, strict=True))
            self.cell = max(2, min(6, 96 // max(self.lines, self.columns)))
        self.width, self.height = self.columns * self.cell, self.lines * self.cell

    def label(self, name):
        """'a[64:71]' or 'C[16:19, 0:16]': the part of the array the window shows."""
        return f"{name}[{', '.join(f'{l}:{h + 1}' for l, h in zip(self.lows, self.highs, strict=True))}]"

    def outside_parts(self):
        """(x, y, w, h) of the parts of the window that lie outside the array."""
        c = self.cell
        if len(self.shape) <= 1:
            n = self.shape[0] if self.shape else 1
            return [(*self.place((k,)), c, c) for k in range(self.lows[0], self.highs[0] + 1)
                    if not 0 <= k < n]
        parts = []
        for axis in (0, 1):
            low, high, size = self.lows[axis], self.highs[axis], self.flat_shape[axis]
            for start, stop in ((low, min(high, -1)), (max(low, size), high)):
                if start <= stop:
                    span = (stop - start + 1) * c
                    offset = (start - low) * c
                    parts.append((0, offset, self.width, span) if axis == 0
                                 else (offset, 0, span, self.height))
        return parts

    def place(self, index):
        """(x, y) of an element in the window, or None if it lies outside the window."""
        if len(self.shape) <= 1:
            k = (index[0] if index else 0) - self.lows[0]
            if not 0 <= k <= self.highs[0] - self.lows[0]:
                return None
            return (k % WRAP) * self.cell, (k // WRAP) * self.cell
        row, col = _rows_cols(index, self.shape)
        if not (self.lows[0] <= row <= self.highs[0] and self.lows[1] <= col <= self.highs[1]):
            return None
        return (col - self.lows[1]) * self.cell, (row - self.lows[0]) * self.cell


def _window(indices, shape):
    """The bounding window of the touched elements (capped in size)."""
    if len(shape) <= 1:
        flat = sorted(i[0] if i else 0 for i in indices)
        low = flat[0]
        return _Window(shape, (low,), (min(flat[-1], low + MAX_WINDOW - 1),))
    rows, cols = zip(*(_rows_cols(i, shape) for i in indices), strict=True)
    lows = (min(rows), min(cols))
    highs = (min(max(rows), lows[0] + 63), min(max(cols), lows[1] + 63))
    return _Window(shape, lows, highs)


def _rows_cols(index, shape):
    """An N-d index as (row, column) of the array seen as 2-D (leading axes merged)."""
    row = 0
    for i, d in zip(index[:-1], shape[:-1], strict=True):
        row = row * d + i
    return row, index[-1]


def _unflatten(flat, shape):
    index = []
    for dim in reversed(shape[1:]):
        flat, i = divmod(flat, dim)
        index.append(i)
    index.append(flat)
    return tuple(index[::-1])


def _short(text, limit=60):
    return text if len(text) <= limit else text[:limit - 1] + "…"
