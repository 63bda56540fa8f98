"""The memory path of lesson 00 in the hardware table: each hop's figure, where it comes from and
how it was obtained, the kinds of device memory, and board power."""
import pytest

from gemmlab import perfmodel as pm


def test_memory_path_runs_from_ssd_to_hbm_with_sourced_datasheet_figures():
    names = [link.name for link in pm.MEMORY_PATH]
    assert names[0].startswith("NVMe SSD") and names[-1].startswith("HBM")
    for link in pm.MEMORY_PATH:
        assert link.bandwidth.unit == "B/s" and link.bandwidth.source
        assert link.bandwidth.basis in (pm.DATASHEET, pm.BOTH_WAYS_HALVED)
    rate = {link.name.split(",")[0].split(" ")[0]: link.bandwidth.value for link in pm.MEMORY_PATH}
    # a link is not a memory: PCIe moves 75x less than the H200's HBM, NVLink about 11x less
    assert rate["HBM3e"] / rate["PCIe"] == 75 and rate["HBM3e"] / rate["NVLink"] > 10
    assert rate["NVMe"] < rate["host"] < rate["PCIe"] < rate["NVLink"] < rate["HBM3e"]


def test_memory_path_table_times_a_transfer_through_each_hop():
    rows = pm.memory_path_table(14e9)
    assert [r["link"] for r in rows] == [link.name for link in pm.MEMORY_PATH]
    assert rows[-1]["seconds"] == pytest.approx(14e9 / 4.8e12)
    with pytest.raises(ValueError, match="nbytes"):
        pm.memory_path_table(0)


def test_not_every_gpu_memory_is_hbm_and_power_is_per_chip():
    kinds = {name: kind for name, (kind, _) in pm.DEVICE_MEMORY.items()}
    assert kinds["H200 SXM"].startswith("HBM") and kinds["L40S"] == "GDDR6"
    assert pm.POWER["H200 SXM"].value == 700 and pm.POWER["A100 SXM"].value == 400
