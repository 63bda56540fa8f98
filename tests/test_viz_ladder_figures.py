"""Figures and the pipeline widget of the GEMM-ladder lessons."""
import matplotlib
import numpy as np
import pytest

from gemmlab import perfmodel as pm

matplotlib.use("Agg")

from gemmlab import device, perfmodel  # noqa: E402
from gemmlab.viz import ladder_figures as ladder  # noqa: E402


def _texts(fig):
    return " ".join(t.get_text() for ax in fig.axes for t in ax.texts + [ax.title])


def test_tile_grid_colours_one_row_one_column_one_tile():
    fig = ladder.draw_tile_grid(128, 32, I=1, J=2)
    coloured = [sum(p.get_facecolor() != (1, 1, 1, 0.8) for p in ax.patches) for ax in fig.axes]
    assert coloured == [4, 4, 1]
    with pytest.raises(ValueError, match="T dividing n"):
        ladder.draw_tile_grid(100, 32)


def test_pipeline_chart_states_both_totals():
    fig = ladder.draw_pipeline(4, 8, 12)
    text = _texts(fig)
    assert f"= {perfmodel.pipeline_time(4, 8, 12, 1):g} us" in text
    assert f"= {perfmodel.pipeline_time(4, 8, 12, 2):g} us" in text
    assert len(fig.axes[0].patches) == 4 * 2 * 2       # 4 loads + 4 computes, for 1 and 2 buffers


def test_pipeline_widget_redraws_on_slider_change():
    box = ladder.pipeline_widget(n=3, t_load=5, t_compute=7)
    sliders = box.children[0].children
    assert [s.value for s in sliders] == [3, 5, 7]
    sliders[0].value = 6                                # must redraw without raising
    assert box.children[1].outputs is not None


def test_ladder_bars_and_speedups_from_bench_results():
    rows = [dict(kernel=k, M=64, N=64, K=64, tflops=t, pct_of_cublas=p)
            for k, t, p in [("cublas", 50.0, 100.0), ("naive", 1.0, 2.0), ("tiled", 8.0, 16.0)]]
    fig = ladder.draw_ladder(rows, (64, 64, 64))
    assert [b.get_height() for b in fig.axes[0].patches] == [1.0, 8.0]
    assert ladder.speedups(rows, (64, 64, 64))["tiled"] == 8.0
    with pytest.raises(ValueError, match="no results"):
        ladder.draw_ladder(rows, (1, 2, 3))


def test_outer_product_counts_follow_the_slot_model():
    c = ladder.outer_product_counts(32, 4, 4)
    assert (c["reads"], c["fmas"], c["slots"]) == (256, 512, 24)
    assert c["ratio"] == pytest.approx(16 / 8)


def _row(kernel, bk, tflops, regs):
    return {"kernel": kernel, "tiles": {"BM": 128, "BN": 128, "BK": bk, "TM": 8, "TN": 8},
            "tflops": tflops, "regs": regs, "smem_bytes": 2 * bk * (132 + 128) * 4,
            "M": 4096, "N": 4096, "K": 4096}


def test_tile_pairs_keep_only_tiles_both_kernels_ran_and_derive_blocks_per_sm():
    results = [_row("outer", 8, 31.9, 120), _row("twolevel", 8, 31.9, 148),
               _row("outer", 16, 29.6, 164), _row("twolevel", 16, 36.6, 187),
               _row("twolevel", 4, 30.0, 140), {**_row("pingpong", 8, 7.9, 32), "tiles": {"T": 32}}]
    rows = ladder.tile_pairs(results, sm=pm.HOPPER)             # recorded on an H200
    assert [r["tiles"]["BK"] for r in rows] == [8, 16]          # BK=4 has no outer partner
    assert rows[0]["outer"]["blocks_per_sm"] == 2            # 120 registers: two blocks
    assert rows[0]["twolevel"]["blocks_per_sm"] == 1            # 148: one
    few_registers = [_row("outer", 16, 30.0, 32), _row("twolevel", 16, 30.0, 32)]
    on_a_t4 = ladder.tile_pairs(few_registers, sm=pm.sm_resources((7, 5)))
    on_an_h200 = ladder.tile_pairs(few_registers, sm=pm.HOPPER)
    assert on_a_t4[0]["outer"]["blocks_per_sm"] == 1         # 33,280 B of 64 KiB per SM
    assert on_an_h200[0]["outer"]["blocks_per_sm"] == 6      # of 228 KiB, 1 KiB reserved each
    fig = ladder.draw_tile_pairs(rows)
    text = _texts(fig)
    assert "36.6" in text and "187 reg" in text and "2 blk/SM" in text
    assert len(fig.axes[0].patches) == 4


