"""The results store's row helpers, for the reproductions not yet moved to
:mod:`omlc.experiments` (csdpp, boosting)."""
from omlc.experiments.store import append_row, duration, jsonable, load_rows, say  # noqa: F401
