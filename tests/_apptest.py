"""Assertions for Streamlit AppTest runs.

``ui.common.guard`` turns any failure into an ``st.error``, so ``not at.exception`` alone lets
a broken page pass.  After every run that should work, call :func:`assert_clean`; where a test
provokes an error on purpose, :func:`assert_only_error` pins the message.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _exceptions(at: AppTest) -> list[str]:
    return [f"exception: {e.value}\n" + "\n".join(e.stack_trace) for e in at.exception]


def assert_clean(at: AppTest, context: object = "") -> AppTest:
    """Fail with the text of every ``st.error`` and exception element shown by the last run."""
    problems = [f"st.error: {e.value}" for e in at.error] + _exceptions(at)
    where = f" ({context})" if context != "" else ""
    assert not problems, f"the page shows errors{where}:\n" + "\n".join(problems)
    return at


def assert_only_error(at: AppTest, expected: str) -> AppTest:
    """No exception, at least one ``st.error``, and every error shown contains ``expected``."""
    assert not at.exception, "\n".join(_exceptions(at))
    messages = [str(e.value) for e in at.error]
    assert messages, f"expected an st.error containing {expected!r}, none is shown"
    unexpected = [m for m in messages if expected.lower() not in m.lower()]
    assert not unexpected, f"errors without {expected!r}: {unexpected}"
    return at
