"""The GPU in hand: its attributes read through the driver's enum numbers, and every live helper
(SM limits, blocks per SM, FP32 peak, datasheet row, problem sizes) checked on each GPU of the
hardware table with its attributes faked (tests/fakegpus.py), against the datasheet figures. The
last tests need a real GPU and compare with numba and the driver's occupancy calculator."""
import pytest

from gemmlab import device, gpuspec
from gemmlab import perfmodel as pm

from fakegpus import FAKE_GPUS, laptop, spec

KIB = 1024


def test_attribute_numbers_are_the_drivers():
    driver = pytest.importorskip("cuda.bindings.driver")
    enum = driver.CUdevice_attribute
    names = {"max_threads_per_block": "MAX_THREADS_PER_BLOCK", "shared_per_block": "MAX_SHARED_MEMORY_PER_BLOCK",
             "warp_size": "WARP_SIZE", "registers_per_block": "MAX_REGISTERS_PER_BLOCK",
             "clock_khz": "CLOCK_RATE", "sms": "MULTIPROCESSOR_COUNT", "l2_bytes": "L2_CACHE_SIZE",
             "max_threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR",
             "cc_major": "COMPUTE_CAPABILITY_MAJOR", "cc_minor": "COMPUTE_CAPABILITY_MINOR",
             "shared_per_sm": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
             "registers_per_sm": "MAX_REGISTERS_PER_MULTIPROCESSOR",
             "shared_per_block_optin": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
             "max_blocks_per_sm": "MAX_BLOCKS_PER_MULTIPROCESSOR",
             "reserved_shared_per_block": "RESERVED_SHARED_MEMORY_PER_BLOCK"}
    assert set(names) == set(gpuspec.ATTRIBUTES)
    for field, name in names.items():
        assert gpuspec.ATTRIBUTES[field] == int(getattr(enum, f"CU_DEVICE_ATTRIBUTE_{name}")), field


def test_a_fake_gpu_must_describe_every_attribute():
    with pytest.raises(ValueError, match="missing"):
        gpuspec.FakeAttributes("half a GPU", 1 << 30, sms=4)


@pytest.mark.parametrize("row", list(FAKE_GPUS))
def test_each_gpu_finds_its_datasheet_row_and_its_architectures_limits(row):
    gpu = spec(row)
    chip = gpu.datasheet
    assert chip is pm.chip(row)
    assert gpu.compute_capability == chip.compute_capability
    table = pm.sm_resources(gpu.compute_capability)
    live = gpu.sm
    for field in ("registers", "max_threads", "max_blocks", "shared_bytes", "max_shared_per_block",
                  "reserved_shared_per_block", "fp32_lanes"):
        assert getattr(live, field) == getattr(table, field), field


@pytest.mark.parametrize("row", list(FAKE_GPUS))
def test_the_fp32_peak_at_the_drivers_clock_is_the_datasheets(row):
    gpu, chip = spec(row), pm.chip(row)
    assert gpu.peak_fp32 == pytest.approx(chip.peak("fp32"), rel=0.015)


def test_blocks_per_sm_use_the_gpus_own_limits_not_hoppers():
    # 256 threads, 16 registers, 16 KiB of shared memory per block
    t4, a100, rtx4090, h200 = (spec(r).sm for r in ("T4", "A100 40GB", "RTX 4090", "H200 SXM"))
    assert pm.blocks_per_sm(32, 256, 20 * KIB, t4) == (3, "shared memory")      # 64 KiB per SM
    assert pm.blocks_per_sm(16, 512, 0, t4) == (2, "threads")                   # 1024 threads
    assert pm.blocks_per_sm(16, 512, 0, h200) == (4, "threads")                 # Hopper: 2048
    assert pm.blocks_per_sm(16, 256, 16 * KIB, a100) == (8, "threads")          # 2048 threads
    assert pm.blocks_per_sm(16, 256, 16 * KIB, rtx4090) == (5, "shared memory")  # 100 / (16 + 1)
    assert pm.blocks_per_sm(16, 256, 16 * KIB, h200) == (8, "threads")
    # the largest block each GPU allows fits exactly once; a byte more cannot launch
    for sm in (t4, a100, rtx4090, h200):
        assert pm.blocks_per_sm(32, 128, sm.max_shared_per_block, sm)[0] == 1
        with pytest.raises(ValueError, match="at most"):
            pm.blocks_per_sm(32, 128, sm.max_shared_per_block + 1, sm)
    # T4: no per-block reservation, so a kernel without shared memory is bound by threads
    assert pm.blocks_per_sm(16, 64, 0, t4) == (16, "threads")


