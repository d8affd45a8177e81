"""Exceptions raised by omlc."""


class DataFormatError(ValueError):
    """A data file (or in-memory stream) is malformed.

    The message always names where the problem is: ``path:line: problem (token 'tok')``.
    ``path``, ``line`` (1-based, or ``None``) and ``token`` are kept as attributes so
    callers can report them their own way.
    """

    def __init__(self, problem, path=None, line=None, token=None):
        self.problem = problem
        self.path = None if path is None else str(path)
        self.line = line
        self.token = token
        where = self.path if self.path is not None else "<input>"
        if line is not None:
            where = f"{where}:{line}"
        msg = f"{where}: {problem}"
        if token is not None:
            tok = token if isinstance(token, str) else repr(token)
            if len(tok) > 60:
                tok = tok[:57] + "..."
            msg += f" (token {tok!r})"
        super().__init__(msg)

    def __reduce__(self):
        return (type(self), (self.problem, self.path, self.line, self.token))


class DataSourceError(ValueError):
    """A data source named by a string (``omlc run --data``, see
    :mod:`omlc.datasets.sources`) cannot be used: no such file or data set, its
    files absent, or a pairing of files that cannot work. The message names the
    option and says what to do; the command line reports it as a usage error."""


class NotFittedError(ValueError, AttributeError):
    """A learner was asked to predict before it saw any data.

    When scikit-learn is already imported, the error raised is also an
    instance of ``sklearn.exceptions.NotFittedError`` (a subclass of both is
    made on first use), so scikit-learn's own checks and ``except`` clauses
    see it, while omlc never imports scikit-learn itself."""

    def __new__(cls, *args, **kwargs):
        if cls is NotFittedError:
            cls = _with_sklearn() or cls
        return super().__new__(cls, *args, **kwargs)


_SKLEARN_NOT_FITTED = []


def _with_sklearn():
    import sys
    mod = sys.modules.get("sklearn.exceptions")
    if mod is None:
        return None
    if not _SKLEARN_NOT_FITTED:
        base = mod.NotFittedError
        _SKLEARN_NOT_FITTED.append(type("NotFittedError", (NotFittedError, base),
                                        {"__module__": __name__, "__qualname__": "NotFittedError",
                                         "__reduce__": lambda self: (NotFittedError, self.args)}))
    return _SKLEARN_NOT_FITTED[0]


class ModelFileError(ValueError):
    """A model file given to :func:`omlc.load_model` is missing, malformed or
    fails validation. The message is one line: ``path: problem``."""

    def __init__(self, problem, path=None):
        self.problem = problem
        self.path = None if path is None else str(path)
        super().__init__(f"{self.path if self.path is not None else '<model>'}: {problem}")

    def __reduce__(self):
        return (type(self), (self.problem, self.path))


class UnscaledDataWarning(UserWarning):
    """A learner whose default step assumes features of order 1 sees values far
    beyond that (given once per model, on its first block)."""