def test_a_live_row_brings_the_drivers_count_and_recorded_rows_the_models():
    live = [dict(_row("outer", 8, 31.9, 120), blocks_per_sm=3)]
    rows = ladder.occupancy_rows(live, ("outer",), pm.HOPPER)
    assert rows[0]["blocks"] == 3 and rows[0]["model"] == 2
    assert rows[0]["source"] == "the driver's occupancy calculator"
    recorded = ladder.occupancy_rows([_row("outer", 16, 31.9, 32)], ("outer",),
                                     pm.sm_resources("8.6"))
    assert recorded[0]["blocks"] == recorded[0]["model"] == 2      # 100 KiB / (32.5 + 1) KiB
    assert recorded[0]["limit"] == "shared memory"
    assert recorded[0]["source"].startswith("model, Ampere (sm_86")


def test_tile_pairs_on_the_simulator_have_no_registers():
    rows = ladder.tile_pairs([_row("outer", 8, 1e-4, None), _row("twolevel", 8, 2e-4, None)])
    assert rows[0]["twolevel"]["blocks_per_sm"] is None
    assert "reg" not in _texts(ladder.draw_tile_pairs(rows))
    with pytest.raises(ValueError, match="every kernel"):
        ladder.draw_tile_pairs([])


def test_lesson_setup_gives_the_backend_sizes_and_a_seeded_generator(capsys):
    sizes, on_gpu, n, rng = ladder.lesson_setup(seed=3)
    assert sizes == device.sizes() and n == sizes["gemm_n"]
    assert on_gpu == (device.backend() == "gpu")
    assert rng.integers(1 << 30) == np.random.default_rng(3).integers(1 << 30)
    assert f"n = {n}" in capsys.readouterr().out


def test_show_recorded_prints_the_recorded_ladder_and_returns_it(capsys):
    run = ladder.show_recorded((4096, 4096, 4096))       # benchmarks/gpu_ladder.json is committed
    out = capsys.readouterr().out
    assert out.startswith(f"Recorded on {run.machine['gpu']} ({run.machine['date'][:10]})")
    assert "4096 x 4096 x 4096" in out and "'twolevel'" in out
    assert {r["kernel"] for r in run.rows} == set(run.tflops) >= {"cublas", "naive", "twolevel"}
    assert all((r["M"], r["N"], r["K"]) == (4096, 4096, 4096) for r in run.rows)
    other = ladder.recorded_run("gpu_fp32.json", (8192, 8192, 8192))    # 4096 and 8192 recorded
    assert 0 < len(other.rows) < len(other.results)     # other shapes stay in .results
    assert run.note == f"recorded on {run.machine['gpu']}, {run.machine['date'][:10]}"


def test_show_recorded_says_how_to_record_when_nothing_is(tmp_path, capsys):
    assert ladder.show_recorded(name=str(tmp_path / "none.json")) is None
    assert "run benchmarks/gpu_ladder.sh on a GPU" in capsys.readouterr().out
    broken = tmp_path / "tiles.json"
    broken.write_text('{"results": []}')
    with pytest.raises(ValueError, match="no 'machine' section"):
        ladder.recorded_run(str(broken))


def test_profiled_steps_join_the_profile_to_the_timed_rows_of_the_same_spec():
    from gemmlab import measure
    record = measure.recorded("gpu_fp32.json", required=("machine", "results", "profile"))
    steps = ladder.profiled_steps(record)
    assert [s["spec"] for s in steps] == [p["spec"] for p in record["profile"]]
    assert steps[0]["spec"] == "twolevel" and set(steps[0]["pct_of_cublas"]) == {4096, 8192}
    # each spec finds its own row: the default unrolled and its VW=1 variant differ
    by_spec = {s["spec"]: s["pct_of_cublas"][4096] for s in steps}
    assert by_spec["unrolled"] != by_spec["unrolled:BK=8,VW=1,MINB=2"]
    row = next(r for r in record["results"] if r["kernel"] == "unrolled" and r["M"] == 4096
               and r["tiles"]["VW"] == 1 and r["tiles"]["BK"] == 8)
    assert by_spec["unrolled:BK=8,VW=1,MINB=2"] == row["pct_of_cublas"]
