"""core/ must import without Streamlit (notebook users, CI workers); no code anywhere sits
unreachable after a return."""

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


def _unreachable(tree: ast.AST) -> list[int]:
    """Lines of statements that follow a return / raise / continue / break in one block."""
    lines = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                lines += [after.lineno for stop, after in zip(block, block[1:])
                          if isinstance(stop, (ast.Return, ast.Raise, ast.Continue, ast.Break))]
    return lines


def test_the_scan_finds_a_statement_after_a_return():
    assert _unreachable(ast.parse("def f(x):\n    return x\n    x += 1\n")) == [3]
    assert _unreachable(ast.parse("for i in x:\n    if i:\n        break\n    y()\n")) == []


def test_no_statement_after_a_return_raise_or_break():
    """Code nobody runs (an old body left under a rewrite's return) reads as live code."""
    root = CORE.parent
    found = [f"{p.relative_to(root)}:{line}"
             for folder in ("core", "ui", "pages", "bench", "tests")
             for p in sorted((root / folder).rglob("*.py"))
             for line in _unreachable(ast.parse(p.read_text(encoding="utf-8")))]
    found += [f"app.py:{line}" for line in _unreachable(ast.parse(
        (root / "app.py").read_text(encoding="utf-8")))]
    assert found == []
