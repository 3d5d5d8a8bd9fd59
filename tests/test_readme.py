"""The README's Python examples run as written, and the numbers their comments quote are what
the code returns: a notebook user copies them, so they must not rot.

Each ```python block of README.md runs in a fresh namespace in a temporary folder (the Criteo
example writes a Parquet file).  The only change made to the text is the Criteo example's row
count (13,979,592 → 200,000), so the suite stays small; the test fails if that number is no
longer in the README.  A comment's quoted number (``# 0.170``, ``# (1.219, 0.195): …``) is
compared with the value of the statement it ends, rounded to the digits quoted.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
#: The Criteo example at full size (~1 GB) is the README's to show, not the suite's to run.
FULL_CRITEO, SMALL_CRITEO = "13_979_592", "200_000"


def _examples() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"),
                      flags=re.S | re.M)


def _run(code: str) -> tuple[dict[str, object], list[tuple[str, str, object]]]:
    """Run ``code`` statement by statement, as a notebook would.

    Returns the namespace and, for each top-level expression statement, its source, the line
    it ends on (where its comment is) and its value.
    """
    namespace: dict[str, object] = {"__name__": "readme_example"}
    values: list[tuple[str, str, object]] = []
    lines = code.splitlines()
    for node in ast.parse(code).body:
        if isinstance(node, ast.Expr):
            value = eval(compile(ast.Expression(node.value), "README.md", "eval"), namespace)
            values.append((ast.get_source_segment(code, node), lines[node.end_lineno - 1],
                           value))
        else:
            exec(compile(ast.Module([node], type_ignores=[]), "README.md", "exec"), namespace)
    return namespace, values


def _quoted(line: str) -> list[tuple[float, int]]:
    """The decimal numbers of the line's comment and their digits after the point
    (``"# (−0.009, 0.058): 1 = calibrated"`` → ``[(-0.009, 3), (0.058, 3)]``)."""
    comment = line.split("#", 1)[1].replace("−", "-")
    return [(float(m.group(0)), len(m.group(2)))
            for m in re.finditer(r"[+-]?(\d+)\.(\d+)", comment)]


def _value_on(values, starts: str) -> tuple[str, object]:
    hits = [(line, v) for source, line, v in values if source.startswith(starts)]
    assert len(hits) == 1, f"one statement should start with {starts!r}"
    return hits[0]


def _assert_as_quoted(values, starts: str, numbers) -> None:
    line, value = _value_on(values, starts)
    quoted = _quoted(line)
    got = np.atleast_1d(np.asarray(numbers(value), dtype=float))
    assert len(quoted) == got.size, f"{line!r} quotes {quoted}, the code gives {got}"
    for (expected, digits), actual in zip(quoted, got):
        assert round(actual, digits) == pytest.approx(expected, abs=1e-12), (line, actual)


def test_the_readme_has_its_examples():
    blocks = _examples()
    assert len(blocks) >= 5
    assert sum(FULL_CRITEO in b for b in blocks) == 1


@pytest.mark.parametrize("index", range(len(_examples())))
def test_every_example_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = _examples()[index].replace(FULL_CRITEO, SMALL_CRITEO)
    _, values = _run(code)
    # every expression a reader is shown the result of gives one (print() shows its own)
    assert all(v is not None for source, _, v in values if not source.startswith("print("))


def test_the_several_arms_example_returns_the_numbers_it_quotes():
    code = next(b for b in _examples() if "best_arm_policy" in b)
    namespace, values = _run(code)
    assert namespace["d"].n == 64_000  # "# 64,000 rows"
    _assert_as_quoted(values, "policy_value(", lambda v: v)
    _assert_as_quoted(values, "policy_difference(", lambda v: v)
    _assert_as_quoted(values, "multi_armed_qini(tau_hat, [0.1, 0.1])",
                      lambda path: path["gain"].iloc[-1])
    _assert_as_quoted(values, "multi_armed_qini(tau_hat, [0.1, 0.1], reward=",
                      lambda path: path["gain"].iloc[-1])
    _assert_as_quoted(values, "auuc(", lambda v: v)
    _assert_as_quoted(values, "calibration_slope(", lambda v: v)


def test_the_training_example_prints_what_it_says(capsys):
    code = next(b for b in _examples() if "callback=print" in b)
    _run(code)
    printed = capsys.readouterr().out.split("\n")[:-1]
    assert printed == [f"{r} 500" for r in range(1, 501)]  # "1 500" … "500 500"


def test_the_ranking_example_prints_a_verdict_on_mauc(capsys):
    code = next(b for b in _examples() if "load_mq2008" in b)
    namespace, _ = _run(code)
    tests = namespace["tests"]
    printed = capsys.readouterr().out.strip()
    assert "MAUC" in printed and f"{int(tests.iloc[0]['n_queries'])} queries" in printed
