"""benchmarks/final_ncu.py rebuilds its summaries from the raw Nsight Compute pages it saved: each
committed ``hopper_final_ncu*.json`` comes back from its CSV (``--summary``), with the plans as
they were profiled (not as today's rule would pick them) and each share of the library read from
the record of the same GPU."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize("stem", ["hopper_final_ncu", "hopper_final_ncu_h100",
                                  "hopper_final_ncu_clusters_h100"])
def test_a_recorded_profile_summary_is_rebuilt_from_its_csv(stem, tmp_path):
    shutil.copy(BENCH / f"{stem}.csv", tmp_path / "hopper_final_ncu.csv")
    shutil.copy(BENCH / f"{stem}.json", tmp_path / "hopper_final_ncu.json")
    done = subprocess.run([sys.executable, str(BENCH / "final_ncu.py"), "--summary", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rebuilt = json.loads((tmp_path / "hopper_final_ncu.json").read_text())["profiles"]
    recorded = json.loads((BENCH / f"{stem}.json").read_text())["profiles"]
    assert [p["spec"] for p in rebuilt] == [p["spec"] for p in recorded]
    for new, old in zip(rebuilt, recorded, strict=True):
        assert new["plan"] == old["plan"] and new["kernel"] == old["kernel"]
        assert new["duration_us"] == old["duration_us"] and new["stalls"] == old["stalls"]
        assert new["pct_of_library"] == pytest.approx(old["pct_of_library"])
        assert new["library"] == old["library"]
