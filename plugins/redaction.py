"""Secrets never reach an output: reports, captured output and logs are redacted before they are written.

iogate.lab.secrets knows every resolved (and registered) secret value. Here the
pytest side applies it where pytest and allure-pytest write: each test report's
failure text and captured sections (terminal, junit, Allure read those), every
log record, Allure results and attachments as they are written
(plugins.allure_redaction), and, as a last line, the Allure results and junit
files again at the end of the session.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.lab.secrets import install_log_redaction, redact
from plugins import allure_redaction


@pytest.hookimpl(trylast=True)  # after allure-pytest registered its file logger
def pytest_configure(config: pytest.Config) -> None:
    install_log_redaction()
    allure_redaction.install()


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
    if os.environ.get("IOGATE_SELFTEST_NO_FINAL_SCRUB"):  # the canary self-test proves redaction at the source
        return
    results = config.getoption("allure_report_dir", None)
    if results and Path(results).is_dir():
        for path in Path(results).iterdir():
            if path.is_file():
                _scrub(path)
    junit = getattr(config.option, "xmlpath", None)
    if junit and Path(junit).is_file():
        _scrub(Path(junit))
