"""A lab kernel is a CUDA kernel (issue 23): what of a cell runs (kernel_source), its compilation
for sm_75 and sm_90 with the compiler's complaint in plain words (compile), the attacks on the
kernel labs beside the honest kernel passing, the ping-pong overlap, and the feedback fixes of
the kernel labs. The grader's path (judge_code, a confined worker) and check()'s (a plain worker)
are both exercised on the same cells."""
import pytest

import gemmlab as gl
from gemmlab.grading.bank import get_question
from gemmlab.grading.checker import judge_alone_in_a_worker
from gemmlab.judging import load_function
from gemmlab.labs import compile as nvc
from gemmlab.labs.kernel_source import kernel_cell
from gemmlab.labs.solutions import cell, solution
from gemmlab_grader.isolate import judge_code

pytestmark = pytest.mark.skipif(gl.device.backend() != "sim",
                                reason="the instrumented simulator runs on the simulator backend")
TILED, _, _ = cell("05.lab_tiled")


def edited(qid, *edits, name=None):
    source, default, _ = cell(qid)
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source, name or default


def live(source, name, label):
    """The kernel as a notebook holds it: defined by a cell whose file is not on disk."""
    return load_function(source, name, f"/nonexistent/{label}.py")


# -- what runs ----------------------------------------------------------------------------------

def test_only_the_kernel_its_device_functions_constants_and_imports_are_kept():
    source = ("import os\nTILE = 16\nHALF = TILE // 2\nimport math\nprint('hello')\n"
              "@cuda.jit(device=True)\ndef f(x):\n    return x\n@cuda.jit\ndef k(A, B, C):\n"
              "    pass\nk[1, 1](1, 2, 3)\nX = os.getpid()\n")
    kept, problem = kernel_cell(source, "k")
    assert problem == ""
    lines = kept.splitlines()
    assert lines[0] == "" and lines[1] == "TILE = 16" and lines[2] == "HALF = TILE // 2"
    assert lines[3] == "import math" and lines[4] == ""            # print: not run
    assert lines[9] == "def k(A, B, C):" and lines[11] == "" and lines[12] == ""


@pytest.mark.parametrize("source, words", [
    ("def k(A, B, C):\n    pass\n", "expected a @cuda.jit kernel, got a plain Python function"),
    ("@cuda.jit\ndef k(A, B, C=print('x')):\n    pass\n", "not as a plain @cuda.jit function"),
    ("@other\n@cuda.jit\ndef k(A, B, C):\n    pass\n", "no other decorator"),
    ("x = 1\n", "your cell defines no function k"),
    ("def k(:\n", "your cell does not parse"),
])
def test_a_cell_without_a_plain_kernel_says_why(source, words):
    kept, problem = kernel_cell(source, "k")
    assert kept == "" and words in problem


# -- the compiler -------------------------------------------------------------------------------

ARGS = [["array", "float32", 2]] * 3


def compiled(source, name="lab_tiled"):
    return nvc.compile_kernel(load_function(source, name, f"<compile test {hash(source)}>"), ARGS)


def test_the_reference_kernels_compile_for_sm75_and_sm90_with_ptxas_figures():
    reply = compiled(TILED)
    assert reply["ok"], reply
    assert set(reply["archs"]) == {"sm_75", "sm_90"}
    for figures in reply["archs"].values():
        assert figures["registers"] > 0 and figures["shared_bytes"] == 2 * 16 * 16 * 4
    words = nvc.resources(reply)
    assert "sm_75" in words and "registers per thread" in words and "2048 bytes" in words


