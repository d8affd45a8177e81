"""Metric throughput on rcv1v2-shaped random data (L = 101, cardinality ≈ 3.2).

``time_all_metrics`` streams 100k rows in 8,192-row blocks through one
``MetricAccumulator`` holding every metric, the way the prequential protocol
does (update then get per block).
"""
import numpy as np
import scipy.sparse as sp

from omlc import metrics

N_LABELS = 101
BLOCK = 8192


def _label_sets(rng, n, cardinality):
    mask = rng.random((n, N_LABELS)) < cardinality / N_LABELS
    return sp.csr_matrix(mask.astype(np.int32))


class AllMetrics:
    params = [100_000]
    param_names = ["n_rows"]

    def setup(self, n_rows):
        rng = np.random.default_rng(0)
        self.Y = _label_sets(rng, n_rows, 3.2)
        self.P = _label_sets(rng, n_rows, 3.0)
        # Rounded scores so that the tie handling is part of the measured work.
        self.S = np.round(rng.standard_normal((n_rows, N_LABELS)), 1)
        self.blocks = [(self.Y[a:a + BLOCK], self.P[a:a + BLOCK], self.S[a:a + BLOCK])
                       for a in range(0, n_rows, BLOCK)]

    def time_all_metrics(self, n_rows):
        acc = metrics.MetricAccumulator("all", N_LABELS)
        for Yb, Pb, Sb in self.blocks:
            acc.update(Yb, Pb, Sb)
            acc.get()

    def time_ranking_metrics(self, n_rows):
        acc = metrics.MetricAccumulator("ranking", N_LABELS)
        for Yb, _, Sb in self.blocks:
            acc.update(Yb, scores=Sb)
        acc.get()

    def time_topk_metrics(self, n_rows):
        acc = metrics.MetricAccumulator("topk", N_LABELS)
        for Yb, _, Sb in self.blocks:
            acc.update(Yb, scores=Sb)
        acc.get()

    def time_label_set_metrics(self, n_rows):
        acc = metrics.MetricAccumulator("predictions", N_LABELS)
        for Yb, Pb, _ in self.blocks:
            acc.update(Yb, Pb)
        acc.get()

    def time_windowed_all_metrics(self, n_rows):
        acc = metrics.MetricAccumulator("all", N_LABELS, window=10_000)
        for Yb, Pb, Sb in self.blocks:
            acc.update(Yb, Pb, Sb)
            acc.get()

    def time_evaluate_all_batch(self, n_rows):
        metrics.evaluate_all(self.Y, self.P, self.S)

    def track_rows_per_second_all_metrics(self, n_rows):
        import time
        t0 = time.perf_counter()
        self.time_all_metrics(n_rows)
        return n_rows / (time.perf_counter() - t0)

    track_rows_per_second_all_metrics.unit = "rows/s"
