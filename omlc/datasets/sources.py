"""Data sources named by one string, as ``omlc run/train/predict --data`` take them.

A source is ``synthetic[:n=..,d=..,L=..,nnz=..,card=..,noise=..,stream=..]`` (a
seeded generated stream), ``rcv1-like[:stream=..,n=..,labels=..,seed=..]`` (the
rcv1v2-shaped generator, :func:`omlc.datasets.synthetic.make_rcv1_like`, built
once into the cache and memory-mapped), the name of a registered data set, or a
data file.
:func:`resolve` checks a source without reading it; :func:`load_for_protocol`
reads it for an evaluation protocol (its stream and its train/test split);
:func:`open_source` reads one split of it for learning or predicting.
Problems are :class:`omlc.exceptions.DataSourceError`: one line naming the
option and what to do.
"""
import os

from omlc.exceptions import DataSourceError
from omlc.io.files import DATA_SUFFIXES

__all__ = ["is_synthetic", "synthetic_params", "resolve", "check_present", "check_file",
           "has_split", "load_for_protocol", "open_source", "TRAIN_FRACTION"]

#: A synthetic stream's train-test split: its first 70% trains, the rest tests.
TRAIN_FRACTION = 0.7


def is_synthetic(text):
    return text == "synthetic" or text.startswith("synthetic:")


def synthetic_params(text, option="--data"):
    """The generator parameters of a ``synthetic[:...]`` source (the policy
    lives in :func:`omlc.datasets.synthetic.parse_stream_spec`)."""
    from omlc.datasets.synthetic import parse_stream_spec
    try:
        return parse_stream_spec(text)
    except ValueError as exc:
        raise DataSourceError(f"{option} {exc}") from None


def is_rcv1_like(text):
    return text == "rcv1-like" or text.startswith("rcv1-like:")


#: ``rcv1-like`` spec keys: the stream's name (its rows; ``train`` and ``test``
#: are the rcv1v2 split's, any other name another sample of the same world),
#: its rows, the label set and the world's seed.
_RCV1_KEYS = ("stream", "n", "labels", "seed")


def rcv1_like_params(text, option="--data"):
    """``{stream, n, labels, seed}`` of an ``rcv1-like[:k=v,...]`` source (None
    where not given: the split in use decides)."""
    from omlc.datasets.synthetic import RCV1_LIKE
    params = dict.fromkeys(_RCV1_KEYS)
    if ":" in text:
        for item in filter(str.strip, text.split(":", 1)[1].split(",")):
            k, _, v = (t.strip() for t in item.partition("="))
            if k not in _RCV1_KEYS or not v:
                raise DataSourceError(f"{option} {text}: unknown rcv1-like option {item.strip()!r} "
                                      f"(use {', '.join(k + '=..' for k in _RCV1_KEYS)})")
            if k in ("n", "seed"):
                if not v.isdigit() or (k == "n" and int(v) < 1):
                    raise DataSourceError(f"{option} {text}: {k} must be a "
                                          f"{'positive' if k == 'n' else 'non-negative'} "
                                          f"integer, got {v!r}")
                v = int(v)
            elif k == "labels" and v not in RCV1_LIKE["labels"]:
                raise DataSourceError(f"{option} {text}: labels must be one of "
                                      f"{', '.join(sorted(RCV1_LIKE['labels']))}, got {v!r}")
            params[k] = v
    return params


def _rcv1_like(params, split="test", seed=0):
    """The cached rcv1-like stream of ``params`` (its ``stream``, else ``split``)."""
    from omlc.datasets.synthetic import RCV1_LIKE, make_rcv1_like
    stream = params["stream"] or ("train" if split == "train" else "test")
    n = params["n"] or (RCV1_LIKE["n_train"] if stream == "train" else RCV1_LIKE["n_test"])
    return make_rcv1_like(n, params["labels"] or "topics",
                          seed if params["seed"] is None else params["seed"], stream=stream)


def looks_like_path(text):
    return os.sep in text or bool(os.altsep and os.altsep in text) or \
        text.lower().endswith(DATA_SUFFIXES) or text.startswith(".")


def check_file(path, option):
    if os.path.isdir(path):
        raise DataSourceError(f"{option} {path}: is a directory; give a data file (.arff, or "
                              f"LIBSVM .svm/.txt, optionally .gz/.bz2/.xz) or a registered data "
                              f"set name (omlc datasets list)")
    if not os.path.exists(path):
        raise DataSourceError(f"{option} {path}: no such file")


def resolve(text, option="--data"):
    """What ``text`` names, checked without reading any data:
    ``("synthetic", params)``, ``("file", path)`` or ``("registry", info)``
    (a :class:`~omlc.datasets.registry.DatasetInfo`; whether its files are
    present is :func:`check_present`'s question)."""
    if is_synthetic(text):
        return "synthetic", synthetic_params(text, option)
    if is_rcv1_like(text):
        return "rcv1-like", rcv1_like_params(text, option)
    if os.path.isfile(text):
        return "file", text
    from omlc.datasets import registry
    try:
        return "registry", registry.get_dataset_info(text)
    except KeyError:
        if os.path.exists(text) or looks_like_path(text):
            check_file(text, option)
        near = registry.suggest_names(text)
        hint = f"did you mean {' or '.join(repr(n) for n in near)}? " if near else ""
        raise DataSourceError(f"{option} {text}: no such file and no registered data set of that "
                              f"name; {hint}'omlc datasets list' shows the names") from None


