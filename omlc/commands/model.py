"""``omlc train`` and ``omlc predict``: learn a data source into a model file,
and write a saved model's label sets for a data source."""
import os
import sys

from omlc.commands import UsageError, weights
from omlc.commands.run import _check_learners
from omlc.datasets.sources import open_source, resolve


def _persistence():
    import omlc
    try:
        return omlc.save, omlc.load_model
    except AttributeError:
        raise UsageError("this omlc cannot write model files yet (omlc.save is missing)") \
            from None


def _check_common(args):
    if args.block_size < 1:
        raise UsageError(f"--block-size must be at least 1, got {args.block_size}")
    if args.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {args.seed}")


def train(args):
    specs = args.learners or [["falt", {}]]
    if len(specs) != 1:
        raise UsageError("omlc train learns one model: give one --learner")
    (name, learner), = _check_learners(specs)
    _check_common(args)
    if args.passes < 1:
        raise UsageError(f"--passes must be at least 1, got {args.passes}")
    folder = os.path.dirname(os.path.abspath(args.model_out))
    if not os.path.isdir(folder):
        raise UsageError(f"--model-out {args.model_out}: folder {folder} does not exist")
    if os.path.isdir(args.model_out):
        raise UsageError(f"--model-out {args.model_out}: is a directory")
    save, _ = _persistence()
    from omlc.persistence import unsavable_learners
    if type(learner).__name__ in unsavable_learners():
        raise UsageError(f"--learner {name}: {unsavable_learners()[type(learner).__name__]}; "
                         f"it cannot be saved to a model file yet")
    kind, what = resolve(args.data)
    weights.check(args, kind, what)
    import warnings
    with warnings.catch_warnings():
        if args.weights is not None:
            warnings.filterwarnings("ignore", message=".*carry instance weights")
        X, Y, _ = open_source(args.data, "train", args.seed)
    n = X.shape[0]
    w = weights.load(args, what, n)
    if w is not None and w.size and not w.any():
        raise UsageError("--weights: every weight is 0; there is nothing to learn")
    from omlc.preprocessing import ScaledLearner, choose_scaling, describe_scaling, scaler_for
    scaling, why = choose_scaling(X, args.scale)
    print(f"training {name} on {n:,} rows, {X.shape[1]:,} features, {Y.shape[1]} labels"
          + (f", {args.passes} passes" if args.passes > 1 else "")
          + (" (shuffled)" if args.shuffle else "")
          + f"; scaling: {describe_scaling(scaling, why)}"
          + (", fitted on these rows, saved with the model" if scaling != "none" else "")
          + (f"; {weights.describe(w)}" if w is not None else ""), file=sys.stderr)
    from omlc._progress import Progress
    from omlc._validation import check_random_state
    # As omlc run's train-test protocol: the scaler's statistics are the
    # training rows' (all of them, before the first step), so every pass and
    # every later prediction sees the same scaling.
    scaler = None if scaling == "none" else scaler_for(scaling).fit(X)
    rng = check_random_state(args.seed) if args.shuffle else None
    if args.shuffle and "random_state" in learner.get_params():
        learner.set_params(random_state=args.seed)
    with warnings.catch_warnings():
        # the scaling is decided above and said in the header line
        from omlc.exceptions import UnscaledDataWarning
        warnings.simplefilter("ignore", UnscaledDataWarning)
        with Progress(n * args.passes, name, enabled=False if args.quiet else None) as bar:
            for _ in range(args.passes):
                order = rng.permutation(n) if rng is not None else None
                for a in range(0, n, args.block_size):
                    b = min(n, a + args.block_size)
                    rows = slice(a, b) if order is None else order[a:b]
                    Xb = X[rows] if scaler is None else scaler.transform(X[rows])
                    learner.partial_fit(Xb, Y[rows], n_labels=Y.shape[1],
                                        sample_weight=None if w is None else w[rows])
                    bar.update(b - a)
    save(learner if scaler is None else ScaledLearner(learner, scaler), args.model_out)
    print(f"wrote {args.model_out}", file=sys.stderr)
    return 0


def _label_text(ids, names):
    if names is None:
        return ",".join(map(str, ids))
    return ",".join(names[i] for i in ids)


def predict(args):
    _check_common(args)
    _, load_model = _persistence()
    if not os.path.isfile(args.model):
        if os.path.isdir(args.model):
            raise UsageError(f"--model {args.model}: is a directory, not a model file")
        raise UsageError(f"--model {args.model}: no such file")
    if args.out != "-":
        folder = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(folder):
            raise UsageError(f"--out {args.out}: folder {folder} does not exist")
    model = load_model(args.model)
    if not getattr(model, "is_fitted", False):
        raise UsageError(f"--model {args.model}: the model has not learned anything")
    d, L = model.n_features_in_, model.n_labels_
    X, Y, names = open_source(args.data, "test", args.seed, widths=(d, L))
    if X.shape[1] != d or (Y is not None and Y.shape[1] != L):
        raise UsageError(f"--data {args.data}: {X.shape[1]:,} features and "
                         f"{Y.shape[1] if Y is not None else '?'} labels, but the model in "
                         f"{args.model} was trained on {d:,} features and {L} labels")
    if args.ids:
        names = None
    elif names is not None and len(names) != L:
        names = None
    n = X.shape[0]
    what = type(model).__name__
    if hasattr(model, "scaler_"):
        what = f"{type(model.learner).__name__} behind its {type(model.scaler_).__name__}"
    print(f"predicting {n:,} rows with {what} from {args.model}", file=sys.stderr)
    import numpy as np

    from omlc._progress import Progress
    out, tmp = (sys.stdout, None) if args.out == "-" else _open_for_rows(args.out)
    try:
        with Progress(n, "predict", enabled=False if args.quiet else None) as bar:
            for a in range(0, n, args.block_size):
                b = min(n, a + args.block_size)
                D = model.decision_function(X[a:b])
                lines = []
                for row in D:
                    ids = np.flatnonzero(row > 0)
                    text = _label_text(ids, names)
                    if args.scores:
                        text += "\t" + " ".join(f"{j}:{v:.6g}" for j, v in enumerate(row))
                    lines.append(text)
                out.write("\n".join(lines) + ("\n" if lines else ""))
                bar.update(b - a)
    except BaseException:
        if tmp is not None:
            out.close()
            os.unlink(tmp)
        raise
    if tmp is not None:
        out.close()
        os.replace(tmp, args.out)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(args.out, 0o666 & ~umask)      # mkstemp made it private
        print(f"wrote {args.out} ({n:,} rows)", file=sys.stderr)
    return 0


def _open_for_rows(path):
    # Written under a temporary name and renamed when complete: a crash never
    # leaves a truncated prediction file under the final name.
    import tempfile
    fd, tmp = tempfile.mkstemp(prefix=".omlc-predict-", dir=os.path.dirname(os.path.abspath(path)))
    return os.fdopen(fd, "w", buffering=1 << 20), tmp

