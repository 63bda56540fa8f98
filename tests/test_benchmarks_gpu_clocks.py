"""benchmarks/gpu_clocks.py: the clock, power and clock-event reasons sampled beside a timing
(the H100's power cap moved large-shape figures by 10-25%), read from nvidia-smi's CSV, with a
fake nvidia-smi standing in for the driver."""
import os
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import gpu_clocks  # noqa: E402


def _line(t, mhz, watts, mask):
    stamp = datetime.fromtimestamp(t).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
    return f"{stamp}, {mhz}, {watts}, 60, 0x{mask:016x}"


def test_reasons_are_named_from_the_drivers_bit_mask():
    assert gpu_clocks.reason_names(0x4) == ["sw_power_cap"]
    assert gpu_clocks.reason_names(0x1 | 0x40) == ["gpu_idle", "hw_thermal_slowdown"]
    assert gpu_clocks.reason_names(0) == ["none"]


def test_a_summary_covers_only_the_samples_inside_its_spans():
    now = 1_800_000_000.0
    lines = [_line(now + i * 0.02, 1980 - 100 * i, 300 + 100 * i, 0x4 if i >= 3 else 0)
             for i in range(6)] + ["clocks.sm [MHz], header", "Failed to initialize NVML"]
    samples = gpu_clocks.parse(lines)
    assert len(samples) == 6                               # the header and the error are skipped
    first = gpu_clocks.summary(samples, [(now - 0.001, now + 0.041)])
    assert first["samples"] == 3 and first["sm_mhz_min"] == 1780
    assert first["clock_event_reasons"] == ["none"] and first["watts_max"] == 500
    later = gpu_clocks.summary(samples, [(now + 0.059, now + 0.061), (now + 0.099, now + 0.101)])
    assert later["samples"] == 2 and later["sm_mhz_mean"] == pytest.approx((1680 + 1480) / 2)
    assert later["clock_event_reasons"] == ["sw_power_cap"]
    assert gpu_clocks.summary(samples, [(now + 5, now + 6)]) == {"samples": 0}


def test_the_sampler_reads_what_nvidia_smi_wrote(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\nwhile true; do\n"
                    "  echo \"$(date '+%Y/%m/%d %H:%M:%S.%N' | cut -c1-23), 1400, 699.5, 71, "
                    "0x0000000000000004\"\n  sleep 0.02\ndone\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with gpu_clocks.Sampler() as clocks:
        t0 = time.time()
        time.sleep(1.5)     # the fake writes every 20 ms; a busy machine forks its date slowly
        span = (t0, time.time())
    seen = clocks.during(span)
    assert seen["samples"] >= 3, seen
    assert seen["sm_mhz_mean"] == 1400 and seen["clock_event_reasons"] == ["sw_power_cap"]


def test_without_nvidia_smi_the_sampler_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with gpu_clocks.Sampler() as clocks:
        span = (time.time(), time.time())
    assert clocks.during(span) == {"unavailable": "nvidia-smi not found"}
