"""How C = AB is laid out and computed: matrices as HTML tables with highlighted cells, the
row-major index and byte address of every element, and a stepper through the dot-product chain of
one output (take a pair, multiply, accumulate)."""
import html

import numpy as np

A_COLOUR, B_COLOUR, C_COLOUR, DONE_COLOUR = "#ffd8a8", "#a5d8ff", "#b2f2bb", "#e9ecef"


def _number(x):
    x = float(x)
    return f"{x:g}" if x == int(x) or abs(x) >= 1e-3 else f"{x:.3g}"


def matrix_html(M, title="", highlight=None, fmt=_number):
    """A small matrix as an HTML table; ``highlight`` maps (row, col) to a background colour."""
    M = np.asarray(M)
    if M.ndim != 2:
        raise ValueError(f"matrix_html draws 2-D arrays, got shape {M.shape}")
    highlight = highlight or {}
    rows = []
    for r in range(M.shape[0]):
        cells = "".join(
            f'<td style="border:1px solid #999;padding:2px 6px;text-align:right;'
            f'background:{highlight.get((r, c), "white")}">{html.escape(fmt(M[r, c]))}</td>'
            for c in range(M.shape[1]))
        rows.append(f"<tr>{cells}</tr>")
    caption = f"<caption>{html.escape(title)}</caption>" if title else ""
    return (f'<table style="border-collapse:collapse;display:inline-table;margin:4px 12px">'
            f"{caption}{''.join(rows)}</table>")


def row_major_table(rows, cols, itemsize=4, base=0):
    """(index, address) arrays of a contiguous row-major ``rows x cols`` array: the element at
    (r, c) is number r * cols + c, and its first byte is at base + index * itemsize."""
    index = np.arange(rows * cols).reshape(rows, cols)
    return index, base + index * itemsize


def draw_row_major(rows, cols, itemsize=4, base=0, mark=None, ax=None):
    """Each element of a row-major matrix labelled with its index and byte address; ``mark``
    = (r, c) outlines one element. Shows why the row stride is ``cols`` elements."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    index, address = row_major_table(rows, cols, itemsize, base)
    if ax is None:
        _, ax = plt.subplots(figsize=(1.1 * cols + 1, 0.7 * rows + 1.2))
    for r in range(rows):
        for c in range(cols):
            marked = mark == (r, c)
            ax.add_patch(Rectangle((c, r), 1, 1, facecolor=A_COLOUR if marked else "white",
                                   edgecolor="black", linewidth=2 if marked else 0.5))
            ax.text(c + 0.5, r + 0.5, f"[{r},{c}]\n#{index[r, c]}\n@{address[r, c]}",
                    ha="center", va="center", fontsize=7)
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.set_xticks(np.arange(cols) + 0.5, [str(c) for c in range(cols)])
    ax.set_yticks(np.arange(rows) + 0.5, [str(r) for r in range(rows)])
    ax.set_xlabel("column index c")
    ax.set_ylabel("row index r")
    ax.set_title(f"row-major {rows} x {cols}, {itemsize} B per element: "
                 f"index = r * {cols} + c, address = {base} + index * {itemsize} B", fontsize=9)
    return ax.figure


def dot_product_steps(A, B, i, j):
    """The chain of output C[i, j]: for k = 0..K-1 the pair (A[i,k], B[k,j]), its product and the
    running sum after it. Returns a list of dicts with keys k, a, b, product, acc."""
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"need A (M x K) and B (K x N) with equal K, got {A.shape} and {B.shape}")
    if not (0 <= i < A.shape[0] and 0 <= j < B.shape[1]):
        raise ValueError(f"output ({i}, {j}) is outside C, which is {A.shape[0]} x {B.shape[1]}")
    steps, acc = [], 0
    for k in range(A.shape[1]):
        product = A[i, k] * B[k, j]
        acc = acc + product
        steps.append({"k": k, "a": A[i, k], "b": B[k, j], "product": product, "acc": acc})
    return steps


class DotProductStepper:
    """Pick an output (i, j) and a step; see which pair is read, what has been accumulated, and
    which outputs are finished. ``.i``, ``.j``, ``.step`` are the sliders, ``.text`` the view,
    ``.state`` the current step's numbers, ``.widget`` what a notebook displays."""

    def __init__(self, A, B, i=0, j=0):
        import ipywidgets as widgets
        self.A, self.B = np.asarray(A), np.asarray(B)
        dot_product_steps(self.A, self.B, i, j)          # validates shapes and (i, j)
        M, K = self.A.shape
        N = self.B.shape[1]
        self.i = widgets.IntSlider(value=i, min=0, max=M - 1, description="i (row)")
        self.j = widgets.IntSlider(value=j, min=0, max=N - 1, description="j (column)")
        self.step = widgets.IntSlider(value=0, min=0, max=K, description="products done")
        self.text = widgets.HTML()
        self.widget = widgets.VBox([widgets.HBox([self.i, self.j]), self.step, self.text])
        for slider in (self.i, self.j, self.step):
            slider.observe(lambda change: self.show(), names="value")
        self.show()

    def show(self):
        """Redraw for the sliders' current values (also what moving a slider does)."""
        i, j, done = self.i.value, self.j.value, self.step.value
        steps = dot_product_steps(self.A, self.B, i, j)
        acc = steps[done - 1]["acc"] if done else 0
        self.state = {"i": i, "j": j, "done": done, "acc": acc,
                      "finished": done == len(steps), "k": steps[done - 1]["k"] if done else None}
        a_hl, b_hl = {}, {}
        for s in steps[:done]:
            a_hl[(i, s["k"])] = DONE_COLOUR
            b_hl[(s["k"], j)] = DONE_COLOUR
        if done:
            a_hl[(i, done - 1)], b_hl[(done - 1, j)] = A_COLOUR, B_COLOUR
        shown = np.full((self.A.shape[0], self.B.shape[1]), np.nan)
        shown[i, j] = acc
        terms = " + ".join(f"{_number(s['a'])}*{_number(s['b'])}" for s in steps[:done]) or "0"
        status = "finished" if self.state["finished"] else f"{len(steps) - done} products to go"
        self.text.value = (
            matrix_html(self.A, "A (row i is read)", a_hl)
            + matrix_html(self.B, "B (column j is read)", b_hl)
            + matrix_html(shown, "C (this output only)", {(i, j): C_COLOUR},
                          fmt=lambda x: "" if np.isnan(x) else _number(x))
            + f"<p>C[{i},{j}] = {terms} = <b>{_number(acc)}</b> ({status})</p>")

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)
