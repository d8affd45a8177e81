"""Streaming evaluation: feed rows or blocks, read every metric at any time."""
from collections import deque

import numpy as np
import scipy.sparse as sp

from omlc._validation import check_scores, check_Y
from omlc.metrics._conventions import resolve_conventions
from omlc.metrics._registry import (METRICS, ROW_COLUMNS, ROW_FUNCTIONS, block_stats,
                                    harmonic, label_counts, label_value, resolve_metrics)


class _Chunk:
    """Rows kept for a sliding window: their per-row values and, when label
    metrics are tracked, their label sets and per-label counts (to subtract
    exactly when the rows leave)."""

    __slots__ = ("values", "Y", "P", "counts")

    def __init__(self, values, Y, P, counts):
        self.values = values
        self.Y = Y
        self.P = P
        self.counts = counts

    @property
    def n(self):
        return self.values.shape[0]


class MetricAccumulator:
    """Running values of a set of metrics over a stream of labelled rows.

    Parameters
    ----------
    metrics : list of str, str or None
        Metric keys of ``METRICS`` and/or group names of ``GROUPS``
        (``"all"``, ``"example"``, ``"label"``, ``"ranking"``, ``"cost"``,
        ``"predictions"``, ``"scores"``).  None means all metrics.
    n_labels : int
        Width of every label set and score row.
    window : int or None
        If set, ``get`` reports the metrics over the last ``window`` rows only
        (exact, not exponentially decayed).  Otherwise over all rows so far.
    conventions : None, preset name or Conventions
        How undefined terms are scored (see ``Conventions``); single fields can
        be overridden by keyword, e.g. ``ranking_empty="zero"``.

    ``update(Y_true, Y_pred=None, scores=None)`` takes one row or a block:
    label sets as CSR/dense 0/1/lists of label lists, scores as a dense
    (n, n_labels) or 1-D array.  Predictions are required when a tracked metric
    reads them, scores likewise.  Without a window the state is a few sums per
    metric and three count vectors per label, whatever the stream length.
    """

    def __init__(self, metrics=None, n_labels=None, window=None, conventions=None,
                 **overrides):
        if n_labels is None:
            raise TypeError("n_labels is required")
        self.metrics = resolve_metrics(metrics)
        self.n_labels = int(n_labels)
        if self.n_labels < 0:
            raise ValueError("n_labels must be non-negative")
        if window is not None:
            window = int(window)
            if window <= 0:
                raise ValueError("window must be a positive number of rows")
        self.window = window
        self.conventions = resolve_conventions(conventions, **overrides)
        cols = []
        for m in self.metrics:
            for col in ROW_COLUMNS.get(m, ()):
                if col not in cols:
                    cols.append(col)
        self._columns = cols
        self._col_index = {c: i for i, c in enumerate(cols)}
        self._label_metrics = [m for m in self.metrics if METRICS[m].family == "label"]
        self.needs_predictions = any(METRICS[m].needs == "predictions" for m in self.metrics)
        self.needs_scores = any(METRICS[m].needs == "scores" for m in self.metrics)
        self.reset()

    def reset(self):
        """Forget every row seen."""
        k = len(self._columns)
        L = self.n_labels
        self._sums = np.zeros(k)
        self._counts = np.zeros(k, dtype=np.int64)
        self._tp = np.zeros(L, dtype=np.int64)
        self._n_pred = np.zeros(L, dtype=np.int64)
        self._n_true = np.zeros(L, dtype=np.int64)
        self._n_rows = 0
        self.rows_seen = 0
        self._chunks = deque()
        return self

    @property
    def n_rows(self):
        """Rows the current values are computed over (capped by the window)."""
        return self._n_rows

    # -- input ----------------------------------------------------------------

    def _check(self, Y_true, Y_pred, scores):
        L = self.n_labels
        Y = check_Y(Y_true, n_labels=L, name="Y_true")
        n = Y.shape[0]
        P = S = None
        if self.needs_predictions:
            if Y_pred is None:
                wanted = [m for m in self.metrics if METRICS[m].needs == "predictions"]
                raise ValueError(f"metrics {wanted} need predicted label sets (Y_pred)")
            P = check_Y(Y_pred, n_labels=L, name="Y_pred")
            if P.shape[0] != n:
                raise ValueError(f"Y_pred has {P.shape[0]} rows, but Y_true has {n}")
        if self.needs_scores:
            if scores is None:
                wanted = [m for m in self.metrics if METRICS[m].needs == "scores"]
                raise ValueError(f"metrics {wanted} need scores")
            if sp.issparse(scores):
                scores = scores.toarray()
            scores = np.asarray(scores, dtype=np.float64)
            if scores.ndim == 1 and n == 1:
                scores = scores.reshape(1, -1)
            S = check_scores(scores, n, L)
        return Y, P, S

    def _row_values(self, st):
        c = self.conventions
        values = np.empty((st.n, len(self._columns)), dtype=np.float64)
        for j, col in enumerate(self._columns):
            values[:, j] = ROW_FUNCTIONS[col](st, c)
        return values

    def update(self, Y_true, Y_pred=None, scores=None):
        """Add one row or a block of rows.  Returns ``self``."""
        Y, P, S = self._check(Y_true, Y_pred, scores)
        n = Y.shape[0]
        if n == 0:
            return self
        st = block_stats(Y, P, S, self.n_labels)
        values = self._row_values(st)
        counts = None
        if self._label_metrics:
            counts = (st.tp_label, st.pred_label, st.true_label)
            self._tp += counts[0]
            self._n_pred += counts[1]
            self._n_true += counts[2]
        self.rows_seen += n
        self._n_rows += n
        if self.window is None:
            self._add_values(values, 1)
        else:
            keep_sets = bool(self._label_metrics)
            self._chunks.append(_Chunk(values, Y if keep_sets else None,
                                       P if keep_sets else None, counts))
            self._evict()
        return self

    # -- state arithmetic -------------------------------------------------------

    def _add_values(self, values, sign):
        bad = np.isnan(values)
        if bad.any():
            self._sums += sign * np.where(bad, 0.0, values).sum(axis=0)
            self._counts += sign * (~bad).sum(axis=0)
        else:
            self._sums += sign * values.sum(axis=0)
            self._counts += sign * values.shape[0]

    def _counts_of(self, Y, P):
        if not self._label_metrics:
            return None
        return label_counts(Y, P, self.n_labels)

    def _add_label_counts(self, counts, sign):
        if counts is None:
            return
        self._tp += sign * counts[0]
        self._n_pred += sign * counts[1]
        self._n_true += sign * counts[2]

    def _evict(self):
        excess = self._n_rows - self.window
        while excess > 0:
            chunk = self._chunks[0]
            if chunk.n <= excess:
                self._chunks.popleft()
                self._add_label_counts(chunk.counts, -1)
                self._n_rows -= chunk.n
                excess -= chunk.n
                continue
            if chunk.Y is not None:
                leaving = self._counts_of(chunk.Y[:excess], chunk.P[:excess])
                self._add_label_counts(leaving, -1)
                chunk.Y, chunk.P = chunk.Y[excess:], chunk.P[excess:]
                chunk.counts = tuple(a - b for a, b in zip(chunk.counts, leaving))
            chunk.values = chunk.values[excess:]
            self._n_rows -= excess
            excess = 0

    def _means(self):
        if self.window is None:
            sums, counts = self._sums, self._counts
        else:
            k = len(self._columns)
            if self._chunks:
                V = np.concatenate([c.values for c in self._chunks]) if len(self._chunks) > 1 \
                    else self._chunks[0].values
            else:
                V = np.empty((0, k))
            bad = np.isnan(V)
            sums = np.where(bad, 0.0, V).sum(axis=0)
            counts = (~bad).sum(axis=0)
        means = np.full(len(self._columns), np.nan)
        np.divide(sums, counts, out=means, where=counts > 0)
        return means

    # -- output -----------------------------------------------------------------

    def get(self):
        """``{metric: value}`` over the rows seen (or the window).  A metric
        with no row to average (no rows yet, or all excluded) is NaN."""
        means = self._means()
        zd = self.conventions.zero_division
        out = {}
        for m in self.metrics:
            if m == "f1":
                out[m] = harmonic(means[self._col_index["precision"]],
                                  means[self._col_index["recall"]])
            elif m in self._col_index:
                out[m] = float(means[self._col_index[m]])
            elif self._n_rows == 0:
                out[m] = float("nan")
            else:
                out[m] = label_value(m, self._tp, self._n_pred, self._n_true, zd)
        return out

    def label_counts(self):
        """Per-label ``(tp, n_predicted, n_true)`` over the rows counted."""
        return self._tp.copy(), self._n_pred.copy(), self._n_true.copy()

    def merge(self, other):
        """Add ``other``'s rows to this accumulator, as if they had been fed
        here after this one's own rows.  Both must track the same metrics,
        labels, window and conventions.  Returns ``self``."""
        if not isinstance(other, MetricAccumulator):
            raise TypeError("can only merge another MetricAccumulator")
        for attr in ("metrics", "n_labels", "window", "conventions"):
            if getattr(self, attr) != getattr(other, attr):
                raise ValueError(f"cannot merge accumulators with different {attr}")
        self.rows_seen += other.rows_seen
        if self.window is None:
            self._sums += other._sums
            self._counts += other._counts
            self._add_label_counts((other._tp, other._n_pred, other._n_true), 1)
            self._n_rows += other._n_rows
            return self
        for chunk in other._chunks:
            counts = None if chunk.counts is None else tuple(a.copy() for a in chunk.counts)
            self._chunks.append(_Chunk(chunk.values.copy(), chunk.Y, chunk.P, counts))
            self._add_label_counts(counts, 1)
            self._n_rows += chunk.n
        self._evict()
        return self

    def __repr__(self):
        w = f", window={self.window}" if self.window else ""
        return (f"MetricAccumulator({self.metrics!r}, n_labels={self.n_labels}{w}, "
                f"rows={self._n_rows})")
