"""benchmarks/lab_attacks_gpu.py: the GPU half runs on a GPU (the record is in benchmarks/); here
its simulator half, as the script runs it (a child on the simulator backend), on the naive lab's
reference and on issue 54's int64 attack, and its refusal to run without a GPU."""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "lab_attacks_gpu.py"
spec = importlib.util.spec_from_file_location("lab_attacks_gpu", SCRIPT)
harness = importlib.util.module_from_spec(spec)
spec.loader.exec_module(harness)


def simulated(label):
    """(the kernel's lab, what the simulator side records for it, its outputs by case)."""
    found = harness.kernels()
    index = [entry[0] for entry in found].index(label)
    return (harness.lab_of(found[index][1]), *harness.simulator_side(index, found))


def test_the_int64_attack_computes_on_the_simulator_what_int64_gives_not_what_python_gives():
    """The reference's output is right on every case. The attack's branch (K * 2**64 == 0) is
    taken in int64, so it sums the first K // 2 terms: its output is that half sum on every case,
    and every element differs from what Python's integers give (the branch not taken: the whole
    product, the reference). The verdict fails it, naming int64."""
    lab, reference, outputs = simulated("reference 05.lab_naive")
    assert reference["status"] == "pass", reference["feedback"]
    assert [c["wrong"] for c in reference["cases"]] == [0, 0, 0] and len(outputs) == 3

    lab, attack, outputs = simulated("attack: a branch taken in int64 only (K * 2**64 == 0)")
    assert attack["status"] == "fail"
    assert "in int64, the GPU's integer type" in attack["feedback"]
    for number, case in enumerate(lab.cases()):
        run, out = attack["cases"][number], outputs[number]
        half = case.K // 2
        in_int64 = case.A[:, :half].astype(np.float64) @ case.B[:half].astype(np.float64)
        assert not harness.beyond(out, in_int64, case.tolerance()).any(), case.label
        assert harness.beyond(out, case.reference(), case.tolerance()).all(), case.label
        assert run["wrong"] == case.M * case.N and run["fault"] is None
        assert "`K * 2**62` is" in run["wrapped"]


def test_without_a_gpu_the_script_refuses_and_writes_nothing(tmp_path):
    out = tmp_path / "record"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True,
                          text=True, timeout=300, cwd=ROOT,
                          env=dict(os.environ, GEMMLAB_BACKEND="sim", PYTHONPATH=str(ROOT)))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "runs every kernel on a GPU" in done.stderr and "GEMMLAB_BACKEND=gpu" in done.stderr
    assert not out.exists()
