"""The fault campaign's table: one row per injected fault, printed at the end of the session."""

from __future__ import annotations

import pytest

from selftests.faults.campaign import ROWS, table


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if ROWS:
        terminalreporter.section("iogate fault campaign")
        for line in table(ROWS):
            terminalreporter.write_line(line)
