"""Seeded synthetic multi-label streams with a planted linear teacher.

Construction (one "world" per configuration, shared by every stream of it)
--------------------------------------------------------------------------
* **Vocabulary.** Feature popularity is Zipf-like over ranks,
  ``p(rank r) ∝ (r + 5) ** -1.0``; a seeded permutation maps ranks to column ids,
  so popular columns are scattered like terms in an alphabetic dictionary.
* **Latent topics.** Label ``l`` has a latent topic switched on independently in
  each document with probability ``q_l``; ``q`` follows a Zipf law over a
  random label order (capped at 0.5) and is calibrated (below) so the mean
  number of *labels* per row matches ``cardinality``.
* **Documents.** A document draws a target number of distinct terms ``ℓ``
  (lognormal, clipped to ``[1, max_nnz]``). Each active topic contributes
  Poisson(``keyword_rate``) tokens drawn uniformly from its own
  ``keywords_per_label`` keywords (mid-frequency columns); the rest are
  background tokens from the Zipf vocabulary, their count chosen so that the
  expected number of distinct terms is ``ℓ`` (the expected-distinct curve
  ``D(m) = Σ_j 1 - (1 - p_j)^m`` is inverted by interpolation). Repeated tokens
  are counted: value = ``(1 + log tf) · idf_j`` with ``idf_j = -log df_j`` from
  the model's document frequencies; rows are L2-normalised (and, for the
  rcv1-like streams, rounded to 6 decimals as the LIBSVM rcv1v2 files are).
* **Teacher.** ``W*`` (``d × L``) has, in column ``l``, weights in [0.5, 1.5]
  on label ``l``'s keywords and zeros elsewhere. A row has label ``l`` iff
  ``(x · w*_l) · exp(noise · ε) > τ``, where ``τ`` is half the median score
  of documents whose topic is active and ``ε ~ N(0, 1)`` (a function of the
  row's position and the label, so it is the same whatever the chunking). With ``noise = 0`` the labels are an exact
  linear-threshold function of ``x`` (learnable by a linear model); the latent
  topics only decide which keywords appear.
* **Calibration.** ``q`` is scaled by target/realised cardinality on a
  20,000-row pilot stream of the same world until they agree within 1 % (at
  most four rounds). Chance keyword hits put a floor under the cardinality
  that ``q`` can reach in a small vocabulary (most columns are some label's
  keywords) or a very noisy configuration; when ``q`` ends more than 5 % off,
  ``τ`` is moved to the pilot's score quantile that gives the target instead.

Determinism: the world depends on ``seed`` (and the label configuration), the
rows on ``(seed, stream, block)`` where a block is 1,000 consecutive rows, so
a stream does not depend on the chunk size used to generate it, and two streams
(``stream="train"`` / ``"test"``) of one world share the teacher.
"""
import hashlib
import json
import os
import shutil
import warnings
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from omlc._validation import check_fits, format_bytes
from omlc.io.atomic import replaced_on_success
from omlc.io.dataset import Dataset

__all__ = ["make_multilabel_stream", "make_rcv1_like", "rcv1_like_splits", "RCV1_LIKE",
           "GENERATOR_VERSION"]

GENERATOR_VERSION = 2
_BLOCK = 1000
_PILOT_ROWS = 20_000

RCV1_LIKE = {
    "n_features": 47_236, "n_train": 23_149, "n_test": 781_265, "nnz_per_row": 75.0,
    "labels": {"topics": (101, 3.241), "regions": (228, 1.312), "industries": (313, 0.696)},
}


def _stream_code(stream):
    if isinstance(stream, (int, np.integer)):
        if stream < 0:
            raise ValueError("stream must be a nonnegative int or a string")
        return int(stream)
    # Stable across processes and Python versions (unlike hash()).
    return zlib.crc32(str(stream).encode()) | (1 << 32)


