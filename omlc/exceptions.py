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


class NotFittedError(ValueError, AttributeError):
    """A learner was asked to predict before it saw any data."""


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
