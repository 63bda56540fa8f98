"""One entry per course widget: the cell that shows it (as a lesson would), what a student does
to it, and what must change on the page.

To cover a new widget, add a ``WidgetCase``: ``code`` is a cell whose last line displays the
widget; ``act`` works it through the helpers of ``widget_ui``; ``shows`` is a text that must appear
in the widget afterwards and not before (None when only a figure changes); ``redraws`` says that
its figure must be redrawn.
"""
from dataclasses import dataclass
from typing import Callable, Optional

from . import widget_ui as ui


@dataclass(frozen=True)
class WidgetCase:
    name: str
    code: str
    act: Callable
    shows: Optional[str] = None
    redraws: bool = False

    @property
    def marker(self):
        """A comment that makes the case's cell easy to find in the page."""
        return f"# widget case: {self.name}"


CASES = [
    WidgetCase(
        "bits-type-a-value",
        "from gemmlab.viz.bits import bit_explorer\nbit_explorer('fp16', 1.0)",
        lambda view: ui.type_into(view, "value", "2049"),
        shows="stored as 2048.0"),                      # 2049 is a tie in fp16: nearest even
    WidgetCase(
        "bits-click-the-sign",
        "from gemmlab.viz.bits import bit_explorer\nbit_explorer('fp16', 1.0)",
        lambda view: ui.click_button(view, 0),
        shows="1 01111 0000000000"),                    # -1.0: only the sign bit changed
    WidgetCase(
        "bits-switch-format",
        "from gemmlab.viz.bits import bit_explorer\nbit_explorer('fp16', 1.0)",
        lambda view: ui.choose(view, "format", "bf16"),
        shows="0 01111111 0000000"),                    # 1.0 in bf16: 8 exponent bits, bias 127
    WidgetCase(
        "dot-product-stepper",
        "import numpy as np\nfrom gemmlab.viz.gemm_layout import DotProductStepper\n"
        "DotProductStepper(np.arange(1, 7).reshape(2, 3), np.arange(1, 7).reshape(3, 2), i=1, j=1)",
        lambda view: ui.move_slider(view, "products done"),
        shows="C[1,1] = 4*2 = 8"),
    WidgetCase(
        "amdahl-explorer",
        "from gemmlab.viz.speedup import AmdahlExplorer\nAmdahlExplorer(0.2, 8.0)",
        lambda view: ui.move_slider(view, "not sped up"),
        shows="overall speedup 3.24x",                  # 1 / (0.21 + 0.79 / 8)
        redraws=True),
    WidgetCase(
        "pipeline-gantt",
        "from gemmlab.viz.ladder_figures import pipeline_widget\npipeline_widget(4, 8.0, 12.0)",
        lambda view: ui.move_slider(view, "tiles n"),
        redraws=True),
    WidgetCase(
        "tma-ring-stages",
        "from gemmlab.viz.hopper import ring_widget\nring_widget(12, 0.2, 0.55, 1.0, stages=2)",
        lambda view: ui.move_slider(view, "stages"),
        redraws=True),
    WidgetCase(
        "roofline-explorer",
        "from gemmlab.viz.roofline import RooflineExplorer\n"
        "RooflineExplorer(67e12, 4.8e12, {'vector add': (1e6, 12e6),\n"
        "                                 'GEMM 1024': (2 * 1024**3, 12 * 1024**2)})",
        lambda view: ui.choose(view, "kernel", "GEMM 1024"),
        shows="(compute-bound)",                        # 171 FLOP/B, right of the ridge at 14
        redraws=True),
    WidgetCase(
        "tensorcore-error-vs-k",
        "from gemmlab.viz.tensorcore import error_widget\nerror_widget(max_log2_k=8, trials=4)",
        lambda view: ui.choose(view, "inputs", "ones"),
        redraws=True),
    WidgetCase(
        "cache-stepper",
        "from gemmlab.viz.cache import CacheStepper\n"
        "CacheStepper([0, 4, 8, 0, 4, 12], line_size=4, n_lines=2)",
        lambda view: ui.move_slider(view, "accesses"),
        shows="0 hits, 1 misses, 4 B brought in"),
    WidgetCase(
        "tile-stepper",
        "import numpy as np\nfrom gemmlab.viz.tiling import TileStepper\n"
        "TileStepper(np.arange(16.0).reshape(4, 4), np.eye(4))",
        lambda view: ui.move_slider(view, "K steps"),
        shows="after 1 of 2 steps: 8 input elements"),
    WidgetCase(
        "ring-stepper",
        "from gemmlab.viz.ring import RingStepper\nRingStepper(n_ranks=4, n_items=8)",
        lambda view: ui.move_slider(view, "steps done"),
        shows="next: step 1 of 6 (reduce-scatter)"),
    WidgetCase(
        "rankgrid-explorer",
        "import gemmlab as gl\nfrom gemmlab.viz.rankgrid import rankgrid_explorer\n"
        "rankgrid_explorer(gl.parallel.RankGrid(tp=2, cp=1, dp=2, pp=2))",
        lambda view: ui.move_slider(view, "rank"),
        shows="rank 1 = (1, 0, 0, 0)",
        redraws=True),
]
