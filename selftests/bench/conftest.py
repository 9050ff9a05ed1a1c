"""`make bench`'s figures, one line each, printed together at the end of the session.

A benchmark test hands its headline lines to the `bench_figures` fixture
(`bench_figures.append("merge of 1000 hosts = 0.7 s")`); the terminal summary
prints them under "benchmark figures", so they are read in one place however
much pytest printed before (they are figures, never asserted wall-clock bounds).
A benchmark's verdict line (test_bench_early_stop: "early stop: same verdicts: ...")
goes to CLOSING and is printed last, so `make bench` ends in it.
"""

from __future__ import annotations

import pytest

_FIGURES: list[str] = []
CLOSING: list[str] = []


@pytest.fixture
def bench_figures() -> list[str]:
    return _FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _FIGURES:
        terminalreporter.section("benchmark figures")
        for line in _FIGURES:
            terminalreporter.write_line(line)
    for line in CLOSING:
        terminalreporter.write_line(line)
