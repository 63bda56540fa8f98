"""The GPU rows of the hardware table: every row sourced and dated, peaks dense, figures that the
sources do not confirm left unconfirmed (never guessed), each row's FP32 peak consistent with its own
SMs and boost clock, and the driver's product names mapped to the right row."""
import pytest

from gemmlab import perfmodel as pm
from gemmlab.perfmodel import datasheets

LISTED = ("T4", "L4", "A10", "A100 40GB", "A100 SXM", "RTX 3090", "RTX 4090", "RTX 5090",
          "H100 PCIe", "H100 SXM", "H200 SXM", "B200")


def test_the_table_has_every_gpu_a_student_may_have():
    assert tuple(pm.HARDWARE) == LISTED


@pytest.mark.parametrize("name", LISTED)
def test_each_row_names_its_document_an_address_and_a_date(name):
    c = pm.chip(name)
    figures = [*(f for f in c.peaks.values() if f), c.bandwidth, c.capacity, c.sms, c.boost_clock]
    for fig in figures + ([c.l2] if c.l2 else []):
        src = fig.source
        assert isinstance(src, datasheets.Source) and src.what and src.url and src.date, name
        assert fig.basis in (pm.DATASHEET, pm.SPARSE_HALVED, pm.DERIVED, pm.MEASURED,
                             pm.DEVICE_QUERY), name
    assert c.compute_capability in pm.ARCHITECTURES


@pytest.mark.parametrize("name", LISTED)
def test_the_fp32_peak_is_sms_times_lanes_times_two_at_the_boost_clock(name):
    c = pm.chip(name)
    lanes = pm.fp32_lanes_per_sm(*c.compute_capability)
    assert c.sms.value * lanes * 2 * c.boost_clock.value == pytest.approx(c.peak("fp32"), rel=0.015)


def test_tensor_core_peaks_are_dense_and_at_least_the_fp32_peak():
    for c in pm.HARDWARE.values():
        for dtype in ("tf32", "fp16", "bf16", "fp8"):
            fig = c.peaks.get(dtype)
            if fig is not None:
                assert fig.value >= c.peak("fp32"), (c.name, dtype)
    assert pm.chip("L4").peak("fp16") == pytest.approx(242e12 / 2)          # printed with sparsity
    assert pm.chip("RTX 4090").peak("fp16") == pytest.approx(165.2e12)      # FP32 accumulation


def test_an_unconfirmed_figure_says_so_and_a_missing_path_says_that():
    with pytest.raises(ValueError, match="not confirmed"):
        pm.chip("RTX 5090").peak("fp16")
    with pytest.raises(ValueError, match="no bf16 peak"):
        pm.chip("T4").peak("bf16")
    rows = {r["GPU"]: r for r in pm.table()}
    assert rows["RTX 5090"]["fp16 TFLOP/s"] == "?" and rows["T4"]["bf16 TFLOP/s"] == "-"
    assert rows["A10"]["tf32 TFLOP/s"].endswith("~") and rows["H200 SXM"]["fp16 TFLOP/s"].endswith("*")
    assert len({tuple(r) for r in rows.values()}) == 1                     # one set of columns


@pytest.mark.parametrize("driver_name, row", [
    ("Tesla T4", "T4"), ("NVIDIA L4", "L4"), ("NVIDIA A10", "A10"),
    ("NVIDIA A100-SXM4-40GB", "A100 40GB"), ("NVIDIA A100-PCIE-40GB", "A100 40GB"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM"), ("NVIDIA GeForce RTX 3090", "RTX 3090"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090"), ("NVIDIA GeForce RTX 5090", "RTX 5090"),
    ("NVIDIA H100 PCIe", "H100 PCIe"), ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H200", "H200 SXM"), ("NVIDIA B200", "B200"),
])
def test_the_drivers_name_finds_its_row(driver_name, row):
    assert pm.chip_for(driver_name) is pm.chip(row)


@pytest.mark.parametrize("driver_name", ["NVIDIA A10G", "NVIDIA GeForce RTX 3090 Ti",
                                         "NVIDIA GeForce RTX 4090 D", "NVIDIA A100 80GB PCIe",
                                         "NVIDIA GeForce RTX 3050 Laptop GPU"])
def test_a_different_product_with_a_similar_name_has_no_row(driver_name):
    assert pm.chip_for(driver_name) is None


def test_architecture_limits_follow_the_compute_capability_table():
    t4, a100, ada, hopper = (pm.sm_resources(cc) for cc in ("7.5", (8, 0), 8.9, (9, 0)))
    assert (t4.shared_bytes, t4.max_threads, t4.max_blocks, t4.reserved_shared_per_block) == \
        (64 * 1024, 1024, 16, 0)
    assert (a100.shared_bytes, a100.max_shared_per_block) == (164 * 1024, 163 * 1024)
    assert (ada.shared_bytes, ada.max_threads, ada.max_blocks) == (100 * 1024, 1536, 24)
    assert hopper is pm.HOPPER and hopper.max_shared_per_block == 227 * 1024
    with pytest.raises(ValueError, match="not in the course's table"):
        pm.sm_resources("6.1")
    with pytest.raises(ValueError, match="compute capability like"):
        pm.sm_resources("sm_90")
