"""blocks_per_sm refuses blocks no GPU can launch: more than 1024 threads, more than 255
registers per thread."""
import pytest

from gemmlab.perfmodel.occupancy import blocks_per_sm


@pytest.mark.parametrize("regs, threads, message", [
    (32, 2048, "a block of 2048 threads cannot be launched: a CUDA block has at most 1024"),
    (32, 1025, "a block of 1025 threads"),
    (300, 256, "300 registers per thread is not possible: a thread has at most 255"),
    (256, 128, "256 registers per thread"),
])
def test_impossible_blocks_are_refused(regs, threads, message):
    with pytest.raises(ValueError, match=message):
        blocks_per_sm(regs, threads, 0)


def test_the_limits_themselves_are_allowed():
    assert blocks_per_sm(16, 1024, 0) == (2, "threads")
    assert blocks_per_sm(255, 128, 0) == (2, "registers")