REFUSED = [
    ("the simulator's raw buffer", ("a = A[row, k0 + tx]", "a = A._flat_data[0]"),
     ["does not compile for a GPU (sm_75)", "line ", "`a = A._flat_data[0]`",
      "no attribute `_flat_data`"]),
    ("an import in the kernel", ("a = A[row, k0 + tx]", "import os\n            a = A[row, k0 + tx]"),
     ["does not compile for a GPU", "import"]),
    ("exec in the kernel", ("a = A[row, k0 + tx]", "a = A[row, k0 + tx]\n            exec('1')"),
     ["`exec` is Python, not CUDA"]),
    ("a name from another cell", ("TILE = 16\n", ""),
     ["`TILE` is not defined in the part of your cell the lab runs", "the grader runs this "
      "cell alone"]),
    ("try/except", ("a = A[row, k0 + tx]", "try:\n                a = A[row, k0 + tx]\n"
                                           "            except Exception:\n                pass"),
     ["try/except does not exist in a CUDA kernel"]),
    ("gemmlab in a kernel", ("a = A[row, k0 + tx]", "a = A[row, k0 + tx] + gl.device.sizes()"),
     ["`gl` (gemmlab) does not exist on the GPU"]),
    ("the simulator's counters", ("a = A[row, k0 + tx]", "a = A[row, k0 + tx]\n"
                                  "            A.launch.trace.arrays.clear()"),
     ["does not compile for a GPU", "no attribute `launch`"]),
    ("a Python list", ("acc = float32(0)", "acc = float32(0)\n    junk = [1, 2]\n    junk.append(3)"),
     ["does not compile for a GPU"]),
]


