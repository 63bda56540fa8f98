"""benchmarks/gpu_occupancy.py: the sweep that sets the model of blocks per SM beside the driver's
occupancy calculator (the GPU part runs on a GPU; the bookkeeping is checked here)."""
import importlib.util
from pathlib import Path

import gemmlab as gl

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("gpu_occupancy", ROOT / "benchmarks" / "gpu_occupancy.py")
occupancy = importlib.util.module_from_spec(spec)
spec.loader.exec_module(occupancy)


def model(threads, smem):
    return gl.perfmodel.blocks_per_sm(16, threads, smem)[0]


def test_sweep_finds_agreement_and_skips_blocks_that_cannot_launch():
    rows = occupancy.sweep(model, model, max_shared=gl.perfmodel.HOPPER.max_shared_per_block)
    assert rows and all(r["agree"] for r in rows)
    assert max(r["shared_bytes"] for r in rows) == 227 * 1024
    largest = [r for r in rows if r["shared_bytes"] == 227 * 1024]
    assert all(r["model"] == 1 for r in largest)          # 227 KiB + 1 KiB reserved = 228 KiB


def test_sweep_reports_a_disagreement():
    def old_model(threads, smem):            # the SM as 227 KiB in all: the largest block never fits
        return min(227 * 1024 // (smem + 1024), 2048 // threads)
    rows = occupancy.sweep(old_model, model, threads=(256,), shared_kib=(227, 113))
    by_size = {r["shared_bytes"] // 1024: r for r in rows}
    assert not by_size[227]["agree"] and by_size[227]["driver"] == 0 and by_size[227]["model"] == 1
    assert not by_size[113]["agree"]        # 2 x 114 KiB fit in 228 KiB, not in 227
