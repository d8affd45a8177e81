"""omlc._core.hashing agrees exactly with its twin (tests/reference_hashing.py)."""
import zlib

import numpy as np
import pytest

import reference_hashing as ref
from omlc._core import hashing


def _names(rng, n):
    pool = ["w1", "é", "日本語", "", "a b", "x" * 300, "\x00z", "🙂"]
    return [pool[i] if i < len(pool) else f"w{rng.integers(10 ** 6)}" for i in rng.permutation(max(n, 8))[:n]]


def test_crc32_is_zlibs():
    for s in ["", "a", "w123", "é日本語🙂", "x" * 1000]:
        assert hashing.crc32(s) == zlib.crc32(s.encode("utf-8"))
    rng = np.random.default_rng(1)     # every length around the 4-byte steps
    for n in range(0, 14):
        s = "".join(chr(c) for c in rng.integers(1, 0x2FF, n))
        assert hashing.crc32(s) == zlib.crc32(s.encode("utf-8"))


@pytest.mark.parametrize("n_features", [1, 7, 2 ** 16, 2 ** 31 - 1])
@pytest.mark.parametrize("seed", range(5))
def test_hash_row_matches_the_twin(n_features, seed):
    rng = np.random.default_rng(seed)
    for n in (0, 1, 2, 3, 4, 5, 40, 200, 257, 600):   # (past 256: the sort's heap buffers)
        names = _names(rng, n)
        x = {k: (float(rng.normal()) if i % 3 else int(rng.integers(-5, 5)))
             for i, k in enumerate(names)}
        got, want = hashing.hash_row(x, n_features), ref.hash_row(x, n_features)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert got[0].dtype == np.int32 and got[1].dtype == np.float64
        assert np.all(np.diff(got[0]) > 0)             # collisions summed: unique ids
        # What the row check makes of the unsummed ids: the same arrays, bit for bit.
        raw_i = [zlib.crc32(k.encode()) for k in x]
        raw_v = [(-float(v) if h & (1 << 31) else float(v)) for h, v in zip(raw_i, x.values())]
        from omlc._validation import check_row
        _, ci, cv = check_row(np.array([h % n_features for h in raw_i], dtype=np.int64),
                              np.array(raw_v, dtype=np.float64), n_features)
        np.testing.assert_array_equal(got[0], ci)
        np.testing.assert_array_equal(got[1], cv)


def test_hash_row_hands_odd_rows_back():
    assert hashing.hash_row({1: 1.0}, 8) is None            # a non-str name
    assert hashing.hash_row({"colour": "red"}, 8) is None   # a string value (one-hot)
    assert hashing.hash_row({"a": np.float32(1)}, 8) is None
    with pytest.raises(ValueError, match="n_features"):
        hashing.hash_row({"a": 1.0}, 0)


def test_label_ids_matches_the_twin():
    rng = np.random.default_rng(0)
    ids = {f"L{k}": k for k in range(101)}
    for _ in range(50):
        y = {f"L{k}": bool(rng.random() < 0.1) for k in rng.permutation(101)[:rng.integers(0, 101)]}
        np.testing.assert_array_equal(hashing.label_ids(y, ids), ref.label_ids(y, ids))
    assert hashing.label_ids({"new": True}, ids) is None
    assert hashing.label_ids({}, ids).shape == (0,)


def test_label_ids_memo_gives_the_lookups_answer():
    """With a memo: the same ids as without, for a y of the remembered key
    objects, of equal but other key objects, reordered, shorter, with a new
    label (None), and after ids grew or were replaced."""
    ids = {f"L{k}": k for k in range(6)}
    names = list(ids)
    memo = []
    rng = np.random.default_rng(0)
    for step in range(60):
        kind = step % 6
        if kind == 0:
            y = {n: bool(rng.integers(2)) for n in names}
        elif kind == 1:
            y = {"".join(n): bool(rng.integers(2)) for n in names}     # equal, other objects
        elif kind == 2:
            y = {n: bool(rng.integers(2)) for n in names[::-1]}
        elif kind == 3:
            y = {n: True for n in names[:3]}
        elif kind == 4:
            y = {**{n: bool(rng.integers(2)) for n in names}, "new": True}
        else:
            y = {n: bool(rng.integers(2)) for n in names}
            if step % 12 == 5:
                ids = dict(ids)                                          # replaced
            else:
                ids[f"G{step}"] = len(ids)                               # grew
                names.append(f"G{step}")
        want = ref.label_ids(y, ids)
        got = hashing.label_ids(y, ids, memo)
        if want is None:
            assert got is None
        else:
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(hashing.label_ids(y, ids, memo) if got is not None else
                                      np.zeros(0), got if got is not None else np.zeros(0))


def test_label_ids_memo_is_rebuilt_at_powers_of_two_misses():
    """Label dicts with new key objects every row (names parsed afresh) miss
    the memo every row: it is rebuilt at the 1st, 2nd, 4th, 8th... miss only,
    the answers stay the lookups'; a stream that then keeps its key objects
    hits it again."""
    ids = {f"L{k}": k for k in range(5)}
    memo = []
    rng = np.random.default_rng(3)
    rebuilt = []
    for step in range(40):
        y = {"".join(["L", str(k)]): bool(rng.integers(2)) for k in range(5)}   # fresh keys
        before = memo[2] if memo else None
        np.testing.assert_array_equal(hashing.label_ids(y, ids, memo), ref.label_ids(y, ids))
        rebuilt.append(memo[2] is not before)
        assert memo[4] == step + 1
    assert [i for i, r in enumerate(rebuilt) if r] == [0, 1, 2, 4, 8, 16, 32]
    keys = list(memo[2])                       # the remembered objects from now on
    for _ in range(5):
        y = {k: bool(rng.integers(2)) for k in keys}
        np.testing.assert_array_equal(hashing.label_ids(y, ids, memo), ref.label_ids(y, ids))
        assert memo[4] == 40                   # hits: no miss counted
