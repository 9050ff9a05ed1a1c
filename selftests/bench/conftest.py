"""The benchmarks' closing lines: printed after pytest's own summary, so `make bench` ends in them."""

from __future__ import annotations

import pytest

CLOSING: list[str] = []  # a benchmark appends its verdict line (test_bench_early_stop: "early stop: same verdicts: ...")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in CLOSING:
        terminalreporter.write_line(line)
