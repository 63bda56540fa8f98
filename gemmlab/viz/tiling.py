"""The tile animation: one output block of C = AB updated by a pair of input blocks per step
along K, with the partial sums kept in fast memory, and the elements brought in counted."""
import numpy as np

from ..numeric_args import whole_number
from .gemm_layout import A_COLOUR, B_COLOUR, C_COLOUR, DONE_COLOUR, matrix_html


def tile_steps(A, B, rows, cols, k_step):
    """Steps of updating the block C[rows, cols] (two ``range`` objects) with K cut into chunks
    of ``k_step``. Each step is a dict: k range, elements loaded in this step and so far, and the
    partial block after it. ``loaded_without_reuse`` is what each output reading all of its own
    inputs would load instead: len(rows) * len(cols) * 2K."""
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"need A (M x K) and B (K x N) with equal K, got {A.shape} and {B.shape}")
    inside = rows.stop <= A.shape[0] and cols.stop <= B.shape[1] and min(rows.start, cols.start) >= 0
    if not (rows and cols and inside):
        raise ValueError(f"block rows {rows} x cols {cols} must lie inside C, which is "
                         f"{A.shape[0]} x {B.shape[1]}")
    whole_number("k_step", k_step)
    K = A.shape[1]
    partial = np.zeros((len(rows), len(cols)), dtype=np.result_type(A, B))
    steps, total = [], 0
    for k0 in range(0, K, k_step):
        ks = range(k0, min(k0 + k_step, K))
        a_block = A[rows.start:rows.stop, ks.start:ks.stop]
        b_block = B[ks.start:ks.stop, cols.start:cols.stop]
        partial = partial + a_block @ b_block
        loaded = a_block.size + b_block.size
        total += loaded
        steps.append({"k": ks, "loaded": loaded, "loaded_so_far": total, "partial": partial.copy()})
    for s in steps:
        s["loaded_without_reuse"] = len(rows) * len(cols) * 2 * K
    return steps


class TileStepper:
    """A slider over the steps of :func:`tile_steps`; shows A, B with the current and earlier
    blocks coloured and the partial C block. ``.step`` is the slider, ``.state`` the numbers."""

    def __init__(self, A, B, rows=range(0, 2), cols=range(0, 2), k_step=2):
        import ipywidgets as widgets
        self.A, self.B, self.rows, self.cols = np.asarray(A), np.asarray(B), rows, cols
        self.steps = tile_steps(self.A, self.B, rows, cols, k_step)
        self.step = widgets.IntSlider(value=0, min=0, max=len(self.steps), description="K steps")
        self.text = widgets.HTML()
        self.widget = widgets.VBox([self.step, self.text])
        self.step.observe(lambda change: self.show(), names="value")
        self.show()

    def show(self):
        """Draw the state after the slider's number of steps."""
        done = self.step.value
        a_hl, b_hl = {}, {}
        for n, s in enumerate(self.steps[:done]):
            colour_a = A_COLOUR if n == done - 1 else DONE_COLOUR
            colour_b = B_COLOUR if n == done - 1 else DONE_COLOUR
            for k in s["k"]:
                a_hl.update({(i, k): colour_a for i in self.rows})
                b_hl.update({(k, j): colour_b for j in self.cols})
        C = np.full((self.A.shape[0], self.B.shape[1]), np.nan)
        if done:
            block_rows = slice(self.rows.start, self.rows.stop)
            C[block_rows, self.cols.start:self.cols.stop] = self.steps[done - 1]["partial"]
        block = {(i, j): C_COLOUR for i in self.rows for j in self.cols}
        loaded = self.steps[done - 1]["loaded_so_far"] if done else 0
        self.state = {"done": done, "loaded": loaded, "finished": done == len(self.steps),
                      "block": None if not done else self.steps[done - 1]["partial"]}
        self.text.value = (
            matrix_html(self.A, "A", a_hl) + matrix_html(self.B, "B", b_hl)
            + matrix_html(C, "C (the block's partial sums)", block,
                          fmt=lambda x: "" if np.isnan(x) else f"{x:g}")
            + f"<p>after {done} of {len(self.steps)} steps: <b>{loaded}</b> input elements brought "
              f"in; without reuse the {len(self.rows) * len(self.cols)} outputs would read "
              f"{self.steps[0]['loaded_without_reuse']}.</p>")

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)
