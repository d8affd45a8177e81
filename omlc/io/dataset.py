"""The container every reader, the cache and the generators return."""
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import scipy.sparse as sp


@dataclass
class Dataset:
    """A multi-label data set: features ``X`` and label sets ``Y``, both CSR.

    ``X`` is ``n_samples x n_features`` (float64 unless asked otherwise, sorted
    indices, no duplicates); ``Y`` is the ``n_samples x n_labels`` 0/1 indicator.
    Unpacks as ``X, Y = dataset``.
    """

    X: sp.csr_matrix
    Y: sp.csr_matrix
    feature_names: Optional[List[str]] = None
    label_names: Optional[List[str]] = None
    name: Optional[str] = None
    source: Optional[str] = None
    meta: Dict[str, Any] = field(default_factory=dict)

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
