"""A stepper through an LRU cache simulation: which line each access needs, hit or miss, what
is evicted, and how many bytes have come in from the level below so far."""
import html

from ..perfmodel import simulate

HIT, MISS = "#b2f2bb", "#ffc9c9"


class CacheStepper:
    """Sliders for the number of accesses replayed and the number of cache lines; a table of the
    accesses so far and the cache contents. ``.step``, ``.lines`` are the sliders; ``.state`` holds
    hits, misses and bytes moved after the replayed accesses."""

    def __init__(self, trace, line_size=4, n_lines=2, max_lines=8):
        import ipywidgets as widgets
        self.trace, self.line_size = list(trace), line_size
        simulate(self.trace, line_size, n_lines)           # validates the arguments
        self.step = widgets.IntSlider(value=0, min=0, max=len(self.trace), description="accesses")
        self.lines = widgets.IntSlider(value=n_lines, min=1, max=max(max_lines, n_lines),
                                       description="cache lines")
        self.text = widgets.HTML()
        self.widget = widgets.VBox([self.step, self.lines, self.text])
        for slider in (self.step, self.lines):
            slider.observe(lambda change: self.show(), names="value")
        self.show()

    def show(self):
        """Replay the first ``step`` accesses into a cache of ``lines`` lines and draw the result."""
        done = self.step.value
        result = simulate(self.trace[:done], self.line_size, self.lines.value)
        self.state = {"hits": result.hits, "misses": result.misses,
                      "bytes_moved": result.bytes_moved,
                      "resident": result.steps[-1].resident if result.steps else ()}
        rows = "".join(
            f'<tr style="background:{HIT if s.hit else MISS}"><td>{n + 1}</td><td>{s.address}</td>'
            f"<td>{s.line}</td><td>{'hit' if s.hit else 'miss'}</td>"
            f"<td>{'' if s.evicted is None else s.evicted}</td>"
            f"<td>{', '.join(map(str, s.resident))}</td></tr>"
            for n, s in enumerate(result.steps))
        head = "".join(f"<th>{h}</th>" for h in (
            "#", "address", "line", "result", "evicted", "lines held (oldest use first)"))
        self.text.value = (
            f'<table style="border-collapse:collapse">{head}{rows}</table>'
            f"<p>{self.lines.value} lines of {self.line_size} B: {result.hits} hits, "
            f"{result.misses} misses, <b>{result.bytes_moved} B</b> brought in "
            f"(trace: {html.escape(', '.join(map(str, self.trace)))})</p>")

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)
