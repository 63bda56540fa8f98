"""ptxas decides (issue 35, item 1): a kernel NVIDIA's assembler refuses, or one beyond what a
block may declare, fails its lab with the reason in plain words. The whole path (the tiled
kernel with 2 x 256 KiB of shared memory failing check() and the grader, naming 48 KiB and its
line) is one of tests/test_labs_simulator_attacks.py's attacks; here, the limits themselves."""
from gemmlab.labs import nvcompile


def test_the_limits_are_read_from_ptxas_figures():
    """Figures past a limit are refused even where ptxas itself said nothing."""
    assert nvcompile._beyond_limits({"registers": 40, "shared_bytes": 2048}) is None
    assert "49 KiB" in nvcompile._beyond_limits({"registers": 40, "shared_bytes": 49 * 1024})
    assert "300 registers" in nvcompile._beyond_limits({"registers": 300, "shared_bytes": 0})
    words = nvcompile._refused_words("ptxas error   : Entry function 'k' uses too much shared "
                                     "data (0x80000 bytes, 0xc000 max)", 255)
    assert words.startswith("it needs 512 KiB of static shared memory; a block may declare at "
                            "most 48 KiB")
