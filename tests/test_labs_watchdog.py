"""The labs' watchdog counts the work of the thread it guards (its CPU time), not the clock: a
busy machine cannot turn an honest kernel into a timeout, and an endless loop is still stopped."""
import time

import pytest

from gemmlab.labs import watchdog
from gemmlab.labs.limits import Stop
from gemmlab.labs.watchdog import Watchdog


def test_an_endless_loop_is_stopped_after_its_cpu_seconds(monkeypatch):
    monkeypatch.setattr(watchdog, "WALL_FACTOR", 1000)   # on a busy machine the clock's backstop could fire first
    start = time.thread_time()
    with pytest.raises(Stop), Watchdog(0.3) as dog:
        while True:
            pass
    assert dog.fired and time.thread_time() - start >= 0.3


def test_waiting_is_not_work_so_the_clock_alone_does_not_stop_a_thread(monkeypatch):
    monkeypatch.setattr(watchdog, "WALL_FACTOR", 50)     # the backstop far off, on a busy machine too
    with Watchdog(0.2) as dog:
        time.sleep(0.6)                     # three times the limit on the clock, no CPU time
    assert not dog.fired


def test_a_thread_that_works_slowly_on_a_busy_machine_is_not_stopped_on_the_clock(monkeypatch):
    """A thread given 5% of a core (its CPU clock faked to advance so) works on past the clock's
    backstop: the clock stops only a thread that does not work."""
    monkeypatch.setattr(watchdog, "WALL_FACTOR", 2)
    start = time.monotonic()
    monkeypatch.setattr(watchdog, "thread_cpu_clock",
                        lambda ident: lambda: 0.05 * (time.monotonic() - start))
    with Watchdog(0.2) as dog:
        time.sleep(1.0)                     # 2.5 times the backstop on the clock, 0.05 s of work
    assert not dog.fired


def test_a_thread_that_neither_works_nor_ends_is_stopped_on_the_clock(monkeypatch):
    monkeypatch.setattr(watchdog, "WALL_FACTOR", 2)
    with pytest.raises(Stop), Watchdog(0.2) as dog:
        for _ in range(100):                # 10 s of sleeping in short steps, CPU time ~0
            time.sleep(0.1)
    assert dog.fired


def test_without_a_thread_cpu_clock_the_clock_counts(monkeypatch):
    monkeypatch.delattr(time, "pthread_getcpuclockid")
    assert watchdog.thread_cpu_clock(0) is time.monotonic
