"""The training-loop timeline of lesson 00: CPU-side prefetch hides the preparation, only an
asynchronous copy hides the copies, and bad arguments name themselves."""
import pytest

from gemmlab import perfmodel as pm

N, PREP, COPY, COMP = 8, 24.0, 4.0, 10.0


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
