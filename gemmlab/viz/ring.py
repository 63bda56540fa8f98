"""The ring all-reduce made visible: which chunk every rank holds and sends at each step.

Everything here is read off a simulated run's trace (``gl.collectives.ring_allreduce``), never
recomputed from the schedule, so the pictures show what the algorithm actually did:

* :func:`holdings` replays the trace: after k steps, whose contributions rank r's copy of chunk c
  contains;
* :class:`RingStepper`, an ipywidgets slider (and play button) over the steps, showing that grid,
  the messages of the next step, and the bytes each rank has sent and received so far, beside the
  same ledger for a centralized all-reduce of the same buffers;
* :func:`draw_ring_step`, the same state as a matplotlib figure: the ring with this step's
  messages as arrows, and the grid coloured by how many ranks each chunk already sums.
"""
import html

import numpy as np

from ..collectives import centralized_allreduce, ring_allreduce


def holdings(result, after_steps):
    """For a ring all-reduce or reduce-scatter result: ``grid[r][c]``, the set of ranks whose data
    rank r's copy of chunk c holds after the first ``after_steps`` steps of the trace."""
    n = result.n_ranks
    if not 0 <= after_steps <= result.n_steps:
        raise ValueError(f"after_steps={after_steps}: expected 0 to {result.n_steps}")
    grid = [[frozenset({r}) for _ in range(n)] for r in range(n)]
    for step in range(after_steps):
        before = [row[:] for row in grid]      # the messages of one step travel at the same time
        for t in result.transfers(step):
            if t.phase == "reduce-scatter":
                grid[t.dst][t.chunk] = before[t.dst][t.chunk] | before[t.src][t.chunk]
            elif t.phase == "all-gather":
                grid[t.dst][t.chunk] = before[t.src][t.chunk]
            else:
                raise ValueError(f"holdings() replays ring traces; got a {t.phase!r} message")
    return grid


def label(ranks):
    """"0+1+3" for the set {0, 1, 3}: the ranks a chunk copy sums."""
    return "+".join(str(r) for r in sorted(ranks))


def ledger(result, after_steps):
    """Per-rank bytes (sent, received) by the end of the first ``after_steps`` steps."""
    sent = np.zeros(result.n_ranks, dtype=np.int64)
    recv = np.zeros(result.n_ranks, dtype=np.int64)
    for t in result.steps:
        if t.step < after_steps:
            sent[t.src] += t.bytes
            recv[t.dst] += t.bytes
    return sent, recv


def _phase_name(result, step):
    moves = result.transfers(step)
    return moves[0].phase if moves else "done"


def grid_html(result, after_steps):
    """The holdings grid as an HTML table; the chunks about to be sent are framed in red."""
    n, grid = result.n_ranks, holdings(result, after_steps)
    sending = {(t.src, t.chunk): t.dst for t in result.transfers(after_steps)}
    rows = ["<tr><th></th>" + "".join(f"<th>chunk {c}</th>" for c in range(n)) + "</tr>"]
    for r in range(n):
        cells = []
        for c in range(n):
            full = len(grid[r][c]) == n
            style = "background:#8fd18f;" if full else ""
            if (r, c) in sending:
                style += "outline:2px solid #c0392b;"
            arrow = f" &rarr; {sending[(r, c)]}" if (r, c) in sending else ""
            cells.append(f'<td style="{style}padding:2px 6px;text-align:center" '
                         f'data-rank="{r}" data-chunk="{c}">{label(grid[r][c])}{arrow}</td>')
        rows.append(f"<tr><th>rank {r}</th>{''.join(cells)}</tr>")
    return "<table style='border-collapse:collapse'>" + "".join(rows) + "</table>"


def ledger_html(ring, central, after_steps):
    """Bytes sent / received per rank so far, ring next to centralized (same step numbering)."""
    ring_sent, ring_recv = ledger(ring, after_steps)
    c_sent, c_recv = ledger(central, after_steps)
    rows = ["<tr><th></th><th>ring sent</th><th>ring received</th>"
            "<th>centralized sent</th><th>centralized received</th></tr>"]
    for r in range(ring.n_ranks):
        rows.append(f"<tr><th>rank {r}</th><td data-ledger='ring-sent-{r}'>{ring_sent[r]}</td>"
                    f"<td data-ledger='ring-recv-{r}'>{ring_recv[r]}</td>"
                    f"<td data-ledger='central-sent-{r}'>{c_sent[r]}</td>"
                    f"<td data-ledger='central-recv-{r}'>{c_recv[r]}</td></tr>")
    return ("<p>bytes so far (root of the centralized version: rank 0)</p>"
            "<table style='border-collapse:collapse;text-align:right'>" + "".join(rows) + "</table>")


