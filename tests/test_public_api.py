"""Every name ``omlc`` advertises resolves, lazily (import omlc loads no kernel)."""
import subprocess
import sys

import omlc


def test_every_public_name_resolves():
    for name in omlc.__all__:
        assert getattr(omlc, name) is not None, name


def test_import_is_lazy():
    code = "import sys, omlc; print(any(m.startswith('omlc._core') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