def check_present(info, splits=(None,), option="--data"):
    """DataSourceError unless the registered set's files for ``splits`` are
    in the data folders; the message says how to get them."""
    from omlc.datasets import registry
    try:
        for split in splits:
            registry.find_files(info.name, split=split)
    except FileNotFoundError:
        dirs = ", ".join(str(p) for p, _ in registry.search_locations())
        fetchable = info.files and all(f.url for f in info.files)
        todo = (f"download it with 'omlc datasets fetch {info.name}'" if fetchable else
                f"it has no download address (see 'omlc datasets info {info.name}'); put its "
                f"files in one of those folders")
        raise DataSourceError(f"{option} {info.name}: its files are not in {dirs}; {todo}, or "
                              f"set OMLC_DATA_DIR to a folder that holds them") from None


def has_split(info):
    return {"train", "test"} <= set(info.splits)


def load_for_protocol(source, protocol, seed=0, test=None):
    """``(stream, train, test)``, each an ``(X, Y)`` pair or None, for a
    resolved ``source``: the prequential stream (a registered set's train then
    test split), and the train-test pair (a synthetic stream's first
    :data:`TRAIN_FRACTION` / the rest; a file with the ``test`` file, read at
    the training file's widths and LIBSVM index base)."""
    kind, what = source
    if kind == "synthetic":
        from omlc.datasets import make_multilabel_stream
        data = make_multilabel_stream(seed=seed, **what)
        n_train = int(TRAIN_FRACTION * data.n_samples)
        return ((data.X, data.Y), (data.X[:n_train], data.Y[:n_train]),
                (data.X[n_train:], data.Y[n_train:]))
    if kind == "rcv1-like":
        if protocol != "train-test":
            return tuple(_rcv1_like(what, "test", seed)), None, None
        return None, tuple(_rcv1_like(what, "train", seed)), tuple(_rcv1_like(what, "test", seed))
    from omlc import datasets
    if kind == "file":
        data = datasets.load(what)
        if protocol != "train-test":
            return tuple(data), None, None
        return None, tuple(data), tuple(_load_paired_test(data, what, test))
    name = what.name if hasattr(what, "name") else what
    info = datasets.get_dataset_info(name)
    if not has_split(info):
        return tuple(datasets.load(name)), None, None
    train = datasets.load(name, split="train")
    test = datasets.load(name, split="test")
    import scipy.sparse as sp
    stream = (sp.vstack([train.X, test.X]).tocsr(), sp.vstack([train.Y, test.Y]).tocsr())
    return stream, tuple(train), tuple(test)


def _load_paired_test(data, train_path, test_path):
    from omlc import datasets
    from omlc.io.files import sniff_format
    if sniff_format(test_path) != "libsvm":
        return datasets.load(test_path)
    opts = dict(n_labels=data.n_labels, n_features=data.n_features)
    meta = data.meta or {}
    if meta.get("format") == "libsvm" and "zero_based" in meta:
        # The test set follows the training set's index base (decided by
        # "auto" on the training file): the same feature id must land in the
        # same column.
        opts["zero_based"] = bool(meta["zero_based"])
    from omlc.exceptions import DataFormatError
    try:
        return datasets.load(test_path, **opts)
    except DataFormatError as exc:
        if "index 0 in a one-based file" not in str(exc):
            raise
        raise DataSourceError(
            f"--test {test_path} uses feature index 0 but --data {train_path} does not (read as "
            f"one-based): the two files would put a feature id in different columns. Write both "
            f"files with the same index base ({exc})") from None


def open_source(text, split, seed=0, option="--data", widths=None):
    """One split of a source for learning or predicting: ``(X, Y, label_names)``
    (``label_names`` None unless the data names its labels). ``split`` is used
    where a registered set has it; ``widths`` ``(n_features, n_labels)`` reads
    a LIBSVM file at a model's widths."""
    kind, what = resolve(text, option)
    if kind == "synthetic":
        from omlc.datasets import make_multilabel_stream
        data = make_multilabel_stream(seed=seed, **what)
        return data.X, data.Y, None
    if kind == "rcv1-like":
        data = _rcv1_like(what, split, seed)
        return data.X, data.Y, None
    from omlc import datasets
    if kind == "file":
        opts = {}
        if widths is not None:
            from omlc.io.files import sniff_format
            if sniff_format(what) == "libsvm":
                opts = dict(n_features=widths[0], n_labels=widths[1])
        data = datasets.load(what, **opts)
    else:
        split = split if split in what.splits else None
        check_present(what, (split,), option)
        data = datasets.load(what.name, split=split)
    names = data.label_names
    from omlc.io.dataset import NumberedNames
    if names is not None and isinstance(names, NumberedNames):
        names = None
    return data.X, data.Y, names