@pytest.mark.parametrize("edit, words", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_what_the_compiler_refuses_is_said_in_plain_words_with_the_line(edit, words):
    source = TILED.replace(*edit)
    reply = compiled(source)
    assert not reply["ok"]
    text = nvc.refusal(reply, reply.get("kept", ""))
    for word in words:
        assert word in text, text


class Recorder:
    """A compile service that records what it is sent and answers ``reply``."""

    def __init__(self, reply):
        self.reply, self.requests = reply, []

    def compile(self, request):
        self.requests.append(request)
        return dict(self.reply)


def test_a_kernel_that_wipes_the_simulators_atomic_count_as_it_runs_fails_on_its_compile():
    """The simulated kernel runs its Python in the grader's worker, where the arrays it is
    handed lead to the launch's counters: a kernel that clears the count of its atomics on one
    address as it runs (issue 54's 03.puzzle_dot attack, its proxy forged) is still a FAIL,
    because the verdict also needs the trusted compile, and CUDA has no such attribute."""
    from solution_variants import edited
    from test_labs_puzzles import ATOMICS_ON_ONE_SLOT
    store = "    if t == 0:\n        out[0] = s[0]\n"
    source, name, _ = edited("03.puzzle_dot", *ATOMICS_ON_ONE_SLOT,
                             (store, store + "        out.launch.trace.atomics.clear()\n"))
    graded = judge_code("03.puzzle_dot", source, name, seed=3)
    assert graded.status == "fail", graded.feedback
    assert "does not compile for a GPU" in graded.feedback and "no attribute `launch`" in \
        graded.feedback


def test_a_graded_kernel_is_compiled_on_the_judging_side_by_the_installed_service_only():
    """The worker holding the kernel compiles nothing: the judging side sends the kernel's part
    of the cell (the print and the test launch blanked) to the installed service, and when the
    service fails the verdict says so: no other compiler is tried."""
    source = TILED + "print('hello')\nlab_tiled[1, 1](1, 2, 3)\n"
    broken = Recorder({"ok": False, "stage": "setup", "message": "the compile service is closed"})
    graded = judge_code("05.lab_tiled", source, "lab_tiled", seed=5, timeout=240, compiler=broken)
    assert graded.status == "fail" and "could not be compiled for a GPU" in graded.feedback
    assert "the compile service is closed" in graded.feedback
    [sent] = broken.requests
    assert sent["source"] == kernel_cell(source, "lab_tiled")[0] and "print" not in sent["source"]
    assert (sent["name"], sent["archs"]) == ("lab_tiled", [[7, 5], [9, 0]])
    honest = Recorder(compiled(TILED))
    graded = judge_code("10.lab_outer", *cell("10.lab_outer")[:2], seed=5, timeout=240,
                        compiler=honest)
    assert graded.status == "pass" and len(honest.requests) == 1
    assert nvc.resources(honest.reply) in graded.feedback     # the service's figures, reported


# -- the attacks, beside the honest kernel ----------------------------------------------------------

def both_paths(qid, source, name, label):
    """(check()'s result, the grader's result) for the same cell."""
    checked = judge_alone_in_a_worker(get_question(qid), live(source, name, label))
    graded = judge_code(qid, source, name, seed=5, timeout=240)
    return checked, graded


def test_the_honest_tiled_kernel_passes_both_paths_and_reports_ptxas_only_where_asked():
    checked, graded = both_paths("05.lab_tiled", TILED, "lab_tiled", "honest")
    assert checked.status == graded.status == "pass", (checked.feedback, graded.feedback)
    assert "ptxas" not in checked.feedback
    checked, graded = both_paths("10.lab_outer", *cell("10.lab_outer")[:2], "outer")
    assert checked.status == graded.status == "pass", (checked.feedback, graded.feedback)
    assert "What ptxas reports for your kernel: sm_75 " in checked.feedback
    assert "sm_90 " in graded.feedback and "registers per thread" in graded.feedback


VERDICT_PATCH = ("import gemmlab.labs.feedback as _f\n_f.first_problem = lambda *a: None\n"
                 "_f.untouched = lambda trace: False\n")
HIDDEN_PATCH = ("import base64\nexec(base64.b64decode(" +
                repr(__import__("base64").b64encode(VERDICT_PATCH.encode())) + "))\n")
SYS_PATCH = ("import sys\nsys.modules['gemmlab.labs.feedback'].first_problem = "
             "lambda *a: None\n")
WRONG = ("        for k in range(TILE):\n            acc += sA[ty, k] * sB[k, tx]\n",
         "        for k in range(TILE):\n            acc += sA[ty, k] * sB[k, ty]\n")


@pytest.mark.parametrize("patch, words", [
    (VERDICT_PATCH, "imports gemmlab.labs.feedback"), (HIDDEN_PATCH, "imports base64"),
    (SYS_PATCH, "imports sys")])
def test_a_cell_that_replaces_the_labs_verdict_fails_its_grade(patch, words):
    """Graded: the patch is refused on the source before anything runs: the lab grants no import
    but math, numpy and numba (gemmlab.judging.allow), so the verdict's code is out of reach."""
    source, name = edited("05.lab_tiled", WRONG)
    graded = judge_code("05.lab_tiled", patch + source, name, seed=5, timeout=240)
    assert graded.status == "fail" and words in graded.feedback, graded.feedback


def test_reading_the_simulators_raw_buffers_fails_before_anything_runs():
    source, name = edited("05.lab_tiled", ("a = A[row, k0 + tx]", "a = A._flat_data[0]"),
                          ("b = B[k0 + ty, col]", "b = B._flat_data[0]"))
    checked, graded = both_paths("05.lab_tiled", source, name, "raw")
    for result in (checked, graded):
        assert result.status == "fail" and "reaches ._flat_data" in result.feedback


def test_a_kernel_using_a_constant_of_another_cell_fails_both_and_check_says_why():
    source, name = edited("05.lab_tiled", ("TILE = 16\n", ""))
    kernel = live(source, name, "no_tile")
    kernel.py_func.__globals__["TILE"] = 16          # the notebook has it, from another cell
    checked = judge_alone_in_a_worker(get_question("05.lab_tiled"), kernel)
    graded = judge_code("05.lab_tiled", source, name, seed=5, timeout=240)
    assert checked.status == graded.status == "fail"
    assert "`TILE` is not defined in the part of your cell the lab runs" in graded.feedback
    assert "(The grader runs this cell alone, after the fixed preamble: TILE comes from " \
           "another cell" in checked.feedback


# -- ping-pong: the overlap, not just two buffers -----------------------------------------------

LOAD_AFTER = (
    "        a_next = element_or_zero(A, row, (t + 1) * TILE + tx)   # tile t+1, into registers\n"
    "        b_next = element_or_zero(B, (t + 1) * TILE + ty, col)\n"
    "        for k in range(TILE):                                   # compute tile t meanwhile\n"
    "            acc += sA[cur, ty, k] * sB[cur, k, tx]\n",
    "        for k in range(TILE):\n            acc += sA[cur, ty, k] * sB[cur, k, tx]\n"
    "        a_next = element_or_zero(A, row, (t + 1) * TILE + tx)\n"
    "        b_next = element_or_zero(B, (t + 1) * TILE + ty, col)\n")
STORE_BEFORE = (
    "        for k in range(TILE):                                   # compute tile t meanwhile\n"
    "            acc += sA[cur, ty, k] * sB[cur, k, tx]\n"
    "        if t + 1 < tiles:                                       # park tile t+1 in the other\n"
    "            sA[1 - cur, ty, tx] = a_next                        # buffer, then one barrier\n"
    "            sB[1 - cur, ty, tx] = b_next\n",
    "        if t + 1 < tiles:\n            sA[1 - cur, ty, tx] = a_next\n"
    "            sB[1 - cur, ty, tx] = b_next\n"
    "        for k in range(TILE):\n            acc += sA[cur, ty, k] * sB[cur, k, tx]\n")


@pytest.mark.parametrize("edit, words", [
    (LOAD_AFTER, ["loaded the next K tile from global memory only after the multiply-adds",
                  "nothing overlaps"]),
    (STORE_BEFORE, ["stored the next K tile into shared memory before the multiply-adds",
                    "the store has to wait for the global load"]),
])
def test_pingpong_without_overlap_fails_naming_the_missing_overlap(edit, words):
    kernel = load_function(*edited("08.lab_pingpong", edit), f"<pingpong {hash(edit)}>")
    status, text = get_question("08.lab_pingpong").kind.verdict(kernel)
    assert status == "fail", text
    for word in words:
        assert word in text, text
    status, text = get_question("08.lab_pingpong").kind.verdict(solution("08.lab_pingpong"))
    assert status == "pass" and "loads of the next tile were issued before" in text


def test_twolevel_loading_the_next_tile_after_its_fmas_fails_the_same_way():
    source, name, _ = cell("11.lab_twolevel")
    loads = source[source.index("        k1 = (t + 1) * BK"):source.index(
        "        read_fragments(sA, sB, cur, 0, ty, tx, a0, b0)")]
    moved = source.replace(loads, "").replace("        if t + 1 < tiles:", loads + "        if t + 1 < tiles:")
    status, text = get_question("11.lab_twolevel").kind.verdict(
        load_function(moved, name, "<twolevel late loads>"))
    assert status == "fail" and "only after the multiply-adds" in text, text


# -- feedback that leads somewhere ------------------------------------------------------------

def verdict(qid, *edits):
    kernel = load_function(*edited(qid, *edits), f"<feedback {hash(edits)}>")
    return get_question(qid).kind.verdict(kernel)


def test_race_and_out_of_bounds_name_the_line_of_the_cell():
    status, text = verdict("05.lab_tiled", ("        cuda.syncthreads()              # the tiles are "
                                            "complete before anyone reads them\n", ""))
    # each access with its own line: the read, then the write it raced with
    assert status == "fail" and "at line 27 (`acc += sA[ty, k] * sB[k, tx]`)" in text
    assert "wrote it at line 21 (`sA[ty, tx] = a`)" in text, text
    status, text = verdict("05.lab_naive", ("if row < M and col < N:", "if True:"))
    assert status == "fail" and " at line " in text and "acc += A[row, k] * B[k, col]" in text


def test_reading_unwritten_shared_memory_says_a_gpu_holds_garbage_there():
    status, text = verdict("05.lab_tiled", (
        "        a = float32(0)\n        if row < M and k0 + tx < K:\n            a = A[row, k0 + tx]\n"
        "        sA[ty, tx] = a\n", "        if row < M and k0 + tx < K:\n"
        "            sA[ty, tx] = A[row, k0 + tx]\n"))
    assert status == "fail" and "on a GPU that element holds garbage" in text
    assert "whatever the simulator shows" in text and "at line " in text


def test_the_partial_k_tile_hint_only_when_the_last_tile_is_what_is_missing():
    status, text = verdict("05.lab_tiled", ("for k0 in range(0, K, TILE):",
                                            "for k0 in range(0, K - TILE + 1, TILE):"))
    assert status == "fail" and "the product without the last, partial K tile" in text
    for wrong in [("acc += sA[ty, k] * sB[k, tx]", "acc += sA[k, ty] * sB[k, tx]"),   # swapped
                  ("b = B[k0 + ty, col]", "b = B[k0 + tx, col]")]:                    # wrong B tile
        status, text = verdict("05.lab_tiled", wrong)
        assert status == "fail" and "partial K tile" not in text, text


# -- without NVIDIA's compilers (a Mac: issue 56) -------------------------------------------------

PYTHON_LIST = ("acc = float32(0)", "acc = float32(0)\n    junk = [1, 2]\n    junk.append(3)")


def checked(qid, source, name, label):
    from gemmlab.grading import check
    return check(qid, live(source, name, label))


def hide_compilers(monkeypatch, missing):
    """This process finds only what ``missing`` leaves, and forgets the verdicts check() kept
    (they are kept by cell, and were reached with the compilers)."""
    from gemmlab import platforms
    from gemmlab.grading import checker
    monkeypatch.setattr(platforms, "missing_compilers", lambda: missing)
    monkeypatch.setattr(checker, "_VERDICTS", {})


def test_without_the_compilers_a_check_keeps_the_simulators_verdict_and_names_what_it_left(
        monkeypatch):
    """Where NVVM and ptxas are missing, the honest kernel still passes and a kernel only the
    compiler refuses passes on the simulator: one line says what was not checked on this machine
    and that the grader checks it, and no compiler child is started."""
    listed = TILED.replace(*PYTHON_LIST)
    with_compilers = [checked("05.lab_tiled", source, "lab_tiled", f"with {n}")
                      for n, source in enumerate((TILED, listed))]
    assert [r.status for r in with_compilers] == ["pass", "fail"]
    assert "does not compile for a GPU" in with_compilers[1].feedback
    assert not any("Not checked" in r.feedback for r in with_compilers)

    hide_compilers(monkeypatch, ("NVVM", "ptxas"))
    started = nvc.COMPILES["count"]
    hidden = [checked("05.lab_tiled", source, "lab_tiled", f"hidden {n}")
              for n, source in enumerate((TILED, listed))]
    assert [r.status for r in hidden] == ["pass", "pass"]
    for result in hidden:
        lines = [line for line in result.feedback.splitlines() if "Not checked" in line]
        assert len(lines) == 1 and lines[0].count("Not checked on this machine") == 1
        assert "compiles for a GPU" in lines[0] and "the grader checks it." in lines[0]
        assert "NVVM and ptxas are not installed here" in lines[0]
    assert nvc.COMPILES["count"] == started


def test_without_ptxas_the_register_report_says_it_was_not_checked(monkeypatch):
    source, name, _ = cell("10.lab_outer")
    hide_compilers(monkeypatch, ("ptxas",))
    result = checked("10.lab_outer", source, name, "no ptxas")
    assert result.status == "pass", result.feedback
    assert "What ptxas reports" not in result.feedback
    assert ("Not checked on this machine: what ptxas decides (registers, spills, the limits of "
            "a block), since NVIDIA's ptxas is not installed here") in result.feedback


def test_the_grader_never_skips_the_compile_step_when_compilers_are_missing(monkeypatch):
    """The grader's compiler answers for itself: a missing compiler there fails the grade (as
    before), whatever this process finds."""
    hide_compilers(monkeypatch, ("NVVM", "ptxas"))
    broken = Recorder({"ok": False, "stage": "setup", "message": "libnvvm not found"})
    graded = judge_code("05.lab_tiled", TILED, "lab_tiled", seed=5, timeout=240, compiler=broken)
    assert graded.status == "fail" and "compiler is not usable" in graded.feedback
    assert broken.requests, "the grader's compiler was not asked"


def _counting(replies):
    """A stand-in compiler: returns the next of ``replies`` and counts its calls."""
    calls = []

    def compile_request(request):
        calls.append(request)
        return replies[len(calls) - 1]
    return compile_request, calls


def test_a_reply_kept_on_disk_is_read_back_by_the_next_compile_of_the_same_kernel(tmp_path,
                                                                                   monkeypatch):
    monkeypatch.setenv("GEMMLAB_COMPILE_CACHE", str(tmp_path))
    request = {"source": "k = 1", "name": "k", "arguments": [], "archs": [[9, 0]]}
    compile_request, calls = _counting([{"ok": True, "archs": {"sm_90": {"registers": 32}}}])
    first = nvc.kept_on_disk(request, compile_request)
    again = nvc.kept_on_disk(dict(request), compile_request)
    assert first == again == {"ok": True, "archs": {"sm_90": {"registers": 32}}}
    assert len(calls) == 1 and len(list(tmp_path.iterdir())) == 1
    other = dict(request, archs=[[7, 5]])                     # another request: compiled
    compile_request, calls = _counting([{"ok": False, "stage": "compile", "message": "no"}])
    assert nvc.kept_on_disk(other, compile_request)["stage"] == "compile" and len(calls) == 1


def test_a_new_compiler_version_or_a_broken_file_compiles_again(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMLAB_COMPILE_CACHE", str(tmp_path))
    request = {"source": "k = 2", "name": "k", "arguments": [], "archs": [[9, 0]]}
    compile_request, calls = _counting([{"ok": True, "archs": {}}] * 3)
    nvc.kept_on_disk(request, compile_request)
    monkeypatch.setattr(nvc, "_toolchain", lambda: ["another script", [("numba", "0.0")]])
    nvc.kept_on_disk(request, compile_request)
    assert len(calls) == 2
    for kept in tmp_path.iterdir():
        kept.write_text("{not json")
    nvc.kept_on_disk(request, compile_request)
    assert len(calls) == 3


def test_the_compilers_own_failure_is_not_kept_and_an_unwritable_cache_is_not_used(tmp_path,
                                                                                     monkeypatch):
    request = {"source": "k = 3", "name": "k", "arguments": [], "archs": [[9, 0]]}
    monkeypatch.setenv("GEMMLAB_COMPILE_CACHE", str(tmp_path))
    compile_request, calls = _counting([nvc.failure("NVVM did not load"), {"ok": True, "archs": {}}])
    assert nvc.kept_on_disk(request, compile_request)["stage"] == "setup"
    assert nvc.kept_on_disk(request, compile_request)["ok"] and len(calls) == 2
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    monkeypatch.setenv("GEMMLAB_COMPILE_CACHE", str(blocked / "cache"))
    compile_request, calls = _counting([{"ok": True, "archs": {}}] * 2)
    assert nvc.kept_on_disk(request, compile_request)["ok"]
    assert nvc.kept_on_disk(request, compile_request)["ok"] and len(calls) == 2


def test_a_check_in_a_new_process_reads_the_kernels_reply_instead_of_compiling(tmp_path,
                                                                                 monkeypatch):
    """What a restarted notebook kernel or another test worker does: its own cache is empty,
    the disk's has the kernel, and no compiler child starts."""
    monkeypatch.setenv("GEMMLAB_COMPILE_CACHE", str(tmp_path))
    source, name = edited("05.lab_tiled", ("    acc = float32(0)\n", "    acc = float32(0)  # kept\n"))
    children = []
    real = nvc._compile_in_child
    monkeypatch.setattr(nvc, "_compile_in_child", lambda r: children.append(1) or real(r))
    first = checked("05.lab_tiled", source, name, "first process")
    from gemmlab.grading import checker
    monkeypatch.setattr(nvc, "_CACHE", {})                    # a new process: nothing in memory
    monkeypatch.setattr(checker, "_VERDICTS", {})
    again = checked("05.lab_tiled", source, name, "second process")
    assert first.status == again.status == "pass" and len(children) == 1


def test_the_compiler_child_is_kept_for_the_next_kernel_and_replaced_when_it_dies():
    kernels = [edited("05.lab_tiled", ("    acc = float32(0)\n", f"    acc = float32(0)  # {n}\n"))
               for n in ("served 1", "served 2", "served 3")]
    child = nvc._CompilerChild()

    def request(source, name):
        kept, _ = kernel_cell(source, name)
        return {"source": kept, "name": name, "archs": [[9, 0]], "path": [],
                "arguments": [["array", "float32", 2]] * 3}
    first = child.compile(request(*kernels[0]))
    pid = child.popen.pid
    second = child.compile(request(*kernels[1]))
    assert first["ok"] and second["ok"] and child.popen.pid == pid       # one child, two kernels
    child.popen.kill()
    child.popen.wait()
    third = child.compile(request(*kernels[2]))
    assert third["ok"] and child.popen.pid != pid
    child.popen.stdin.close()


@pytest.mark.parametrize("script,said", [
    ("import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n", "did not finish within 1 s"),
    ("import sys\nsys.stdin.readline()\nsys.stderr.write('NVVM is broken')\nsys.exit(3)\n",
     "exit status 3: NVVM is broken")])
def test_a_compiler_child_that_hangs_or_dies_is_reported_not_waited_for(tmp_path, monkeypatch,
                                                                         script, said):
    fake = tmp_path / "compiler.py"
    fake.write_text(script)
    monkeypatch.setattr(nvc, "SCRIPT", str(fake))
    monkeypatch.setattr(nvc, "TIMEOUT", 1.0)
    reply = nvc._CompilerChild().compile({"source": "", "name": "k"})
    assert reply["ok"] is False and reply["stage"] == "setup" and said in reply["message"]
