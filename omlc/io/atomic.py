"""Files written whole or not at all: the temp-then-rename every writer of
omlc uses (caches, model files, generated data sets, downloads)."""
import os
from contextlib import contextmanager


@contextmanager
def replaced_on_success(tmp, dest):
    """Write ``tmp`` inside the block; when the block ends normally ``tmp`` is
    renamed over ``dest`` (atomic within one file system), on any exception
    (KeyboardInterrupt too) it is removed. A reader never sees a half-written
    ``dest``, and a failed write leaves no stray temp file."""
    try:
        yield tmp
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