def _splitmix64(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _hash_normal(keys, salt):
    """A standard normal per integer key, independent of how keys are batched."""
    with np.errstate(over="ignore"):
        k = keys.astype(np.uint64) * np.uint64(2) + np.uint64(salt & 0xFFFFFFFF) * np.uint64(0x100000001B3)
        h1 = _splitmix64(k)
        h2 = _splitmix64(k + np.uint64(1))
    u1 = ((h1 >> np.uint64(11)).astype(np.float64) + 0.5) * (1.0 / (1 << 53))
    u2 = (h2 >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def _alias_table(p):
    """Walker/Vose alias table: O(1) sampling from a fixed discrete law."""
    n = p.shape[0]
    scaled = p * n / p.sum()
    prob = np.zeros(n)
    alias = np.zeros(n, dtype=np.int64)
    small = [i for i in range(n) if scaled[i] < 1.0]
    large = [i for i in range(n) if scaled[i] >= 1.0]
    scaled = scaled.tolist()
    while small and large:
        s, g = small.pop(), large.pop()
        prob[s] = scaled[s]
        alias[s] = g
        scaled[g] = scaled[g] + scaled[s] - 1.0
        (small if scaled[g] < 1.0 else large).append(g)
    for i in large + small:
        prob[i] = 1.0
    return prob, alias


def _zipf_frequencies(n_labels, total, exponent, cap):
    """Zipf-shaped frequencies capped at ``cap`` that sum to ``total``."""
    base = (np.arange(n_labels) + 1.0) ** -exponent
    if total >= cap * n_labels:
        return np.full(n_labels, cap)
    lo, hi = 0.0, total / base[-1] + 1.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if np.minimum(mid * base, cap).sum() < total:
            lo = mid
        else:
            hi = mid
    return np.minimum(hi * base, cap)


class _World:
    """Everything shared by all rows of one configuration: vocabulary, topics, teacher."""

    def __init__(self, *, n_features, n_labels, nnz_per_row, cardinality, seed, salt=0,
                 noise=0.0, length_sigma=0.8, max_nnz=1000, label_exponent=1.0,
                 max_label_freq=0.5, keywords_per_label=15, keyword_rate=8.0,
                 round_digits=None, calibrate=True, pilot_rows=_PILOT_ROWS):
        d, L = int(n_features), int(n_labels)
        if d < 2 or L < 1:
            raise ValueError("need n_features >= 2 and n_labels >= 1")
        if not 0 < nnz_per_row < d:
            raise ValueError("nnz_per_row must be in (0, n_features)")
        if not 0 <= cardinality < L:
            raise ValueError("cardinality must be in [0, n_labels)")
        if not (isinstance(noise, (int, float, np.integer, np.floating))
                and np.isfinite(noise) and noise >= 0):
            raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
        self.d, self.L = d, L
        self.seed, self.salt = int(seed), int(salt)
        self.noise = float(noise)
        self.round_digits = round_digits
        self._pilot_rows = int(pilot_rows)
        self.max_nnz = int(min(max_nnz, d // 2 if d >= 4 else d))
        rng = np.random.default_rng([self.seed, self.salt, 0x57A7])

        # Vocabulary: popularity by rank, scattered over column ids.
        ranks = np.arange(d, dtype=np.float64)
        pr = (ranks + 5.0) ** -1.0
        pr /= pr.sum()
        self.rank_to_col = rng.permutation(d).astype(np.int64)
        self.p_rank = pr
        self.alias_prob, self.alias_idx = _alias_table(pr)

        # Document length: lognormal with the requested mean (before clipping).
        self.sigma = float(length_sigma)
        self.mu = float(np.log(nnz_per_row) - 0.5 * self.sigma ** 2)

        # Topics and keywords.
        s = int(max(1, min(keywords_per_label, d // 10)))
        # Keywords are mid-to-rare columns: frequent enough to be learnt, rare
        # enough that chance hits in off-topic documents seldom cross the threshold.
        lo = min(d - s, 10 + int(0.02 * d))
        hi = max(lo + s, int(0.5 * d))
        self.keywords = np.empty((L, s), dtype=np.int64)
        for l in range(L):
            self.keywords[l] = self.rank_to_col[lo + rng.choice(hi - lo, size=s, replace=False)]
        self.keyword_weights = rng.uniform(0.5, 1.5, size=(L, s))
        self.keyword_rate = float(keyword_rate)
        self.label_order = rng.permutation(L)
        freq = _zipf_frequencies(L, cardinality, label_exponent, max_label_freq)
        self.q = np.empty(L)
        self.q[self.label_order] = freq
        self.target_cardinality = float(cardinality)
        W = sp.coo_matrix((self.keyword_weights.ravel(),
                           (self.keywords.ravel(), np.repeat(np.arange(L), s))), shape=(d, L))
        self.W = W.tocsr()
        self.W.sum_duplicates()

        # Expected distinct terms after m background tokens, for inverting D(m).
        grid = np.unique(np.round(np.geomspace(1, 50 * self.max_nnz + 10, 300))).astype(np.float64)
        log1m = np.log1p(-pr)
        D = np.empty(grid.shape[0])
        for a in range(0, grid.shape[0], 25):
            g = grid[a:a + 25]
            D[a:a + 25] = (-np.expm1(np.outer(g, log1m))).sum(axis=1)
        self.grid_m, self.grid_D = grid, D
        kd = s * (1.0 - np.exp(-self.keyword_rate / s))
        self.topic_distinct = kd
        m_mean = float(np.interp(nnz_per_row, D, grid))
        df = -np.expm1(m_mean * log1m)                      # P(rank r in a document)
        idf_rank = -np.log(np.clip(df, 1e-12, 1 - 1e-9))
        self.idf = np.empty(d)
        self.idf[self.rank_to_col] = idf_rank
        self.tau = 1.0
        if calibrate:
            self._calibrate()

    # -- row generation ------------------------------------------------------
    def _block_tokens(self, stream_code, block, n_rows):
        """(row, column) of every token of rows [0, n_rows) of one block, plus the
        (row, label) pairs of active topics. Only this draws random numbers."""
        rng = np.random.default_rng([self.seed, self.salt, stream_code, block])
        L, s = self.L, self.keywords.shape[1]
        length = np.clip(np.rint(rng.lognormal(self.mu, self.sigma, n_rows)), 1, self.max_nnz)
        active = rng.random((n_rows, L)) < self.q
        t_row, t_lab = np.nonzero(active)
        n_kw = rng.poisson(self.keyword_rate, t_row.shape[0])
        kw_row = np.repeat(t_row, n_kw)
        kw_lab = np.repeat(t_lab, n_kw)
        kw_col = self.keywords[kw_lab, rng.integers(0, s, kw_row.shape[0])]
        n_topics = np.bincount(t_row, minlength=n_rows)
        bg_target = np.maximum(1.0, length - n_topics * self.topic_distinct)
        m = np.maximum(1, np.rint(np.interp(bg_target, self.grid_D, self.grid_m))).astype(np.int64)
        bg_row = np.repeat(np.arange(n_rows), m)
        k = rng.integers(0, self.d, bg_row.shape[0])
        u = rng.random(bg_row.shape[0])
        rank = np.where(u < self.alias_prob[k], k, self.alias_idx[k])
        bg_col = self.rank_to_col[rank]
        rows = np.concatenate([bg_row, kw_row])
        cols = np.concatenate([bg_col, kw_col])
        return rows, cols, t_row, t_lab

    def rows(self, stream, start, stop, *, with_topics=False):
        """CSR ``(X, Y)`` of rows [start, stop) of a stream (any range; blocks are
        generated whole and sliced, so results do not depend on the range)."""
        code = _stream_code(stream)
        b0, b1 = start // _BLOCK, (stop + _BLOCK - 1) // _BLOCK
        rows_l, cols_l, tr_l, tl_l = [], [], [], []
        for b in range(b0, b1):
            n = _BLOCK
            r, c, tr, tl = self._block_tokens(code, b, n)
            off = b * _BLOCK - start
            keep = (r + off >= 0) & (r + off < stop - start)
            rows_l.append(r[keep] + off)
            cols_l.append(c[keep])
            tk = (tr + off >= 0) & (tr + off < stop - start)
            tr_l.append(tr[tk] + off)
            tl_l.append(tl[tk])
        n = stop - start
        rows = np.concatenate(rows_l)
        cols = np.concatenate(cols_l)
        # Sorting (row, column) keys both orders the CSR and counts repeated
        # tokens; 32-bit keys sort about twice as fast when they fit.
        kdt = np.uint32 if n * self.d < 2 ** 32 else np.int64
        keys = rows.astype(kdt) * kdt(self.d) + cols.astype(kdt)
        del rows, cols
        keys.sort()
        first = np.empty(keys.shape[0], dtype=bool)
        first[:1] = True
        np.not_equal(keys[1:], keys[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        uniq = keys[starts].astype(np.int64)
        tf = np.diff(np.append(starts, keys.shape[0]))
        del keys, first, starts
        r = uniq // self.d
        c = (uniq - r * self.d).astype(np.int32)
        vals = (1.0 + np.log(tf)) * self.idf[c]
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
        norms = np.sqrt(np.add.reduceat(vals * vals, indptr[:-1]))
        vals /= norms[r]
        if self.round_digits is not None:
            np.round(vals, self.round_digits, out=vals)
            nz = vals != 0
            if not nz.all():
                vals, c, r = vals[nz], c[nz], r[nz]
                indptr[1:] = np.cumsum(np.bincount(r, minlength=n))
        X = sp.csr_matrix((vals, c, indptr), shape=(n, self.d))
        Y, scores = self._labels(X, start, code)
        if with_topics:
            return X, Y, scores, np.concatenate(tr_l), np.concatenate(tl_l)
        return X, Y

    def _scores(self, X, start, code):
        """Teacher scores: the clean ones (COO) and the noisy values labels use."""
        S = (X @ self.W).tocoo()
        score = S.data.copy()
        if self.noise > 0:
            key = (S.row.astype(np.int64) + start) * self.L + S.col
            # Multiplicative (log-normal) noise: zero scores stay zero and the
            # perturbation is symmetric around τ on the log scale.
            score *= np.exp(self.noise * _hash_normal(key, code ^ (self.seed << 1) ^ self.salt))
        return S, score

    def _labels(self, X, start, code):
        S, score = self._scores(X, start, code)
        hit = score > self.tau
        n = X.shape[0]
        rr, cc = S.row[hit], S.col[hit]
        order = np.lexsort((cc, rr))
        rr, cc = rr[order], cc[order]
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rr, minlength=n), out=indptr[1:])
        Y = sp.csr_matrix((np.ones(cc.shape[0], np.int32), cc.astype(np.int32), indptr),
                          shape=(n, self.L))
        return Y, S

    def _calibrate(self):
        # τ from the clean teacher's scores on documents whose topic is active;
        # the same pilot then gives the realised cardinality (noise is symmetric
        # around τ, so the clean count is close enough for the first step).
        n = self._pilot_rows
        noise, self.noise = self.noise, 0.0
        self.tau = 0.0
        X, Y, S, tr, tl = self.rows("pilot", 0, n, with_topics=True)
        topic_keys = tr.astype(np.int64) * self.L + tl
        score_keys = S.row.astype(np.int64) * self.L + S.col
        on_topic = np.isin(score_keys, topic_keys)
        self.tau = float(np.median(S.data[on_topic])) / 2.0 if on_topic.any() else 0.1
        self.noise = noise
        card = (S.data > self.tau).sum() / n
        for _ in range(4):
            if card <= 0 or abs(card / self.target_cardinality - 1.0) < 0.01:
                break
            self.q = np.minimum(self.q * (self.target_cardinality / card), 0.95)
            card = self.rows("pilot", 0, n)[1].nnz / n
        if card > 0 and abs(card / self.target_cardinality - 1.0) > 0.05:
            # The topic rates cannot get there: in a small vocabulary most
            # columns are some label's keywords, so chance hits set a floor
            # (and heavy noise a ceiling). The threshold can: put τ between the
            # pilot's k-th and (k+1)-th largest noisy scores, k = target · rows.
            # Configurations that calibrate through q never come here, so
            # their streams are unchanged.
            X, _ = self.rows("pilot", 0, n)
            score = np.sort(self._scores(X, 0, _stream_code("pilot"))[1])[::-1]
            k = int(round(self.target_cardinality * n))
            if 0 < k < score.shape[0] and score[k] < score[k - 1]:
                self.tau = float(0.5 * (score[k - 1] + score[k]))
                card = float((score > self.tau).sum()) / n
        self.pilot_cardinality = float(card)
        if card > 0 and abs(card / self.target_cardinality - 1.0) > 0.05:
            # Only when fewer (row, label) pairs than the target have any
            # score at all: no threshold reaches the cardinality asked for.
            warnings.warn(f"synthetic stream: cardinality {card:.3f} instead of "
                          f"{self.target_cardinality:.3f} (chance keyword hits in a small or "
                          f"noisy configuration); lower noise or raise n_features",
                          RuntimeWarning, stacklevel=3)

    def describe(self):
        return {"tau": self.tau, "pilot_cardinality": getattr(self, "pilot_cardinality", None),
                "topic_rates": self.q.tolist(), "mu": self.mu,
                "sigma": self.sigma, "noise": self.noise,
                "keywords_per_label": int(self.keywords.shape[1]),
                "keyword_rate": self.keyword_rate, "max_nnz": self.max_nnz,
                "generator_version": GENERATOR_VERSION}


def _check_n_samples(n_samples):
    if isinstance(n_samples, float) and n_samples.is_integer():
        n_samples = int(n_samples)        # 1e6 is a count
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) \
            or n_samples < 0:
        raise ValueError(f"n_samples must be a non-negative integer, got {n_samples!r}")
    return int(n_samples)


def make_multilabel_stream(n_samples=10_000, n_features=1_000, n_labels=20, nnz_per_row=30,
                           cardinality=2.0, noise=0.0, seed=0, *, stream=0):
    """A small in-memory stream with a planted sparse linear teacher.

    Rows are nonnegative, L2-normalised tf-idf-like vectors with about
    ``nnz_per_row`` nonzeros; each label is a threshold of a linear function of
    a few (``min(20, d/10)``) features, with about ``cardinality`` labels per
    row and Zipf-skewed label frequencies (see the module docstring). ``noise``
    is the standard deviation of a log-normal factor on the teacher scores. The same
    ``seed`` with a different ``stream`` gives fresh rows from the same teacher
    (e.g. a held-out set). Deterministic per ``(seed, stream)``.
    """
    n_samples = _check_n_samples(n_samples)
    # In memory: X's values and column ids (12 bytes per stored value), Y's
    # label ids, both indptrs -- refused up front when it cannot fit.
    check_fits(n_samples * (12 * nnz_per_row + 4 * cardinality + 16),
               f"make_multilabel_stream(n_samples={n_samples:,}) (about {nnz_per_row} values "
               f"and {cardinality} labels a row, in memory)")
    world = _World(n_features=n_features, n_labels=n_labels, nnz_per_row=nnz_per_row,
                   cardinality=cardinality, seed=seed, noise=noise,
                   max_nnz=max(4 * nnz_per_row, 10))
    Xs, Ys = [], []
    step = 100 * _BLOCK
    for a in range(0, n_samples, step):
        X, Y = world.rows(stream, a, min(a + step, n_samples))
        Xs.append(X)
        Ys.append(Y)
    if Xs:
        X = sp.vstack(Xs, format="csr")
        Y = sp.vstack(Ys, format="csr")
    else:
        X = sp.csr_matrix((0, n_features))
        Y = sp.csr_matrix((0, n_labels), dtype=np.int32)
    X.indices = X.indices.astype(np.int32, copy=False)
    Y.indices = Y.indices.astype(np.int32, copy=False)
    Y.indptr = Y.indptr.astype(X.indptr.dtype, copy=False)
    return Dataset(X, Y, name=f"synthetic-multilabel-seed{seed}-{stream}",
                   source="omlc.datasets.make_multilabel_stream",
                   meta={"generator": "make_multilabel_stream", "seed": seed, "stream": stream,
                         "n_features": n_features, "n_labels": n_labels,
                         "nnz_per_row": nnz_per_row, "cardinality": cardinality,
                         **world.describe()})


_WORLDS = {}


def _rcv1_world(labels, seed):
    if labels not in RCV1_LIKE["labels"]:
        raise ValueError(f"labels must be one of {sorted(RCV1_LIKE['labels'])}, got {labels!r}")
    key = (labels, int(seed))
    if key not in _WORLDS:
        L, card = RCV1_LIKE["labels"][labels]
        _WORLDS[key] = _World(n_features=RCV1_LIKE["n_features"], n_labels=L,
                              nnz_per_row=RCV1_LIKE["nnz_per_row"], cardinality=card, seed=seed,
                              salt=zlib.crc32(labels.encode()), noise=0.3, round_digits=6)
    return _WORLDS[key]


def make_rcv1_like(n_samples=781_265, labels="topics", seed=0, cache_dir=None, libsvm_path=None,
                   chunk_size=50_000, *, stream="test", refresh=False):
    """An rcv1v2-shaped stream, generated chunk by chunk into the omlc cache.

    d = 47,236; ≈ 75 nonzeros per row (lognormal lengths clipped to [1, 1000]);
    Zipf-like term popularity; unit-norm tf-idf values rounded to 6 decimals;
    ``labels`` = ``"topics"`` (101 labels, cardinality ≈ 3.24), ``"regions"``
    (228, ≈ 1.31) or ``"industries"`` (313, ≈ 0.70), Zipf-skewed label
    frequencies, labels from a planted sparse linear teacher with score noise.
    Rows depend on ``(seed, labels, stream)`` only (not on ``chunk_size``);
    the teacher on ``(seed, labels)``, so ``stream="train"`` and ``"test"``
    are distinct samples of one learnable problem (see :func:`rcv1_like_splits`).

    Only one chunk is in memory at a time; the result is the memory-mapped cache
    entry (a second call just reopens it; ``refresh=True`` regenerates). If the
    cache root cannot be written, the stream is generated in memory instead
    (with one warning).
    ``libsvm_path`` also writes the stream as LIBSVM text (from the cache, chunk
    by chunk; ``.gz``/``.bz2``/``.xz`` names are compressed).
    """
    from omlc.io.cache import FORMAT_VERSION, CacheWriter, MemoryWriter, get_cache_dir, open_or_build

    n_samples = _check_n_samples(n_samples)
    if chunk_size <= 0:
        raise ValueError("chunk_size must be positive")
    L, card = RCV1_LIKE["labels"].get(labels, (None, None))
    if L is None:
        raise ValueError(f"labels must be one of {sorted(RCV1_LIKE['labels'])}, got {labels!r}")
    spec = {"generator": "rcv1-like", "version": GENERATOR_VERSION, "n_samples": n_samples,
            "labels": labels, "seed": int(seed), "stream": str(stream)}
    key = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
    safe_stream = "".join(ch if ch.isalnum() else "_" for ch in str(stream))[:20]
    # The cache format version is in the name so that entries of two omlc
    # versions sit side by side instead of replacing each other.
    directory = (get_cache_dir(cache_dir) / "synthetic"
                 / f"rcv1like-{labels}-{safe_stream}-n{n_samples}-s{seed}-v{GENERATOR_VERSION}"
                   f"-c{FORMAT_VERSION}-{key}")
    name = f"rcv1-like-{labels}-{stream}"

    # What the stream takes (12 bytes a stored value, 4 a label, 16 a row):
    # refused up front, with the figure, where it cannot be held.
    need = n_samples * (12 * RCV1_LIKE["nnz_per_row"] + 4 * card + 16)
    what = f"make_rcv1_like(n_samples={n_samples:,})"

    def build(target):
        if target is None:
            check_fits(need, f"{what} in memory")
        else:
            from omlc.io.cache import CacheUnwritableError
            root = Path(target).parent
            while not root.exists() and root != root.parent:
                root = root.parent
            free = shutil.disk_usage(root).free
            if need > free:
                raise CacheUnwritableError(f"{what} would need about {format_bytes(need)} on "
                                           f"disk, {format_bytes(free)} are free at {root}")
        world = _rcv1_world(labels, seed)
        kwargs = dict(name=name, source="omlc.datasets.make_rcv1_like", source_key=key,
                      label_names=[f"{labels[:-1]}{i:03d}" for i in range(L)],
                      meta=dict(spec, **world.describe()))
        if target is None:  # the cache cannot be written: in memory
            w = MemoryWriter(RCV1_LIKE["n_features"], L, **kwargs)
        else:
            w = CacheWriter(target, RCV1_LIKE["n_features"], L, on_exists="keep", **kwargs)
        with w:
            step = max(_BLOCK, (int(chunk_size) // _BLOCK) * _BLOCK)
            for a in range(0, n_samples, step):
                X, Y = world.rows(stream, a, min(a + step, n_samples))
                w.append(X, Y)
                del X, Y
            return w.close()

    ds = open_or_build(directory, build, refresh=refresh, source_key=key)
    if libsvm_path is not None:
        _dump_in_chunks(ds, libsvm_path, chunk_size)
    return ds


def _dump_in_chunks(ds, path, chunk_size):
    from omlc.io.libsvm import dump_libsvm

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".part-{path.name}-{os.getpid()}")
    suffix = path.suffix.lower()
    if suffix in (".gz", ".bz2", ".xz"):
        # Keep the compression suffix so dump_libsvm picks the codec from the name.
        tmp = path.with_name(f".part-{os.getpid()}-{path.name}")
    with replaced_on_success(tmp, path):
        if suffix in (".gz", ".bz2", ".xz"):
            import bz2
            import gzip
            import lzma
            opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}[suffix]
            fh = opener(tmp, "wb")
        else:
            fh = open(tmp, "wb")
        with fh:
            n = ds.X.shape[0]
            for a in range(0, n, chunk_size):
                b = min(a + chunk_size, n)
                dump_libsvm(ds.X[a:b], ds.Y[a:b], fh)


def rcv1_like_splits(labels="topics", seed=0, *, cache_dir=None, chunk_size=50_000,
                     n_train=None, n_test=None):
    """``(train, test)`` rcv1v2-shaped streams of one world: 23,149 and 781,265 rows
    (overridable), drawn from different row seeds but the same teacher."""
    n_train = RCV1_LIKE["n_train"] if n_train is None else n_train
    n_test = RCV1_LIKE["n_test"] if n_test is None else n_test
    train = make_rcv1_like(n_train, labels, seed, cache_dir, chunk_size=chunk_size, stream="train")
    test = make_rcv1_like(n_test, labels, seed, cache_dir, chunk_size=chunk_size, stream="test")
    return train, test


# ------------------------------------------------- the command line's stream spec

#: The default stream of ``omlc run``: rcv1-like sparsity, small enough for seconds.
DEFAULT_STREAM = dict(n_samples=60_000, n_features=20_000, n_labels=50, nnz_per_row=60,
                      cardinality=3.0, noise=0.5)
_SPEC_KEYS = {"n": "n_samples", "d": "n_features", "L": "n_labels", "l": "n_labels",
              "nnz": "nnz_per_row", "card": "cardinality", "noise": "noise", "stream": "stream"}


def parse_stream_spec(spec):
    """The :func:`make_multilabel_stream` parameters of a ``synthetic[:k=v,...]``
    spec (``omlc run --data``): n, d, L, nnz, card, noise, stream over
    ``DEFAULT_STREAM``. Unset nnz and card shrink to fit a small d and L.
    ValueError, starting with the spec, names every problem."""
    params = dict(DEFAULT_STREAM)
    given = set()
    if ":" in spec:
        for item in spec.split(":", 1)[1].split(","):
            if not item.strip():
                continue
            k, eq, v = item.partition("=")
            key = _SPEC_KEYS.get(k.strip())
            if key is None:
                raise ValueError(f"{spec}: unknown synthetic option {k.strip()!r} "
                                 f"(use n, d, L, nnz, card, noise, stream)")
            as_float = key in ("cardinality", "noise")
            try:
                value = float(v)
                if not as_float:
                    if value != int(value):
                        raise ValueError
                    value = int(value)
            except (ValueError, OverflowError):
                raise ValueError(f"{spec}: {k.strip()} must be "
                                 f"{'a number' if as_float else 'an integer'}, got {v.strip()!r}") \
                    from None
            params[key] = value
            given.add(key)
    elif spec != "synthetic":
        raise ValueError(f"{spec}: write synthetic options after a colon, "
                         f"e.g. synthetic:n=5000,d=2000,L=20")
    n, d, L = params["n_samples"], params["n_features"], params["n_labels"]
    if "nnz_per_row" not in given and d >= 2:
        # The default row length (60, rcv1-like) shrinks with a small vocabulary:
        # at most a tenth of d, so rows stay sparse and the spec stays valid.
        params["nnz_per_row"] = max(1, min(params["nnz_per_row"], d // 10))
    if "cardinality" not in given and L >= 1:
        params["cardinality"] = min(params["cardinality"], L / 2)
    problems = []
    if n < 1:
        problems.append("n (rows) must be at least 1")
    if d < 2:
        problems.append("d (features) must be at least 2")
    if L < 1:
        problems.append("L (labels) must be at least 1")
    if not 0 < params["nnz_per_row"] < d:
        problems.append(f"nnz must be between 1 and d - 1 = {d - 1}")
    if not 0 <= params["cardinality"] < L:
        problems.append(f"card must be in [0, L) = [0, {L})")
    if params.get("stream", 0) < 0:
        problems.append("stream must be >= 0")
    if params["noise"] < 0:
        problems.append("noise must be >= 0")
    if problems:
        raise ValueError(f"{spec}: " + "; ".join(problems))
    return params
