"""benchmarks/compare_runs.py: two bench runs side by side, matched on kernel, tiles and shape."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ratios_of_matching_rows_and_rows_found_once(tmp_path):
    def row(kernel, tflops, M=64):
        return {"kernel": kernel, "tiles": {"T": 8}, "M": M, "N": 64, "K": 64, "tflops": tflops}
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps({"machine": {}, "results": [row("tiled", 2.0), row("naive", 1.0)]}))
    after.write_text(json.dumps({"machine": {}, "results": [row("tiled", 3.0), row("naive", 1.0, 32)]}))
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "compare_runs.py"), str(before),
                           str(after)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    tiled = next(line for line in done.stdout.splitlines() if line.startswith("tiled"))
    assert tiled.split()[2:5] == ["2", "3", "1.50"]
    assert "only before: [('naive'" in done.stdout and "only after: [('naive'" in done.stdout
