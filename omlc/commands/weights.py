"""``--weights`` of ``omlc run`` and ``omlc train``: importance weights per row.

``--weights`` alone reads the instance weights an ARFF data file carries
(Weka/MEKA ``{w}`` after a row; a row without one weighs 1); ``--weights FILE``
reads one weight per line (any data source; the companion of a LIBSVM file).
The weights belong to the rows the learner learns: the stream of a prequential
run, the training rows of a train-test run or of ``omlc train``. Checked before
any learning: one per row, finite, >= 0 (errors name the file and line).
"""
from omlc.commands import UsageError

#: What ``--weights`` given without a file stands for.
FROM_DATA = "<from the data file>"

HELP = ("importance weights of the rows learned (scikit-learn's sample_weight, Vowpal "
        "Wabbit's importance weights; 0 = skip the row): alone, the instance weights an ARFF "
        "--data file carries ({w} after a row); --weights FILE: one weight per line, in the "
        "rows' order (for LIBSVM data, or any source)")


def add_argument(parser):
    parser.add_argument("--weights", nargs="?", const=FROM_DATA, default=None, metavar="FILE",
                        help=HELP)


def check(args, kind, what):
    """Before data is read: --weights fits the source."""
    if args.weights is None:
        return
    if args.weights == FROM_DATA:
        from omlc.io.files import sniff_format
        if kind != "file" or sniff_format(what) != "arff":
            shown = what if kind == "file" else args.data
            raise UsageError(f"--weights without a file reads the instance weights of an ARFF "
                             f"--data file; {shown} is not one: give --weights FILE (one "
                             f"weight per line)")
        return
    from omlc.datasets.sources import check_file
    check_file(args.weights, "--weights")


def load(args, what, n_rows):
    """The weights of the ``n_rows`` rows learned (None without --weights)."""
    if args.weights is None:
        return None
    if args.weights == FROM_DATA:
        import warnings

        from omlc.io.arff import load_arff
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)   # dropped string attributes: said once
            w = load_arff(what, weights=True).sample_weight
        if w.shape[0] != n_rows:                           # pragma: no cover - same file
            raise UsageError(f"--weights: {what} has {w.shape[0]:,} rows, the data {n_rows:,}")
        return w
    from omlc.io.weights import load_weights
    return load_weights(args.weights, n_rows)


def describe(w):
    """A few words on the weights for the header line."""
    import numpy as np
    zero = int(np.count_nonzero(w == 0))
    return (f"weighted rows (mean weight {float(w.mean()):.3g}"
            + (f", {zero:,} of weight 0" if zero else "") + ")")
