"""Stopping a student's code that runs in the caller's own thread.

The kernel labs run student code in the caller's own thread (the simulated CUDA threads are
greenlets of it), so an endless loop would hang the check. :class:`Watchdog` raises
:class:`~gemmlab.labs.limits.Stop` inside that thread once it has done ``seconds`` of work: CPU
time of that thread, so a busy machine, which slows the clock's seconds but not the work, cannot
turn an honest kernel into a timeout. A thread that stops working without ending (blocked, not
busy) is stopped on the clock once it has been idle (under :data:`IDLE_SHARE` of a core) for
:data:`WALL_FACTOR` times as long; a thread that works, however slowly a busy machine lets it, is
not: eight workers on two cores once stopped an honest lab kernel at 60 s of the clock.
"""
import threading
import time

from .limits import Stop, raise_in_thread

WALL_FACTOR = 6            # the clock's backstop, in multiples of the CPU-time limit
IDLE_SHARE = 0.01          # below this share of a core between two looks, the thread is idle
POLL = 0.05                # seconds between two looks at the thread's CPU time


def thread_cpu_clock(ident):
    """A function giving the CPU seconds thread ``ident`` has used, or the clock's seconds where
    the system cannot tell a thread's CPU time (macOS, Windows)."""
    try:
        clock = time.pthread_getcpuclockid(ident)
        time.clock_gettime(clock)
    except (AttributeError, OSError):
        return time.monotonic
    return lambda: time.clock_gettime(clock)


class Watchdog:
    """Raise :class:`Stop` in the current thread once it has used ``seconds`` of CPU time, unless
    stopped first (use as a context manager; ``fired`` says whether it went off)."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.ident = threading.get_ident()
        self.used = thread_cpu_clock(self.ident)
        self.lock = threading.Lock()
        self.running, self.fired = True, False
        self.done = threading.Event()
        self.watcher = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self):
        self.start = self.used()
        self.watcher.start()
        return self

    def __exit__(self, *exc):
        with self.lock:
            self.running = False
            self.done.set()
            if self.fired:        # clear the exception in case it has not been delivered yet
                raise_in_thread(self.ident, None)
        return False

    def _watch(self):
        idle, cpu, clock = 0.0, self.start, time.monotonic()
        while not self.done.wait(POLL):
            last_cpu, last_clock = cpu, clock
            cpu, clock = self.used(), time.monotonic()
            if cpu - last_cpu < IDLE_SHARE * (clock - last_clock):
                idle += clock - last_clock
            if cpu - self.start >= self.seconds or idle >= WALL_FACTOR * self.seconds:
                with self.lock:
                    if self.running:
                        self.fired = True
                        raise_in_thread(self.ident, Stop)
                return
