"""benchmarks/plot_multi.py: the busbw figure of RESULTS.md, made from the recorded sweep."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_figure_is_made_from_the_json(tmp_path):
    target = tmp_path / "busbw.png"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "plot_multi.py"),
                           str(ROOT / "benchmarks" / "nccl_h200x2_allreduce.json"), str(target)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 10_000
    assert (ROOT / "benchmarks" / "nccl_h200x2_busbw.png").exists()     # the committed one
