"""Blocks per SM on Hopper as the CUDA guide defines shared memory for compute capability 9.0:
228 KiB per SM, at most 227 KiB per block, 1 KiB reserved by the driver for each resident block;
and no block past what a GPU can launch (1024 threads, 255 registers per thread)."""
import pytest

from gemmlab import perfmodel as pm

KIB = 1024


def test_the_largest_block_fits_once():
    # 227 KiB + the driver's 1 KiB = 228 KiB: exactly one block (the old model said 0)
    assert pm.blocks_per_sm(10, 256, 227 * KIB) == (1, "shared memory")


@pytest.mark.parametrize("smem_kib, blocks", [(113, 2), (114, 1), (75, 3), (56, 4), (0.5, 8)])
def test_each_block_pays_the_reservation(smem_kib, blocks):
    # 2 x (113 + 1) = 228 fits, 2 x (114 + 1) = 230 does not; 8 blocks of 256 threads fill the
    # SM's 2048 threads before shared memory runs out at 0.5 KiB each
    got, _ = pm.blocks_per_sm(10, 256, int(smem_kib * KIB))
    assert got == blocks
    assert got == min(pm.HOPPER.shared_bytes // (int(smem_kib * KIB) + pm.HOPPER.reserved_shared_per_block),
                      pm.HOPPER.max_threads // 256)


def test_a_block_over_the_per_block_limit_cannot_launch():
    with pytest.raises(ValueError, match="at most 232448 per block"):
        pm.blocks_per_sm(10, 256, 227 * KIB + 1)


def test_hopper_shared_memory_facts():
    assert pm.HOPPER.shared_bytes == 228 * KIB
    assert pm.HOPPER.max_shared_per_block == 227 * KIB
    assert pm.HOPPER.reserved_shared_per_block == KIB


@pytest.mark.parametrize("regs, threads, message", [
    (32, 2048, "a block of 2048 threads cannot be launched: a CUDA block has at most 1024"),
    (32, 1025, "a block of 1025 threads"),
    (300, 256, "300 registers per thread is not possible: a thread has at most 255"),
    (256, 128, "256 registers per thread"),
])
def test_blocks_no_gpu_can_launch_are_refused(regs, threads, message):
    with pytest.raises(ValueError, match=message):
        pm.blocks_per_sm(regs, threads, 0)


def test_the_thread_and_register_limits_themselves_are_allowed():
    assert pm.blocks_per_sm(16, 1024, 0) == (2, "threads")
    assert pm.blocks_per_sm(255, 128, 0) == (2, "registers")
