"""The opening lecture's hardware path and training-loop model (lesson 00): the link figures and
where they come from, and the timeline that tells CPU-side prefetch from copy/compute overlap."""
import pytest

from gemmlab import perfmodel as pm

N, PREP, COPY, COMP = 8, 24.0, 4.0, 10.0


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


def test_serial_loop_pays_every_stage_of_every_batch():
    bars = pm.training_timeline(N, PREP, COPY, COMP)
    assert pm.timeline_end(bars) == N * (PREP + COPY + COMP)
    assert {b.lane for b in bars} == {"main process", "copy to GPU", "GPU compute"}


def test_workers_hide_preparation_but_not_the_copy():
    bars = pm.training_timeline(N, PREP, COPY, COMP, workers=4, prefetch=2)
    assert pm.timeline_end(bars) == PREP + N * (COPY + COMP)
    assert pm.idle_time(bars, "GPU compute") == PREP + N * COPY     # the GPU still waits for copies


def test_pinned_async_copies_hide_the_copy_too():
    bars = pm.training_timeline(N, PREP, COPY, COMP, workers=4, prefetch=2, overlap_copy=True)
    assert pm.timeline_end(bars) == PREP + COPY + N * COMP
    assert pm.idle_time(bars, "GPU compute") == PREP + COPY


def test_prefetch_bounds_how_far_the_workers_run_ahead():
    # a slow GPU: workers may hold at most workers x prefetch batches not yet copied
    bars = pm.training_timeline(12, 1.0, 1.0, 10.0, workers=2, prefetch=1)
    prepared = sorted(b.start for b in bars if b.lane.startswith("worker"))
    copies = sorted(b.start for b in bars if b.lane == "copy to GPU")
    for i in range(2, 12):
        assert prepared[i] >= copies[i - 2]


@pytest.mark.parametrize("kwargs", [dict(n_batches=0), dict(t_copy=-1), dict(workers=-1), dict(workers=2.5),
                                    dict(prefetch=0), dict(n_batches=2.5)])
def test_bad_arguments_name_themselves(kwargs):
    args = dict(n_batches=4, t_prepare=1.0, t_copy=1.0, t_compute=1.0) | kwargs
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        pm.training_timeline(**args)


def test_idle_time_of_an_unknown_lane_is_an_error():
    with pytest.raises(ValueError, match="no bars"):
        pm.idle_time(pm.training_timeline(2, 1.0, 1.0, 1.0), "worker 7")
