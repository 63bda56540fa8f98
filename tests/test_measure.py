"""The measuring kit: the CUDA-event timer (warm-up, samples, batches, a hook before each sample),
the host-clock timer, the machine record and the loader of recorded results."""
import json
from pathlib import Path

import numpy as np
import pytest

import gemmlab as gl
from gemmlab import measure

SIM = gl.device.backend() == "sim"
ROOT = Path(__file__).resolve().parent.parent


def _counter():
    calls = []
    return calls, lambda: calls.append(1)


def test_timer_warms_up_then_times_batches_of_launches():
    calls, launch = _counter()
    hooks = []
    samples = measure.cuda_event_ms(launch, repeats=4, warmup=3, batch=5,
                                    before_sample=lambda: hooks.append(len(calls)))
    assert len(samples) == 4
    assert len(calls) == 3 + 4 * 5
    assert hooks == [3, 8, 13, 18]            # before each sample, after the previous one ended


@pytest.mark.skipif(SIM, reason="needs a GPU: the simulator's events time nothing")
@pytest.mark.parametrize("events", measure.EVENT_KINDS)
def test_timer_measures_a_device_copy_at_a_plausible_bandwidth(events):
    if events == "cupy":
        pytest.importorskip("cupy")
    cuda = gl.device.cuda()
    nbytes = 1 << 28
    src = cuda.to_device(np.ones(nbytes // 4, np.float32))
    dst = cuda.device_array_like(src)
    samples = measure.cuda_event_ms(lambda: dst.copy_to_device(src), repeats=5, events=events)
    # What is checked is what the timer counts, not how fast this GPU is now: a busy machine only
    # adds time to a sample, so the fastest one is closest to the copy's own time, and it must be
    # a bandwidth some GPU has. A timer that timed nothing shows an impossible bandwidth, one that
    # reports seconds or microseconds instead of milliseconds is off by 1000x; the floor is far
    # below any GPU's copy (a T4's memory: 320 GB/s), so only a wrong timer falls under it.
    gbs = 2 * nbytes / (min(samples) * 1e-3) / 1e9       # read + write
    assert 5 < gbs < 20_000, samples


def test_auto_batch_is_sized_by_one_timed_launch():
    calls, launch = _counter()
    measure.cuda_event_ms(launch, repeats=2, warmup=1, batch=measure.AUTO)
    if SIM:   # the simulator's events time nothing: one launch counts as the 1 us floor
        assert len(calls) == 1 + 1 + 2 * round(measure.BATCH_SECONDS / 1e-6)
    else:     # an empty launch is far shorter than a batch
        assert len(calls) > 1 + 1 + 2 * 2


class _RecordingEvents:
    """Events that write what happens, in order, into one log (for the fair timer's logic)."""

    def __init__(self, log):
        self.log, self.count = log, 0

    def new(self):
        self.count += 1
        number, log = self.count, self.log

        class Event:
            def record(self):
                log.append(("record", number))

            def synchronize(self):
                log.append(("sync-event", number))
        Event.number = number
        return Event()

    def sync(self):
        self.log.append(("sync",))

    def elapsed_ms(self, start, end):
        return float(end.number - start.number)


def test_fair_timer_queues_a_flush_and_one_launch_between_each_pair_of_events(monkeypatch):
    log = []
    monkeypatch.setattr(measure, "_Events", lambda kind: _RecordingEvents(log))
    samples = measure.flushed_ms(lambda: log.append(("launch",)), repeats=3, warmup=2,
                                 flush=lambda: log.append(("flush",)))
    assert len(samples) == 3
    timed = log[log.index(("sync",)) + 1:]
    assert log[:log.index(("sync",))] == [("launch",)] * 2          # warm-up, then idle
    # each sample: the flush first (the GPU is busy with it while the host queues the launch),
    # then its own start event, exactly one launch, its end event; nothing waits in between
    # (a synchronisation there would let the GPU idle and show the host's launch cost)
    expected = []
    for start, end in zip(range(1, 4), range(4, 7), strict=True):
        expected += [("flush",), ("record", start), ("launch",), ("record", end)]
    assert timed == expected + [("sync-event", 6)]
    # each sample is its own pair of events, not one batch divided by its length
    assert samples == [3.0, 3.0, 3.0]


def test_fair_timer_flushes_more_than_any_l2_and_refuses_what_it_cannot_do():
    from gemmlab.perfmodel.datasheets import HARDWARE
    largest_l2 = max(chip.l2.value for chip in HARDWARE.values() if chip.l2 is not None)
    assert measure.FLUSH_BYTES >= 2 * largest_l2
    with pytest.raises(ValueError, match="repeats must be at least 1"):
        measure.flushed_ms(lambda: None, repeats=0, flush=lambda: None)
    with pytest.raises(ValueError, match="events='opencl'"):
        measure.l2_flush("opencl")


def test_timer_refuses_what_it_cannot_do():
    with pytest.raises(ValueError, match="repeats must be at least 1"):
        measure.cuda_event_ms(lambda: None, repeats=0)
    with pytest.raises(ValueError, match="batch must be a whole number"):
        measure.cuda_event_ms(lambda: None, batch=0)
    with pytest.raises(ValueError, match="batch must be a whole number"):
        measure.cuda_event_ms(lambda: None, batch="many")
    with pytest.raises(ValueError, match="events='opencl'"):
        measure.cuda_event_ms(lambda: None, events="opencl")


def test_wall_seconds_times_each_call_after_the_warm_up():
    calls, call = _counter()
    times = measure.wall_seconds(call, repeats=3, warmup=2)
    assert len(times) == 3 and len(calls) == 5 and all(t >= 0 for t in times)
    with pytest.raises(ValueError, match="repeats"):
        measure.wall_seconds(call, repeats=0)


def test_machine_record_has_date_cpu_versions_and_what_the_caller_adds():
    cpu_only = measure.machine(gpu=None, blas="openblas", python="overridden")
    assert cpu_only["cpu"] and cpu_only["logical_cores"] >= 1
    assert cpu_only["numpy"] == np.__version__
    assert cpu_only["date"][:4].isdigit() and cpu_only["date"].endswith("+00:00")
    assert cpu_only["blas"] == "openblas" and cpu_only["python"] == "overridden"
    assert "gpu" not in cpu_only and "backend" not in cpu_only
    record = measure.machine()
    assert record["backend"] == gl.device.backend()
    if SIM:
        assert record["gpu"] is None and "cuda_runtime" not in record
    else:
        assert record["gpu"] and record["sm_count"] > 0 and record["cuda_runtime"]
    with pytest.raises(ValueError, match="gpu='opencl'"):
        measure.machine(gpu="opencl")


def test_recorded_resolves_bare_names_in_benchmarks_and_takes_paths_as_given(tmp_path):
    ladder = measure.recorded("gpu_ladder.json", required=("machine", "results"))
    tiles = measure.recorded("gpu_tiles.json")
    assert ladder is not None and tiles is not None      # both are committed in benchmarks/
    assert tiles["results"] != ladder["results"]
    saved = tmp_path / "mine.json"
    saved.write_text('{"machine": {}, "results": [1]}')
    assert measure.recorded(saved)["results"] == [1]
    assert measure.recorded(tmp_path / "absent.json") is None
    assert measure.recorded("never_recorded.json") is None


def test_recorded_names_the_file_it_cannot_read(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"machine": ')
    with pytest.raises(ValueError, match="broken.json is not a valid JSON result file"):
        measure.recorded(broken)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(ValueError, match="list.json .* no 'machine' section"):
        measure.recorded(listed, required=("machine",))


@pytest.mark.parametrize("path", sorted((ROOT / "benchmarks").rglob("*.json")),
                         ids=lambda p: str(p.relative_to(ROOT / "benchmarks")))
def test_every_recorded_file_loads_as_it_is(path):
    data = measure.recorded(path)
    assert data == json.loads(path.read_text(encoding="utf-8"))
    records = data if isinstance(data, list) else [data]
    assert all("machine" in r or "gpu" in r for r in records)   # each says what it ran on
