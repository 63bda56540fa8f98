"""ptxas decides (issue 35, item 1): a kernel NVIDIA's assembler refuses, or one beyond what a
block may declare, fails its lab with the reason in plain words and the line, through check()
and through the grader, however well the simulator runs it."""
import pytest

import gemmlab as gl
from gemmlab.grading import check
from gemmlab.judging import load_function
from gemmlab.labs import nvcompile
from gemmlab.labs.solutions import cell
from gemmlab_grader.isolate import judge_code

pytestmark = pytest.mark.skipif(gl.device.backend() != "sim",
                                reason="the instrumented simulator runs on the simulator backend")
SHARED = "cuda.shared.array((TILE, TILE), float32)"


def huge_tiles():
    """The honest tiled kernel with each 16 x 16 tile declared 256 x 256 (256 KiB apiece): the
    kernel is right and the simulator runs it, but a block may declare only 48 KiB."""
    source, name, _ = cell("05.lab_tiled")
    assert source.count(SHARED) == 2
    return source.replace(SHARED, "cuda.shared.array((256, 256), float32)"), name


def test_too_much_static_shared_memory_fails_check_and_the_grader_naming_48_kib():
    source, name = huge_tiles()
    checked = check("05.lab_tiled", load_function(source, name, "/nonexistent/huge.py"))
    graded = judge_code("05.lab_tiled", source, name, seed=3)
    for result in (checked, graded):
        assert result.status == "fail", result.feedback
        assert "512 KiB of static shared memory" in result.feedback, result.feedback
        assert "at most 48 KiB" in result.feedback
        assert "sA = cuda.shared.array((256, 256), float32)" in result.feedback  # its line


def test_the_limits_are_read_from_ptxas_figures():
    """Figures past a limit are refused even where ptxas itself said nothing."""
    assert nvcompile._beyond_limits({"registers": 40, "shared_bytes": 2048}) is None
    assert "49 KiB" in nvcompile._beyond_limits({"registers": 40, "shared_bytes": 49 * 1024})
    assert "300 registers" in nvcompile._beyond_limits({"registers": 300, "shared_bytes": 0})
    words = nvcompile._refused_words("ptxas error   : Entry function 'k' uses too much shared "
                                     "data (0x80000 bytes, 0xc000 max)", 255)
    assert words.startswith("it needs 512 KiB of static shared memory; a block may declare at "
                            "most 48 KiB")
