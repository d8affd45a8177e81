"""Slow, obvious twin of omlc._core.hashing: zlib's CRC-32 and Python loops."""
import zlib

import numpy as np


def hash_row(x, n_features):
    if not all(isinstance(k, str) for k in x) or \
            not all(isinstance(v, (int, float)) and not isinstance(v, np.generic) for v in x.values()):
        return None
    idx, val = [], []
    for k, v in x.items():
        h = zlib.crc32(k.encode("utf-8"))
        idx.append(h % n_features)
        val.append(-float(v) if h & (1 << 31) else float(v))
    order = sorted(range(len(idx)), key=lambda i: idx[i])  # stable
    out_i, out_v = [], []
    for i in order:                                          # collisions summed in dict order
        if out_i and out_i[-1] == idx[i]:
            out_v[-1] += val[i]
        else:
            out_i.append(idx[i])
            out_v.append(val[i])
    return np.array(out_i, dtype=np.int32), np.array(out_v, dtype=np.float64)


def label_ids(y, ids):
    if any(k not in ids for k in y):
        return None
    return np.array(sorted(ids[k] for k, v in y.items() if v), dtype=np.int32)
