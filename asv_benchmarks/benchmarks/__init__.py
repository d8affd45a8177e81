"""omlc's asv suite.

asv clears PYTHONPATH, so `asv run --python=same` from a checkout that was
built in place (`python setup.py build_ext --inplace`, not pip-installed)
would not find omlc. In that case only, the checkout this suite lives in is
put on sys.path; an installed omlc (CI, asv-built environments) always wins.
"""
import sys
from pathlib import Path

try:
    import omlc  # noqa: F401
except ImportError:
    _root = Path(__file__).resolve().parents[2]
    if (_root / "omlc" / "__init__.py").is_file():
        sys.path.insert(0, str(_root))
