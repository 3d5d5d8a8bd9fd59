"""core/ must import without Streamlit (notebook users, CI workers)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"


def test_no_streamlit_import_statement_in_core():
    offenders = []
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def test_core_imports_with_streamlit_blocked():
    modules = sorted(
        ".".join(p.relative_to(CORE.parent).with_suffix("").parts).removesuffix(".__init__")
        for p in CORE.rglob("*.py")
    )
    code = (
        "import sys; sys.modules['streamlit'] = None\n"
        + "".join(f"import {m}\n" for m in modules)
        + "print('ok')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=CORE.parent, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_pip_install_e_packages_core_and_every_subpackage_and_nothing_else():
    """``pip install -e .`` (for a notebook outside the project folder) ships ``core`` with
    every subpackage — found here from the folders holding an ``__init__.py`` — and not the
    app's pages, ui, bench or tests (setuptools refuses a flat layout without the list)."""
    import tomllib

    from setuptools import find_packages

    root = CORE.parent
    conf = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    include = conf["tool"]["setuptools"]["packages"]["find"]["include"]
    found = set(find_packages(where=str(root), include=include))
    expected = {".".join(p.parent.relative_to(root).parts) for p in CORE.rglob("__init__.py")}
    assert found == expected and "core.evaluation" in found
