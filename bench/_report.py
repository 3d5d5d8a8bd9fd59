"""Plumbing shared by the bench scripts that print a markdown report (``paper_tables``,
``letor``): the command line, markdown tables, and printing / saving the report."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path


def bench_parser(doc: str) -> argparse.ArgumentParser:
    """An argument parser whose ``--help`` starts with the first paragraph of the script's
    docstring ``doc``, line breaks kept (the first line alone stopped mid-sentence)."""
    return argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def report_parser(doc: str, *, quick: str, data_dir: str) -> argparse.ArgumentParser:
    """The command line every report script shares; the script adds its own options.

    The description is the first paragraph of the script's docstring ``doc`` (its ``Run::``
    block shown as written); ``quick`` and ``data_dir`` are the help texts of ``--quick`` and
    ``--data-dir``.  Also ``--threads`` (LightGBM threads per model, default 1), ``--seed``
    (default 0) and ``--out`` (see :func:`publish`).
    """
    ap = bench_parser(doc)
    ap.add_argument("--quick", action="store_true", help=quick)
    ap.add_argument("--threads", type=int, default=1,
                    help="LightGBM threads per model (default 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-dir", default=None, help=data_dir)
    ap.add_argument("--out", help="also write the markdown to this file")
    return ap


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A markdown table: one header row, then one row per sequence of cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def publish(text: str, out: str | None) -> str:
    """Print the report and, with ``--out``, write it there as UTF-8; returns ``text``."""
    print(text)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    return text


def run_timed(main: Callable[[], object]) -> None:
    """Run a script's ``main()`` and report its wall time on stderr."""
    t0 = time.perf_counter()
    main()
    print(f"wall time: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
