"""Imports point down: omlc.datasets may use omlc.io, never the reverse."""
import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import omlc.io

IO_DIR = Path(omlc.io.__file__).parent


def _imported_modules(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    package = "omlc.io"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: "from ..datasets import x" in omlc/io is omlc.datasets
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                yield f"{base}.{node.module}" if node.module else base
            else:
                yield node.module


def test_no_module_under_omlc_io_imports_omlc_datasets():
    sources = sorted(IO_DIR.glob("*.py"))
    assert len(sources) >= 6
    offenders = [(p.name, m) for p in sources for m in _imported_modules(p)
                 if m == "omlc.datasets" or m.startswith("omlc.datasets.")]
    assert offenders == []


def test_loading_a_file_through_omlc_io_never_loads_omlc_datasets(tmp_path):
    (tmp_path / "d.svm").write_bytes(b"1 1:0.5\n0,2 3:1\n")
    (tmp_path / "t.arff").write_text("@relation 't: -C 1'\n@attribute y {0,1}\n@attribute f numeric\n"
                                     "@data\n1,2\n0,3\n")
    script = textwrap.dedent(f"""
        import os, sys
        os.environ["OMLC_CACHE_DIR"] = {str(tmp_path / "cache")!r}
        import omlc.io
        from omlc.io import cache, files, libsvm, arff, dataset, compression, dtypes
        a = omlc.io.load({str(tmp_path / "d.svm")!r})
        b = omlc.io.load({str(tmp_path / "t.arff")!r})
        a = omlc.io.load({str(tmp_path / "d.svm")!r}, verify=True)
        assert a.X.shape == (2, 3) and b.Y.shape == (2, 1)
        loaded = sorted(m for m in sys.modules if m.startswith("omlc.datasets"))
        print(loaded)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_omlc_load_resolves_names_and_paths(tmp_path):
    import omlc
    import omlc.datasets
    assert omlc.load is omlc.datasets.load
    (tmp_path / "d.svm").write_bytes(b"1 1:0.5\n")
    assert omlc.load(tmp_path / "d.svm", cache_dir=tmp_path / "c").X.shape == (1, 1)


def _module_graph():
    root = IO_DIR.parent
    graph = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root.parent).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        package = name if rel.name == "__init__" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
                deps.add(base)
                deps |= {f"{base}.{a.name}" for a in node.names}
        graph[name] = {d for d in deps if d.startswith("omlc") and d != name}
    return {m: {d for d in deps if d in graph} for m, deps in graph.items()}


def test_no_import_circle_in_the_package():
    # Every import counts, lazy ones inside functions too (an entry point's
    # ``__main__`` excepted: nothing imports it). A package's __init__ is
    # not part of its submodules' circles: Python loads it first anyway.
    graph = {m: {d for d in deps if not m.startswith(d + ".")}
             for m, deps in _module_graph().items() if not m.endswith("__main__")}
    state, cycles = {}, []

    def visit(m, stack):
        state[m] = 1
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []
