"""Secrets never reach an output: reports, captured output and logs are redacted before they are written.

iogate.secrets knows every resolved (and registered) secret value. Here the
pytest side applies it where pytest and allure-pytest write: each test report's
failure text and captured sections (terminal, junit, Allure read those), every
log record, and, as a last line, the Allure results and junit files at the end
of the session (attachments written by code that did not redact).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.secrets import install_log_redaction, redact


def pytest_configure(config: pytest.Config) -> None:
    install_log_redaction()


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    # trylast = innermost wrapper: the report is clean before allure-pytest's wrapper reads it.
    outcome = yield
    report = outcome.get_result()
    if report.longrepr is not None:
        text = str(report.longrepr)
        if redact(text) != text:
            report.longrepr = redact(text)
    report.sections = [(title, redact(content)) for title, content in report.sections]


def _scrub(path: Path) -> None:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return
    clean = redact(text)
    if clean != text:
        path.write_text(clean)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    results = config.getoption("allure_report_dir", None)
    if results and Path(results).is_dir():
        for path in Path(results).iterdir():
            if path.is_file():
                _scrub(path)
    junit = getattr(config.option, "xmlpath", None)
    if junit and Path(junit).is_file():
        _scrub(Path(junit))
