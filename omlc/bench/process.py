"""Running a bench step in its own Python subprocess, and measuring it there.

Every measured step runs in a fresh interpreter, one after the other, so that
a peak RSS belongs to one step only and no step warms another's heap. The
worker reports the wall time of the measured section (the step's own
figures; the parent adds the whole subprocess's wall time) and its peak RSS
(``VmHWM``). Memory-mapped pages that a pass touches count in RSS, so the
worker also samples the anonymous part (``RssAnon``) to show how much of the
peak is the model versus mapped data.
"""
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from omlc.bench import peers, steps

#: Prefixes the worker's result line, so that anything else a step prints on
#: stdout (a peer's chatter) cannot be taken for it.
MARK = "@@OMLC-BENCH@@"
TASKS = {**steps.TASKS, **peers.TASKS}


# --------------------------------------------------------------------- worker side

def status():
    """Current memory figures of this process in MB (Linux; {} elsewhere)."""
    out = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                    out[key] = int(rest.split()[0]) / 1024.0
    except OSError:
        pass
    return out


def peak_rss_mb():
    st = status()
    if "VmHWM" in st:
        return st["VmHWM"]
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class AnonSampler:
    """Samples RssAnon in a thread: VmHWM mixes model memory with mapped file
    pages, and there is no kernel high-water mark for the anonymous part."""

    def __init__(self, interval=0.02):
        self.interval = interval
        self.peak = 0.0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, status().get("RssAnon", 0.0))
            self.samples += 1
            self._stop.wait(self.interval)

    def __enter__(self):
        self._t0 = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, status().get("RssAnon", 0.0))
        # Code that holds the GIL (VW's C++ driver, for one) starves the
        # sampler; a peak from too few samples would be a guess, so drop it.
        expected = (time.perf_counter() - self._t0) / self.interval
        self.valid = self.samples >= 0.25 * expected


def worker(arg):
    """A step's subprocess: run the task its JSON spec names, print the result
    on one ``MARK``-prefixed line."""
    spec = json.loads(arg)
    base = status().get("VmRSS")
    with AnonSampler() as anon:
        out = TASKS[spec["task"]](spec)
    out["peak_anon_mb"] = anon.peak if anon.valid else None
    core = sys.modules.get("omlc._core.linear")
    if core is not None:
        # Kernels may be rebuilt in place while a long bench runs (shared
        # checkout): record which build each step actually ran.
        blob = Path(core.__file__).read_bytes()
        out["core_build"] = hashlib.sha256(blob).hexdigest()[:12]
    out["peak_rss_mb"] = peak_rss_mb()
    out["baseline_rss_mb"] = base
    sys.stdout.write(MARK + json.dumps(out) + "\n")
    sys.stdout.flush()


# --------------------------------------------------------------------- parent side

def spawn(task, spec, timeout=None):
    """Run one task in a fresh interpreter; its result dict (or {"error": ...})."""
    # The checkout this package is in comes first on the child's path, so the
    # child runs the same omlc as the parent even when built in place.
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-c",
           "import sys; from omlc.bench.process import worker; worker(sys.argv[1])",
           json.dumps(dict(spec, task=task))]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    wall = time.perf_counter() - t0
    for line in reversed(p.stdout.splitlines()):
        if line.startswith(MARK):
            out = json.loads(line[len(MARK):])
            out["process_seconds"] = wall
            # The machine is shared: the 1-minute load average when the step
            # started says how much the figure may be inflated.
            out["load_average"] = load
            return out
    tail = (p.stderr or "").strip().splitlines()[-5:]
    return {"error": f"exit {p.returncode}: " + " | ".join(tail)}


def best_of(task, spec, repeat, key, timeout=None):
    """Best-of-``repeat`` by ``key`` (the machine is shared: the minimum is the
    least disturbed run); the other runs' times are kept in ``all_<key>``."""
    runs = [spawn(task, spec, timeout) for _ in range(max(1, int(repeat)))]
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]
    best = min(ok, key=lambda r: r[key])
    if len(runs) > 1:
        best[f"all_{key}"] = [r.get(key) for r in ok]
    return best