class RingStepper:
    """A slider over the 2(N-1) steps of a ring all-reduce of ``n_items`` float32 values per rank.

    The slider value k means "k steps done": the grid shows what every rank holds then (green:
    summed over all ranks), red frames mark the chunks sent in step k, and the ledger counts the
    bytes of steps 0..k-1. Display it in a notebook as the last expression of a cell.
    ``result``: replay this recorded run instead (e.g. a student's, from
    ``gemmlab.labs.ring_run``); its buffers' size then sets the centralized ledger's.
    """

    def __init__(self, n_ranks=4, n_items=8, result=None):
        import ipywidgets as widgets
        if result is None:
            buffers = [np.full(n_items, r, dtype=np.float32) for r in range(n_ranks)]
            self.ring = ring_allreduce(buffers)
            self.name = "ring all-reduce"
        else:
            buffers = [np.asarray(out) for out in result.outputs]
            self.ring = result
            self.name = result.algorithm
        self.central = centralized_allreduce(buffers)
        last = self.ring.n_steps
        self.slider = widgets.IntSlider(value=0, min=0, max=last, description="steps done")
        self.play = widgets.Play(value=0, min=0, max=last, interval=1200)
        widgets.jslink((self.play, "value"), (self.slider, "value"))
        self.title = widgets.HTML()
        self.view = widgets.HTML()
        self.ledger = widgets.HTML()
        self.slider.observe(lambda change: self.show(change["new"]), names="value")
        self.widget = widgets.VBox([widgets.HBox([self.play, self.slider]), self.title,
                                    self.view, self.ledger])
        self.show(0)

    def show(self, after_steps):
        """Render the state after ``after_steps`` steps (the slider calls this)."""
        n = self.ring.n_ranks
        phase = _phase_name(self.ring, after_steps)
        what = ("all messages done: every rank holds every summed chunk" if phase == "done" else
                f"next: step {after_steps} of {self.ring.n_steps} ({phase}); framed chunks "
                f"travel to the next rank" + (", which adds them" if phase == "reduce-scatter"
                                              else ", which stores them"))
        self.title.value = f"<b>{html.escape(self.name)}, {n} ranks</b> &mdash; {html.escape(what)}"
        self.view.value = grid_html(self.ring, after_steps)
        self.ledger.value = ledger_html(self.ring, self.central, after_steps)

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)


def _ring_positions(n):
    angle = np.pi / 2 - 2 * np.pi * np.arange(n) / n
    return np.cos(angle), np.sin(angle)


def draw_ring_step(result, after_steps, axes=None):
    """Left: the ranks on a ring, with the messages of step ``after_steps`` as arrows labelled by
    chunk. Right: how many ranks each chunk copy sums after ``after_steps`` steps. Returns the
    figure."""
    import matplotlib.pyplot as plt
    n = result.n_ranks
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    ring_ax, grid_ax = axes
    x, y = _ring_positions(n)
    ring_ax.scatter(x, y, s=600, color="#4c72b0", zorder=2)
    for r in range(n):
        ring_ax.text(x[r], y[r], str(r), color="white", ha="center", va="center", zorder=3)
    for t in result.transfers(after_steps):
        ring_ax.annotate("", xy=(0.8 * x[t.dst], 0.8 * y[t.dst]), xytext=(0.8 * x[t.src], 0.8 * y[t.src]),
                         arrowprops=dict(arrowstyle="->", color="#c0392b", lw=1.5))
        ring_ax.text(0.55 * (x[t.src] + x[t.dst]), 0.55 * (y[t.src] + y[t.dst]), f"c{t.chunk}",
                     ha="center", va="center", fontsize=9, color="#c0392b")
    phase = _phase_name(result, after_steps)
    ring_ax.set_title(f"step {after_steps}: {phase}" if phase != "done" else "all steps done")
    ring_ax.set_xlim(-1.4, 1.4)
    ring_ax.set_ylim(-1.4, 1.4)
    ring_ax.set_aspect("equal")
    ring_ax.axis("off")
    grid = holdings(result, after_steps)
    counts = np.array([[len(cell) for cell in row] for row in grid])
    grid_ax.imshow(counts, cmap="Greens", vmin=0, vmax=n)
    for r in range(n):
        for c in range(n):
            grid_ax.text(c, r, label(grid[r][c]) if n <= 6 else str(counts[r, c]),
                         ha="center", va="center", fontsize=8,
                         color="white" if counts[r, c] > n / 2 else "black")
    grid_ax.set_xticks(range(n))
    grid_ax.set_yticks(range(n))
    grid_ax.set_xlabel("chunk")
    grid_ax.set_ylabel("rank")
    grid_ax.set_title(f"ranks summed in each chunk copy after {after_steps} steps")
    return grid_ax.figure
