"""The GPU's SM clock, power draw and the driver's clock-event reasons, sampled beside a timing.

An H100 SXM running a large GEMM reaches its 700 W cap within milliseconds, and then the driver
lowers the SM clock (reason "sw_power_cap") by an amount that depends on what ran just before:
on 2026-12-06 the same kernel at 8192^3 timed 1.68 to 2.16 ms from one round of launches to the
next (``clock_probe.py``, RESULTS.md). A figure taken under the cap is worth little without the
clock beside it, so the timing scripts sample it:

    with Sampler() as clocks:
        t0 = time.time(); ...; span = (t0, time.time())
    clocks.during(span)         # {"sm_mhz_mean": ..., "clock_event_reasons": [...], ...}

``nvidia-smi -lms 20`` writes one line per 20 ms into a temporary file; the lines are read when
the block ends. Without nvidia-smi, ``during`` says so instead of giving figures.
"""
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import datetime

QUERY = "timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"
PERIOD_MS = 20
REASONS = {0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap",
           0x8: "hw_slowdown", 0x10: "sync_boost", 0x20: "sw_thermal_slowdown",
           0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown",
           0x100: "display_clock_setting"}


def reason_names(mask):
    """The driver's clock-event bit mask as names: 0x4 -> ["sw_power_cap"]."""
    return [name for bit, name in REASONS.items() if mask & bit] or ["none"]


def parse(lines):
    """[(unix time, sm MHz, watts, deg C, reason mask)] from nvidia-smi's CSV lines (no header,
    no units); lines it could not read (a header, an error) are skipped."""
    found = []
    for line in lines:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 5:
            continue
        try:
            t = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            found.append((t, float(parts[1]), float(parts[2]), float(parts[3]), int(parts[4], 16)))
        except ValueError:
            continue
    return found


def summary(samples, spans):
    """Clock, power and reasons over the samples taken inside any of ``spans`` ((start, end)
    pairs of unix times)."""
    inside = [s for s in samples if any(start <= s[0] <= end for start, end in spans)]
    if not inside:
        return {"samples": 0}
    mask = 0
    for s in inside:
        mask |= s[4]
    return {"samples": len(inside), "sm_mhz_mean": statistics.mean(s[1] for s in inside),
            "sm_mhz_min": min(s[1] for s in inside),
            "watts_mean": statistics.mean(s[2] for s in inside),
            "watts_max": max(s[2] for s in inside), "temp_c_max": max(s[3] for s in inside),
            "clock_event_reasons": reason_names(mask)}


class Sampler:
    """nvidia-smi sampling the GPU every PERIOD_MS while the ``with`` block runs."""

    def __init__(self):
        self.samples, self.missing = [], None

    def __enter__(self):
        self._file = tempfile.NamedTemporaryFile("w+", suffix=".csv", delete=False)
        smi = shutil.which("nvidia-smi")
        if smi is None:
            self.missing, self._proc = "nvidia-smi not found", None
        else:
            self._proc = subprocess.Popen(
                [smi, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits", "-lms",
                 str(PERIOD_MS)], stdout=self._file, stderr=subprocess.DEVNULL)
            time.sleep(0.3)                  # its first line before the first timing
        return self

    def __exit__(self, *exc):
        if self._proc is not None:
            time.sleep(0.1)
            self._proc.terminate()
            self._proc.wait()
        self._file.close()
        with open(self._file.name) as f:
            self.samples = parse(f)
        os.unlink(self._file.name)
        if self._proc is not None and not self.samples:
            self.missing = "nvidia-smi gave no readable samples"
        return False

    def during(self, *spans):
        """:func:`summary` of the (start, end) spans, or why there are no figures."""
        return {"unavailable": self.missing} if self.missing else summary(self.samples, spans)
