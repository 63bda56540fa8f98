"""The ring stepper and figures: what they display must be what the trace says."""
import re

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import gemmlab as gl  # noqa: E402
from gemmlab.viz import allreduce as fig  # noqa: E402
from gemmlab.viz import ring  # noqa: E402

CELL = re.compile(r'data-rank="(\d+)" data-chunk="(\d+)">([0-9+]+)(?: &rarr; (\d+))?</td>')
LEDGER = re.compile(r"data-ledger='([a-z]+)-([a-z]+)-(\d+)'>(\d+)</td>")


def _displayed(stepper):
    """The grid the widget shows: {(rank, chunk): (set of ranks, destination or None)}."""
    cells = CELL.findall(stepper.view.value)
    assert len(cells) == stepper.ring.n_ranks ** 2
    return {(int(r), int(c)): ({int(x) for x in text.split("+")}, int(dst) if dst else None)
            for r, c, text, dst in cells}


@pytest.mark.parametrize("n", [3, 4, 5])
def test_each_step_changes_the_display_exactly_as_the_trace_says(n):
    stepper = ring.RingStepper(n_ranks=n, n_items=2 * n + 1)
    trace = stepper.ring
    before = _displayed(stepper)
    assert all(held == {r} for (r, _), (held, _) in before.items())
    for k in range(1, trace.n_steps + 1):
        stepper.slider.value = k
        after = _displayed(stepper)
        moved = trace.transfers(k - 1)
        targets = {(t.dst, t.chunk) for t in moved}
        for t in moved:
            assert before[(t.src, t.chunk)][1] == t.dst          # it was framed as being sent
            expected = before[(t.src, t.chunk)][0]
            if t.phase == "reduce-scatter":
                expected = expected | before[(t.dst, t.chunk)][0]
            assert after[(t.dst, t.chunk)][0] == expected
        for key in after:
            if key not in targets:
                assert after[key][0] == before[key][0]
        before = after
    assert all(held == set(range(n)) for held, _ in before.values())


def test_ledger_counts_the_bytes_of_the_steps_done():
    stepper = ring.RingStepper(n_ranks=4, n_items=10)
    for k in range(stepper.ring.n_steps + 1):
        stepper.slider.value = k
        shown = {(alg, way, int(r)): int(v) for alg, way, r, v in LEDGER.findall(stepper.ledger.value)}
        for name, result in (("ring", stepper.ring), ("central", stepper.central)):
            for r in range(4):
                done = [t for t in result.steps if t.step < k]
                assert shown[(name, "sent", r)] == sum(t.bytes for t in done if t.src == r)
                assert shown[(name, "recv", r)] == sum(t.bytes for t in done if t.dst == r)


def test_holdings_rejects_steps_out_of_range_and_other_traces():
    res = gl.collectives.ring_allreduce([np.zeros(4)] * 2)
    with pytest.raises(ValueError, match="after_steps"):
        ring.holdings(res, 3)
    tree = gl.collectives.tree_allreduce([np.zeros(4)] * 2)
    with pytest.raises(ValueError, match="ring"):
        ring.holdings(tree, 1)


def test_figures_draw_what_they_are_given():
    res = gl.collectives.ring_allreduce([np.arange(8.0)] * 4)
    figure = ring.draw_ring_step(res, 2)
    ring_ax, grid_ax = figure.axes[:2]
    arrows = [a for a in ring_ax.texts if a.get_text().startswith("c")]
    assert sorted(a.get_text() for a in arrows) == sorted(f"c{t.chunk}" for t in res.transfers(2))
    counts = grid_ax.images[0].get_array()
    assert counts.sum() == sum(len(cell) for row in ring.holdings(res, 2) for cell in row)
    ns = [2, 4, 8]
    series = {"root": [2 * (n - 1) for n in ns], "ring": [2 * (n - 1) / n for n in ns]}
    ax = fig.plot_traffic_vs_ranks(ns, series, 1)
    assert ax.get_xlabel() and ax.get_ylabel()
    assert [list(line.get_ydata()) for line in ax.lines[:2]] == list(series.values())
    ax = fig.plot_time_vs_ranks(ns, 2**20, 5e-6, 1e-10)
    assert [line.get_label() for line in ax.lines] == ["centralized", "tree", "ring"]
    matplotlib.pyplot.close("all")


def test_a_topic_module_is_reached_from_the_package_without_importing_it_first():
    """Exercise 07 writes gl.viz.ring.RingStepper(...) with no `import gemmlab.viz.ring` before:
    in a fresh process that is an AttributeError unless gemmlab.viz loads its topics itself."""
    import subprocess
    import sys
    code = ("import gemmlab as gl\nprint(gl.viz.ring.RingStepper.__name__)\n"
            "try:\n    gl.viz.nothing\nexcept AttributeError as e:\n    print('refused', e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "RingStepper"
    assert "refused" in out.stdout and "no attribute 'nothing'" in out.stdout
