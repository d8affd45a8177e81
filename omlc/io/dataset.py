"""The container every reader, the cache and the generators return."""
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Dict, Optional
from typing import Sequence as SequenceType

import scipy.sparse as sp

__all__ = ["Dataset", "NumberedNames"]


class NumberedNames(Sequence):
    """The names ``str(start), str(start + 1), ..., str(stop - 1)``, made on demand.

    LIBSVM labels are numbers, and extreme multi-label files use ids in the
    millions: a list with one string per possible id would cost memory and
    time in the largest id rather than in the data. This sequence costs two
    integers; indexing, ``len``, ``in``, ``index`` and comparison with another
    ``NumberedNames`` are O(1), comparison with a list is element-wise.
    """

    __slots__ = ("start", "stop")

    def __init__(self, start, stop):
        start, stop = int(start), int(stop)
        if start < 0 or stop < start:
            raise ValueError(f"need 0 <= start <= stop, got {start}, {stop}")
        self.start, self.stop = start, stop

    def __len__(self):
        return self.stop - self.start

    def __getitem__(self, i):
        if isinstance(i, slice):
            r = range(self.start, self.stop)[i]
            if r.step == 1:
                return NumberedNames(r.start, max(r.start, r.stop))
            return [str(k) for k in r]
        n = len(self)
        i = i.__index__()
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("NumberedNames index out of range")
        return str(self.start + i)

    def __iter__(self):
        return map(str, range(self.start, self.stop))

    def _number(self, name):
        # Only the canonical spelling is a member: "007" is not the name of 7.
        if isinstance(name, str) and name.isascii() and name.isdigit() and str(int(name)) == name:
            k = int(name)
            if self.start <= k < self.stop:
                return k
        return None

    def __contains__(self, name):
        return self._number(name) is not None

    def index(self, name, start=0, stop=None):
        k = self._number(name)
        if k is not None:
            i = k - self.start
            lo, hi, _ = slice(start, stop).indices(len(self))
            if lo <= i < hi:
                return i
        raise ValueError(f"{name!r} is not in the names")

    def count(self, name):
        return int(name in self)

    def __eq__(self, other):
        if isinstance(other, NumberedNames):
            return len(self) == len(other) and (not len(self) or self.start == other.start)
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return f"NumberedNames({self.start}, {self.stop})"

    def tolist(self):
        return list(self)


@dataclass
class Dataset:
    """A multi-label data set: features ``X`` and label sets ``Y``, both CSR.

    ``X`` is ``n_samples x n_features`` (float64 unless asked otherwise, sorted
    indices, no duplicates); ``Y`` is the ``n_samples x n_labels`` 0/1 indicator.
    ``sample_weight``: the rows' instance weights where the reader was asked
    for them (``load_arff(..., weights=True)``), else None.
    Unpacks as ``X, Y = dataset``. ``feature_names``/``label_names`` are lists
    of strings, or a :class:`NumberedNames` where the names are the ids
    (LIBSVM labels).
    """

    X: sp.csr_matrix
    Y: sp.csr_matrix
    feature_names: Optional[SequenceType[str]] = None
    label_names: Optional[SequenceType[str]] = None
    name: Optional[str] = None
    source: Optional[str] = None
    meta: Dict[str, Any] = field(default_factory=dict)
    sample_weight: Optional[Any] = None

    def __iter__(self):
        yield self.X
        yield self.Y

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def n_labels(self):
        return self.Y.shape[1]

    def stats(self):
        """Shape and label statistics, as SOURCES.md tables report them."""
        Y = self.Y
        n = Y.shape[0]
        counts = Y.getnnz(axis=1)
        rows = Y.tocsr()
        # Label sets are compared as the byte strings of their sorted indices.
        rows.sort_indices()
        distinct = len({rows.indices[rows.indptr[i]:rows.indptr[i + 1]].tobytes() for i in range(n)})
        return {
            "n_samples": n,
            "n_features": self.X.shape[1],
            "n_labels": Y.shape[1],
            "nnz_features": int(self.X.nnz),
            "cardinality": float(counts.mean()) if n else 0.0,
            "density": float(counts.mean() / Y.shape[1]) if n and Y.shape[1] else 0.0,
            "distinct_labelsets": distinct,
            "rows_without_labels": int((counts == 0).sum()),
        }

    def __repr__(self):
        name = self.name or self.source or "Dataset"
        return (f"<{name}: {self.X.shape[0]} samples, {self.X.shape[1]} features, "
                f"{self.Y.shape[1]} labels>")