def test_a_gpu_outside_the_table_still_has_live_figures():
    gpu = laptop(4)
    assert gpu.datasheet is None
    assert gpu.peak_fp32 == pytest.approx(16 * 128 * 2 * 1.5e9)
    assert any("none in the course's table" in line for line in gpu.describe())


@pytest.mark.parametrize("row", list(FAKE_GPUS))
def test_problem_sizes_fit_a_quarter_of_each_gpus_memory(row):
    gpu = spec(row)
    sizes = device.scale_to_memory(device.SIZES["gpu"], gpu.total_memory)
    assert sizes == device.SIZES["gpu"]                    # 16 GB and more: the H200's sizes
    budget = gpu.total_memory / device.MEMORY_SHARE
    for key, need in device.WORKING_SET.items():
        values = sizes[key] if isinstance(sizes[key], list) else [sizes[key]]
        assert all(need(v) <= budget for v in values), key


@pytest.mark.parametrize("memory_gb", [8, 4, 2])
def test_problem_sizes_shrink_on_small_gpus(memory_gb):
    gpu = laptop(memory_gb)
    sizes = device.scale_to_memory(device.SIZES["gpu"], gpu.total_memory)
    budget = gpu.total_memory / device.MEMORY_SHARE
    for key, need in device.WORKING_SET.items():
        values = sizes[key] if isinstance(sizes[key], list) else [sizes[key]]
        assert values and all(need(v) <= budget for v in values), key
    assert sizes["roofline_copy_mib"] < device.SIZES["gpu"]["roofline_copy_mib"]
    assert set(sizes) == set(device.SIZES["gpu"])


def test_describe_names_the_live_figures_and_the_datasheet():
    lines = spec("T4").describe()
    assert lines[0].startswith("Tesla T4: compute capability 7.5, 40 SMs at up to 1.59 GHz")
    assert "64 KiB shared memory" in lines[1] and "1024 threads" in lines[1]
    assert "8.1 TFLOP/s" in lines[2] and lines[3].startswith("datasheet row: T4")


# ---------------------------------------------------------------------------------- a real GPU

gpu_only = pytest.mark.skipif(device.backend() != "gpu", reason="needs a GPU (GEMMLAB_BACKEND=gpu)")


@gpu_only
def test_live_attributes_agree_with_numba():
    live = device.spec()
    dev = device.cuda().get_current_device()
    assert live.compute_capability == dev.compute_capability
    assert live.sms == dev.MULTIPROCESSOR_COUNT
    assert live.shared_per_block_optin == dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    # numba's own name, or the driver's where numba maps names onto cuda-bindings 13's enum
    assert live.max_threads_per_sm in {getattr(dev, n, None) for n in (
        "MAX_THREADS_PER_MULTI_PROCESSOR", "MAX_THREADS_PER_MULTIPROCESSOR")} - {None}
    assert live.name == (dev.name.decode() if isinstance(dev.name, bytes) else dev.name)


def _one_signature(value):
    """numba-cuda reports per signature (a dict), or the value itself for a kernel with one."""
    return next(iter(value.values())) if isinstance(value, dict) else value


@gpu_only
def test_the_model_of_blocks_per_sm_on_live_limits_is_the_drivers():
    from gemmlab import bench, kernels
    sm = device.spec().sm
    for name in kernels.names():
        rung = kernels.get(name)
        tiles = rung.resolve({})
        kern, plan = rung.kernel(**tiles), rung.plan(**tiles)
        A = device.cuda().device_array((64, 64), dtype="float32")
        kern[plan.grid(64, 64), plan.block](A, A, A, A, 1.0, 0.0)
        regs, smem = map(_one_signature, (kern.get_regs_per_thread(),
                                          kern.get_shared_mem_per_block()))
        driver = bench.driver_blocks_per_sm(kern, plan.threads)
        assert pm.blocks_per_sm(regs, plan.threads, smem, sm)[0] == driver, name
