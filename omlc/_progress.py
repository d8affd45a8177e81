"""A dependency-free progress bar on stderr: rows done, rows/s, ETA.

Its rate is wall-clock throughput of everything the loop does (reading, the
learner, metrics); result tables report the learner's own time separately, so
the two rates differ by design and are labelled "rows/s wall" and
"learn rows/s".
"""
import sys
import time


class Progress:
    """``Progress(total, desc)``; ``update(n)``; ``close()``. Silent when disabled.

    ``enabled=None`` shows the bar only when stderr is a terminal, so logs and CI
    output stay clean unless asked for.
    """

    def __init__(self, total, desc="", enabled=None, stream=None, min_interval=0.2):
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = bool(enabled)
        self.total = int(total)
        self.desc = desc
        self.done = 0
        self.start = time.perf_counter()
        self._last = 0.0
        self.min_interval = min_interval

    def update(self, n):
        self.done += int(n)
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last >= self.min_interval or self.done >= self.total:
            self._last = now
            self._draw(now)

    def _draw(self, now):
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        frac = self.done / self.total if self.total else 1.0
        eta = (self.total - self.done) / rate if rate > 0 else float("inf")
        width = 24
        bar = "#" * int(width * frac) + "-" * (width - int(width * frac))
        eta_s = f"{eta:6.1f}s" if eta != float("inf") else "     ?"
        self.stream.write(f"\r{self.desc:<14.14} [{bar}] {self.done:>10,}/{self.total:,} "
                          f"{rate:>12,.0f} rows/s wall  ETA {eta_s}")
        self.stream.flush()

    def close(self):
        if self.enabled:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
