"""omlc's asv suite.

asv clears PYTHONPATH, so `asv run --python=same` from a checkout that was
built in place (`python setup.py build_ext --inplace`, not pip-installed)
would not find omlc. In that case, the checkout this suite lives in is put on
sys.path; otherwise an installed omlc (CI, asv-built environments) wins —
`asv continuous` must time the omlc it built for each commit, not the working
tree. ``OMLC_ASV_CHECKOUT=1`` makes this checkout win over an installed omlc
(e.g. a git worktree beside an editable install of another checkout).
"""
import importlib.util
import os
import sys
from pathlib import Path

_root = Path(__file__).resolve().parents[2]
_mine = (_root / "omlc" / "__init__.py").is_file()
if _mine and os.environ.get("OMLC_ASV_CHECKOUT", "") not in ("", "0"):
    sys.path.insert(0, str(_root))
elif _mine and importlib.util.find_spec("omlc") is None:
    sys.path.insert(0, str(_root))
