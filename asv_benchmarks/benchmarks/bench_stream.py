"""Memory of a streaming prequential pass over a memory-mapped cache entry.

``peakmem_`` is the benchmark process's peak RSS, which counts the pages of
the mapped cache that the pass touched; ``track_cache_mb`` is the entry's size
on disk, the figure the peak should stay well below. ``peakmem_open_only``
is the floor (interpreter, imports, an opened entry).
"""
import os

from . import common


class StreamFromCache:
    timeout = 900
    param_names = ["learner"]
    params = [["falt-m1", "pa-br"]]

    def setup_cache(self):
        return common.rcv1_like(common.STREAM_ROWS, stream="test").meta["cache_dir"]

    def setup(self, entry, learner):
        from omlc.evaluate import prequential  # noqa: F401  (imports outside the measurement)
        from omlc.io.cache import open_cache
        self.ds = open_cache(entry)

    def peakmem_prequential(self, entry, learner):
        from omlc.evaluate import prequential
        prequential(common.make_learner(learner), self.ds,
                    metrics=("micro_f1", "hamming_loss", "ranking_loss"))

    def peakmem_open_only(self, entry, learner):
        self.ds.X.shape  # noqa: B018 - opening the entry is what is measured

    def track_cache_mb(self, entry, learner):
        return sum(os.path.getsize(os.path.join(entry, f)) for f in os.listdir(entry)) / 1e6

    track_cache_mb.unit = "MB"
