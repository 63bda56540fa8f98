"""benchmarks/retime.py and its GPU side, retime_launches.py, without a GPU: each record read into
its figures (every timed figure of the record found, each with a launch the GPU side can build),
the 5% comparison, the ratios and the table, the default selection, the refusal of a record made
on another GPU model, the command's files and exit status with the GPU's part faked, and that
neither module reaches the course's own timer (gemmlab.measure)."""
import ast
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
RECORDS = ["library_h100.json", "library_h200.json", "gemm_host_h100.json", "attention_h100.json"]
sys.path.insert(0, str(BENCH))
import retime  # noqa: E402


@pytest.fixture
def launches(monkeypatch):
    """retime_launches, imported with the environment it sets restored after the test."""
    monkeypatch.setenv("CUPY_TF32", "1")
    monkeypatch.setenv("GEMMLAB_BACKEND", os.environ.get("GEMMLAB_BACKEND", "sim"))
    return importlib.import_module("retime_launches")


def load(name):
    return json.loads((BENCH / name).read_text(encoding="utf-8"))


def recorded_times(node):
    """Every time the record holds, in ms, found by walking it: each "ms" (a number, or a
    {name: ms} dict), the host costs (us), and the 2 GiB copy (GB/s of 2 x 2 GiB moved)."""
    if isinstance(node, list):
        for item in node:
            yield from recorded_times(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key == "ms":
                yield from (value.values() if isinstance(value, dict) else [value])
            elif key in ("host_us_per_call_256", "gl_gemm_host_us_per_call_256"):
                yield from (us / 1000 for us in value.values())
            elif key == "copy_gbs":
                yield 2 * 2 ** 31 / value / 1e6
            else:
                yield from recorded_times(value)


@pytest.mark.parametrize("name", RECORDS)
def test_every_timed_figure_of_a_record_is_read_with_a_launch_that_can_be_built(name, launches):
    record = load(name)
    figures = retime.read_figures(record)
    assert sorted(f.recorded_ms for f in figures) == pytest.approx(sorted(recorded_times(record)))
    assert len({f.name for f in figures}) == len(figures)
    for f in figures:
        assert f.launch["kind"] in launches.BUILDERS, f.name
        assert f.launch["inputs"] in launches.INPUTS, f.name
        assert all(v in {g.name for g in figures} for v in f.versus), f.name
    hopper = [f for f in figures if f.launch["kind"] == "hopper"]
    assert all(f.launch["plan"] and f.launch["fmt"] in ("fp16", "e4m3") for f in hopper)


def test_the_ratios_read_back_are_those_the_records_state():
    library = load("library_h100.json")
    rows = {r["figure"]: r for r in retime.compare(*unchanged(library))}
    for part, stated, versus in (
            ("fp16", "pct_of_best", lambda row, r: row["baseline"]),
            ("fp8", "pct_of_scaled_mm", lambda row, r: f"torch._scaled_mm {r['accumulation']}")):
        for row in library[part]:
            group = f"{part} {'x'.join(map(str, row['shape']))}"
            for r in (r for r in row["ours"] if "ms" in r):
                options = " ".join(f"{k}={v}" for k, v in r["options"].items())
                got = rows[f"{group} {r['kernel']} {options}"]
                assert got["ratio_recorded_pct"] == pytest.approx(r[stated])
                assert got["versus_recorded"] == versus(row, r)
    for row in library["fp32"]:
        got = rows[f"fp32 {'x'.join(map(str, row['shape']))} unrolled (configured launch)"]
        assert got["ratio_recorded_pct"] == pytest.approx(row["unrolled"]["pct_of_best"])
    host = load("gemm_host_h100.json")
    rows = {r["figure"]: r for r in retime.compare(*unchanged(host))}
    for row in host["fp32"]:
        n = row["n"]
        got = rows[f"fp32 {n}x{n}x{n} gl.gemm unrolled (CuPy arrays)"]
        assert got["ratio_recorded_pct"] == pytest.approx(row["pct_of_best"])
    attention = load("attention_h100.json")
    rows = retime.compare(*unchanged(attention))
    for row in attention["results"]:
        fmt, causal = row["fmt"], "causal" if row["causal"] else "full"
        group = f"attention B={row['B']} H={row['H']} N={row['N']} d={row['d']} {fmt} {causal}"
        ours = [r["ratio_recorded_pct"] for r in rows if r["figure"].startswith(f"{group} ours")]
        assert max(ours) == pytest.approx(100 * row["ratio"])


def unchanged(record):
    """compare()'s arguments for a re-timing that gave every figure its recorded time."""
    figures = retime.read_figures(record)
    return figures, {f.name: f.recorded_ms for f in figures}, {}


def test_the_default_is_the_goals_figures_and_the_libraries_their_ratios_need():
    figures = retime.read_figures(load("library_h100.json"))
    chosen = retime.select(figures)
    groups = {f.group for f in chosen}
    assert groups == {"fp16 4096x4096x4096", "fp16 8192x8192x8192", "fp16 4096x11008x4096",
                      "fp32 2048x2048x2048", "fp32 4096x4096x4096", "fp32 8192x8192x8192",
                      "fp8 4096x4096x4096", "fp8 8192x8192x8192", "fp8 4096x11008x4096",
                      "fp8 64x8192x8192"}
    names = {f.name for f in chosen}
    assert "fp16 4096x4096x4096 hopper:auto out=fp16" in names
    assert "fp32 4096x4096x4096 gl.gemm unrolled (numba arrays)" in names
    assert not any("ladder" in n or "wmma" in n or "torch.matmul bf16" in n for n in names)
    assert retime.estimated_seconds(chosen, retime.ROUNDS) < 240     # the brief's 4 minutes
    auto = retime.select(figures, only=["hopper:auto out=fp16"])
    assert {f.name for f in auto if "hopper" in f.name} == {
        f.name for f in figures if "hopper:auto out=fp16" in f.name}
    assert {f.name for f in auto if "hopper" not in f.name} == {
        v for f in auto for v in f.versus}          # the libraries, for the ratio
    assert len(retime.select(figures, everything=True)) == len(figures)
    with pytest.raises(ValueError, match="no figure of the record matches \\['nothing'\\]"):
        retime.select(figures, only=["nothing"])


def figure(name, ms, unit="TFLOP/s", versus=()):
    return retime.Figure(name, "g", {"kind": "library", "inputs": "fp16"}, ms, unit,
                         work=1e12, versus=versus)


def test_five_percent_is_judged_on_the_shown_value_and_a_launch_not_rebuilt_is_outside():
    lib, near, far = figure("g lib", 1.0), figure("g near", 2.0, versus=("g lib",)), \
        figure("g far", 2.0, versus=("g lib",))
    host, gone = figure("g host", 0.030, unit="us"), figure("g gone", 1.0)
    retimed = {"g lib": 1.0, "g near": 2.0 / 0.951, "g far": 2.0 / 1.052, "g host": 0.0318}
    rows = {r["figure"]: r for r in retime.compare(
        [lib, near, far, host, gone], retimed, {"g gone": "NotAsRecorded: now plans x"})}
    assert rows["g near"]["difference_pct"] == pytest.approx(-4.9)
    assert rows["g near"]["within"] and not rows["g far"]["within"]
    assert rows["g far"]["difference_pct"] == pytest.approx(5.2)
    assert rows["g host"]["recorded"] == pytest.approx(30.0)          # us
    assert rows["g host"]["difference_pct"] == pytest.approx(6.0) and not rows["g host"]["within"]
    assert rows["g gone"]["retimed"] is None and not rows["g gone"]["within"]
    assert rows["g near"]["ratio_recorded_pct"] == pytest.approx(50.0)
    assert rows["g near"]["ratio_retimed_pct"] == pytest.approx(47.55)
    assert rows["g near"]["versus_retimed"] == "lib"
    lines = retime.table(list(rows.values())).splitlines()
    near_line = next(line for line in lines if line.startswith("| g near |"))
    assert [c.strip() for c in near_line.split("|")[5:9]] == [
        "-4.9", "yes", "50.0 (lib)", f"{100 * 0.951 / 2:.1f} (lib)"]
    assert "| **no** |" in next(line for line in lines if line.startswith("| g far |"))
    assert "not rebuilt: NotAsRecorded: now plans x" in next(
        line for line in lines if line.startswith("| g gone |"))


def test_a_record_from_another_gpu_model_is_refused(tmp_path, monkeypatch, launches, capsys):
    record = load("library_h100.json")
    retime.check_same_gpu(record, "NVIDIA H100 80GB HBM3")
    with pytest.raises(retime.WrongGPU, match="made on 'NVIDIA H100 80GB HBM3', this GPU is "
                                              "'NVIDIA H200'"):
        retime.check_same_gpu(record, "NVIDIA H200")
    with pytest.raises(retime.WrongGPU, match="names no GPU"):
        retime.check_same_gpu({"fp16": []}, "NVIDIA H200")
    monkeypatch.setattr(launches, "current_gpu", lambda: "NVIDIA H200")
    monkeypatch.setattr(launches, "retime", lambda *a: pytest.fail("timed on the wrong GPU"))
    out = tmp_path / "out"
    assert retime.main([str(BENCH / "library_h100.json"), "--out", str(out)]) == 2
    assert "this GPU is 'NVIDIA H200'" in capsys.readouterr().err
    assert not out.exists()


def test_the_command_writes_json_and_table_and_fails_naming_the_figures_outside(
        tmp_path, monkeypatch, launches):
    calls = []

    def fake_retime(figures, rounds, rep_ms):
        calls.append((figures, rounds, rep_ms))
        slow = {"fp32 2048x2048x2048 gl.gemm unrolled (CuPy arrays)": 1.08}
        return ({f.name: f.recorded_ms * slow.get(f.name, 1.0) for f in figures}, {},
                {f.group: {"samples": 0} for f in figures})
    monkeypatch.setattr(launches, "current_gpu", lambda: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(launches, "retime", fake_retime)
    monkeypatch.setattr(launches, "machine", lambda: {"gpu": "NVIDIA H100 80GB HBM3",
                                                      "driver": "580", "versions": {"triton": "3"}})
    record = str(BENCH / "gemm_host_h100.json")
    assert retime.main([record, "--out", str(tmp_path), "--only", "fp32 2048", "--rounds", "2"]) == 1
    figures, rounds, rep_ms = calls[0]
    assert rounds == 2 and {f.group for f in figures} == {"fp32 2048x2048x2048"}
    assert len(figures) == 4 and set(rep_ms) == {f.name for f in figures}   # ours and 3 libraries
    written = json.loads((tmp_path / "retime_gemm_host_h100.json").read_text())
    assert written["outside_tolerance"] == ["fp32 2048x2048x2048 gl.gemm unrolled (CuPy arrays)"]
    assert written["machine"]["gpu"] == "NVIDIA H100 80GB HBM3"
    assert written["record_machine"]["driver"] == "580.159.04"
    row = next(r for r in load("gemm_host_h100.json")["fp32"] if r["n"] == 2048)
    ours = row["tflops"]["gl.gemm unrolled"]
    md = (tmp_path / "retime_gemm_host_h100.md").read_text()
    assert (f"| fp32 2048x2048x2048 gl.gemm unrolled (CuPy arrays) | TFLOP/s | {ours:.1f} | "
            f"{ours / 1.08:.1f} | {100 / 1.08 - 100:.1f} | **no** | {row['pct_of_best']:.1f} "
            f"({row['baseline']}) | {row['pct_of_best'] / 1.08:.1f} ({row['baseline']}) |") in md
    assert "1 outside 5%: fp32 2048x2048x2048 gl.gemm unrolled (CuPy arrays)." in md
    assert retime.main([record, "--out", str(tmp_path), "--only", "fp32 4096"]) == 0


def test_a_hopper_plan_the_same_options_no_longer_give_is_reported_not_timed(launches,
                                                                              monkeypatch):
    from gemmlab.tensorcore import hopper

    class Plan:
        def describe(self):
            return "persistent (64x64 tiles, fp16 out)"

    class Problem:
        plan = Plan()

        def launch(self):
            pytest.fail("a launch that is not the recorded one ran")
    monkeypatch.setattr(hopper, "prepare", lambda *a, **k: Problem())
    spec = {"kind": "hopper", "stage": "auto", "options": {"out": "fp16"}, "fmt": "fp16",
            "plan": "persistent (128x64 tiles, fp16 out)", "inputs": "fp16", "shape": [1, 1, 1]}
    failures = {}
    built = launches.build_launches([retime.Figure("f", "g", spec, 1.0, "TFLOP/s")],
                                    {"A": 0, "B": 0}, failures)
    assert built == {}
    assert failures["f"] == ("NotAsRecorded: stage auto with {'out': 'fp16'} now plans "
                             "'persistent (64x64 tiles, fp16 out)'; the record timed "
                             "'persistent (128x64 tiles, fp16 out)'")


def test_neither_module_reaches_the_course_timer():
    for path in (BENCH / "retime.py", BENCH / "retime_launches.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        imported += [f"{n.module}.{a.name}" for n in ast.walk(tree)
                     if isinstance(n, ast.ImportFrom) for a in n.names]
        assert not [m for m in imported if "measure" in m], path.name
        assert not [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                    and n.attr in ("measure", "flushed_ms")], path.name
    tree = ast.parse((BENCH / "retime_launches.py").read_text(encoding="utf-8"))
    benches = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
               and getattr(n.func, "id", None) == "do_bench"]
    assert len(benches) == 1
    assert {k.arg: k.value.value for k in benches[0].keywords
            if isinstance(k.value, ast.Constant)} == {"return_mode": "median"}
    assert any(isinstance(n, ast.ImportFrom) and n.module == "triton.testing"
               and [a.name for a in n.names] == ["do_bench"] for n in ast.walk(tree))


def test_list_needs_no_gpu_and_a_record_of_no_known_kind_is_refused(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH / "retime.py"), str(BENCH / "library_h100.json"),
                           "--list"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "fp16 8192x8192x8192 hopper:auto out=fp16" in done.stdout
    default = retime.select(retime.read_figures(load("library_h100.json")))
    assert re.search(rf"^{len(default)} figures; about \d+ s of timing in 3 rounds, plus "
                     r"building the launches; \d+ with a plan", done.stdout, re.M)
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"machine": {"gpu": "x"}, "results": []}))
    done = subprocess.run([sys.executable, str(BENCH / "retime.py"), str(odd), "--list"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "not a record retime.py knows" in done.stderr and "['machine', 'results']" in done.stderr


def test_each_group_gets_its_inputs_once_and_a_group_whose_inputs_fail_is_reported_whole(
        launches, monkeypatch):
    made, timed = [], []

    def inputs(spec):
        made.append(spec["shape"])
        if spec["shape"] == [2, 2, 2]:
            raise MemoryError("out of device memory")
        return {"shape": spec["shape"]}

    def bench(found, rounds, rep_ms):
        timed.append(("gpu", sorted(found), rounds, rep_ms))
        return {name: 1.5 for name in found}

    def host(call, rounds):
        timed.append(("host", call(), rounds))
        return 0.04
    monkeypatch.setitem(launches.INPUTS, "fake", inputs)
    monkeypatch.setitem(launches.BUILDERS, "fake", lambda spec, x: lambda: x["shape"])
    monkeypatch.setattr(launches, "bench_ms", bench)
    monkeypatch.setattr(launches, "host_ms", host)
    monkeypatch.setattr(launches, "free_memory", lambda: None)

    def fig(name, group, shape, unit="TFLOP/s", kind="fake"):
        return retime.Figure(name, group, {"kind": kind, "inputs": "fake", "shape": shape}, 1.0,
                             unit)
    figures = [fig("a1", "a", [1, 1, 1]), fig("b1", "b", [2, 2, 2]), fig("a2", "a", [1, 1, 1]),
               fig("a3", "a", [1, 1, 1], kind="gone"), fig("b2", "b", [2, 2, 2]),
               fig("h", "host", [3, 3, 3], unit="us")]
    retimed, failures, clocks = launches.retime(figures, 2, {"a1": 100, "a2": 200})
    assert made == [[1, 1, 1], [2, 2, 2], [3, 3, 3]]               # once per group, in order
    assert timed == [("gpu", ["a1", "a2"], 2, {"a1": 100, "a2": 200}), ("host", [3, 3, 3], 2)]
    assert retimed == {"a1": 1.5, "a2": 1.5, "h": 0.04}
    assert failures == {"a3": "no launch known for kind 'gone'",
                        "b1": "inputs: MemoryError: out of device memory",
                        "b2": "inputs: MemoryError: out of device memory"}
    assert set(clocks) == {"a", "host"}


def test_list_names_a_recorded_plan_the_same_options_no_longer_give(tmp_path):
    from gemmlab.tensorcore import hopper
    record = load("library_h100.json")
    row = next(r for r in record["fp16"] if r["shape"] == [4096, 4096, 4096])
    auto = next(r for r in row["ours"] if r["kernel"] == "hopper:auto")
    now = hopper.plan("auto", 4096, 4096, 4096, sms=record["machine"]["sm_count"],
                      **auto["options"]).describe()
    auto["plan"] = "persistent (1x1 tiles, a plan no rule gives)"
    figures = retime.read_figures(record)
    assert retime.stale_plans(figures, record["machine"]["sm_count"]) == {
        "fp16 4096x4096x4096 hopper:auto out=fp16": now}
    path = tmp_path / "library_h100.json"
    path.write_text(json.dumps(record))
    done = subprocess.run([sys.executable, str(BENCH / "retime.py"), str(path), "--list",
                           "--only", "4096x4096x4096 hopper:auto"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "fp16 4096x4096x4096 hopper:auto out=fp16" in done.stdout
    assert f"(the record's plan; now: {now})" in done.stdout
    assert "; 1 with a plan the same stage and options no longer give" in done.stdout
