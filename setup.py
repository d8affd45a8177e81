"""Build script: compiles every ``omlc/_core/*.pyx`` with a plain C compiler.

``OMLC_DEBUG_BUILD=1`` turns on bounds checking and Python division semantics so
that an out-of-range access in a kernel raises instead of corrupting memory;
``OMLC_SANITIZE=address`` compiles the extensions with AddressSanitizer (and its
LeakSanitizer), to be run with the sanitizer runtime preloaded. CI runs the
kernel tests once in both modes together (see ``.ci/run``).
"""
import glob
import os
import shutil
import sys
import sysconfig

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

DEBUG = os.environ.get("OMLC_DEBUG_BUILD", "0") not in ("", "0")
SANITIZE = os.environ.get("OMLC_SANITIZE", "")
NATIVE = os.environ.get("OMLC_NATIVE", "0") not in ("", "0")
MODE_FILE = os.path.join("build", ".omlc_build_mode")


def _mode_changed():
    # Cython and setuptools only compare timestamps, so switching between debug
    # and release directives must force a full rebuild or stale objects survive.
    mode = ("debug" if DEBUG else "release") + (f"+{SANITIZE}" if SANITIZE else "") + \
        ("+native" if NATIVE else "") + "+no-auto-pickle"   # a directive changed: rebuild
    try:
        with open(MODE_FILE) as fh:
            previous = fh.read().strip()
    except OSError:
        previous = None
    os.makedirs("build", exist_ok=True)
    with open(MODE_FILE, "w") as fh:
        fh.write(mode)
    return previous is not None and previous != mode


class BuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        if FORCE:
            self.force = True
        if self.parallel is None:
            # The extensions are independent: compile them on every core
            # (``-j N`` on the command line still wins).
            self.parallel = os.cpu_count() or 1

    def build_extension(self, ext):
        if getattr(self, "editable_mode", False) and not self.force and self._reuse(ext):
            return
        super().build_extension(ext)

    def _reuse(self, ext):
        """``pip install -e`` builds into a fresh temporary folder, so setuptools
        would compile every extension again right after ``pip install .`` (or an
        in-place build) made the same ones. A compiled module at least as new
        as its C source, from a build of the same mode (``_mode_changed``
        forces a rebuild otherwise), is copied instead."""
        target = self.get_ext_fullpath(ext.name)
        rel = os.path.relpath(target, self.build_lib)
        plain_lib = os.path.join("build", f"lib.{sysconfig.get_platform()}-"
                                          f"{sys.implementation.cache_tag}")
        try:
            newest = max(os.path.getmtime(s) for s in list(ext.sources) + list(ext.depends))
        except OSError:
            return False
        for candidate in (os.path.join(plain_lib, rel), rel):
            if os.path.isfile(candidate) and os.path.getmtime(candidate) >= newest:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(candidate, target)
                print(f"omlc: reusing {candidate} (up to date)")
                return True
        return False


class SDist(sdist):
    """The sdist carries the .pyx sources only: setuptools would also pack the
    generated .c files (an extension's sources), which go stale and are rebuilt
    from the .pyx on install anyway."""

    def make_release_tree(self, base_dir, files):
        generated = (".c", ".so", ".pyd", ".html")
        super().make_release_tree(base_dir, [f for f in files if not f.endswith(generated)])


directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "nonecheck": False,
    "cdivision": not DEBUG,
    "embedsignature": True,
    # No pickling made up by Cython: it would copy raw pointers (an optimiser
    # pickled its weight pointer as bytes and crashed). Classes that pickle
    # define __reduce__.
    "auto_pickle": False,
}

compile_args = []
if sys.platform != "win32":
    # -fno-math-errno: sqrt becomes one instruction the vectoriser can use (the
    # kernels never read errno).
    compile_args = ["-O3", "-fno-strict-aliasing", "-fno-math-errno"]
    if DEBUG:
        compile_args = ["-O0", "-g"]
    if SANITIZE:
        compile_args += [f"-fsanitize={SANITIZE}", "-fno-omit-frame-pointer", "-g"]
    if NATIVE:
        compile_args.append("-march=native")

extensions = [
    Extension(
        "omlc._core." + os.path.splitext(os.path.basename(path))[0],
        [path],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_22_API_VERSION")],
        extra_compile_args=compile_args,
        extra_link_args=[f"-fsanitize={SANITIZE}"] if SANITIZE else [],
    )
    for path in sorted(glob.glob(os.path.join("omlc", "_core", "*.pyx")))
]

FORCE = _mode_changed()

setup(
    # Here rather than in pyproject.toml, see the note there.
    license="BSD-3-Clause",
    ext_modules=cythonize(
        extensions, compiler_directives=directives, force=FORCE, nthreads=0
    ),
    cmdclass={"build_ext": BuildExt, "sdist": SDist},
)
