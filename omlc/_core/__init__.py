"""omlc's compiled (Cython) core.

Every compiled module is imported through this package, so this is where an
unbuilt source tree is caught. The common case: after ``pip install .`` a user
runs ``python -m omlc`` (or ``import omlc``) from the clone's root. Python puts
the current folder first on ``sys.path``, so the clone's ``omlc/`` -- Python
files without the compiled extensions -- hides the installed, compiled copy.
Instead of a ``ModuleNotFoundError`` from deep inside the package, the first
use of compiled code raises :class:`CoreNotBuiltError` saying why and what to
do (the command line prints it as one line).
"""
import importlib.machinery
import json
from pathlib import Path

_HERE = Path(__file__).resolve().parent


class CoreNotBuiltError(ImportError):
    """omlc's compiled extensions are missing from the ``omlc`` package in use."""


def _is_built(core_dir):
    return any((core_dir / ("rowstream" + suffix)).is_file()
               for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def _installed_copies():
    """Folders of other installed ``omlc`` packages whose core is compiled."""
    try:
        from importlib.metadata import distributions
    except ImportError:  # pragma: no cover - Python < 3.8
        return []
    found = []
    for dist in distributions(name="omlc"):
        cands = []
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
        except ValueError:
            direct = {}
        url = direct.get("url", "")
        if direct.get("dir_info", {}).get("editable") and url.startswith("file://"):
            cands.append(Path(url[len("file://"):]) / "omlc")
        cands.append(Path(dist.locate_file("omlc")))
        for c in cands:
            try:
                c = c.resolve()
            except OSError:
                continue
            if c != _HERE.parent and c not in found and _is_built(c / "_core"):
                found.append(c)
    return found


def _message():
    where = _HERE.parent
    others = _installed_copies()
    if others:
        return (f"the omlc folder at {where} is an uncompiled source tree and hides the installed "
                f"omlc at {others[0]} (Python looks in the current folder first): run omlc from "
                f"another folder, or build this checkout in place with 'pip install -e .'")
    return (f"omlc's compiled core is not built in {where}: install with 'pip install .' and run "
            f"from another folder, or build this checkout in place with 'pip install -e .'")


if not _is_built(_HERE):
    raise CoreNotBuiltError(_message())
