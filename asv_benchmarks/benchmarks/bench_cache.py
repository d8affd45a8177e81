"""Opening the memory-mapped cache: time and peak memory must not scale with the data.

``setup_cache`` builds one rcv1-shaped entry (200,000 rows, ~15M nonzeros,
~180 MB) with the synthetic generator; the benchmarks then open it, which
should read only meta.json and the .npy headers.
"""
import os
import tempfile

import numpy as np

N_ROWS = 200_000



class CacheOpen:
    timeout = 600
    number = 1
    repeat = 10
    warmup_time = 0

    def setup_cache(self):
        from omlc.datasets.synthetic import make_rcv1_like
        root = os.path.abspath("omlc-asv-cache-root")
        ds = make_rcv1_like(N_ROWS, labels="topics", seed=0, cache_dir=root, chunk_size=50_000)
        return ds.meta["cache_dir"]

    def setup(self, entry):
        from omlc.io.cache import open_cache  # noqa: F401  (import cost outside the timing)
        self.entry = entry

    def time_open_cache(self, entry):
        from omlc.io.cache import open_cache
        open_cache(entry)

    def peakmem_open_cache(self, entry):
        from omlc.io.cache import open_cache
        ds = open_cache(entry)
        assert isinstance(ds.X.data, np.memmap)

    def time_open_and_slice_first_block(self, entry):
        # Touches only the first 10,000 rows' pages.
        from omlc.io.cache import open_cache
        ds = open_cache(entry)
        ds.X[:10_000].sum()

    def track_cache_megabytes(self, entry):
        return sum(os.path.getsize(os.path.join(entry, f)) for f in os.listdir(entry)) / 2**20

    track_cache_megabytes.unit = "MB"


class CacheWrite:
    timeout = 600
    number = 1
    repeat = 3
    warmup_time = 0

    def setup(self):
        from omlc.datasets.synthetic import make_multilabel_stream
        self.ds = make_multilabel_stream(100_000, n_features=20_000, n_labels=50, nnz_per_row=60,
                                         cardinality=3.0, seed=0)
        self.tmp = tempfile.TemporaryDirectory()

    def teardown(self):
        self.tmp.cleanup()

    def time_write_cache(self):
        from omlc.io.cache import write_cache
        write_cache(self.ds, os.path.join(self.tmp.name, f"e{np.random.default_rng().integers(1 << 62)}"))
