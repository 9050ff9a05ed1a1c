"""Wiring for the vendor contract tests: a canary credential, a lab and a run per test."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iogate.lab import ArrayConfig, HostConfig, Lab, ProtocolConfig
from iogate.run import Run

# Distinctive, so a leak is found by a plain substring search of every output.
CANARY = "canary-Pw-7f3a9c2e-do-not-print"
PASSWORD_ENV = "IOGATE_VENDOR_TEST_PASSWORD"
INITIATORS = {
    "h1": {"iscsi": "iqn.1994-05.com.redhat:iogate-h1", "nvme-tcp": "nqn.2014-08.org.nvmexpress:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427"},
}


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(PASSWORD_ENV, CANARY)
    return CANARY


def make_lab(tmp_path: Path, driver: str, options: dict[str, Any], connector: str = "iscsi") -> Lab:
    return Lab(
        name=f"{driver}-contract",
        array=ArrayConfig(name=f"{driver}-test", driver=driver, options=options),
        hosts=[HostConfig(name="h1")],
        protocols=[ProtocolConfig(name=connector, connector=connector)],
        workdir=str(tmp_path / "work"),
    )


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run.start(tmp_path / "work", "vendors")


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.DEBUG)
    yield caplog


def assert_no_canary(secret: str, *texts: str) -> None:
    for text in texts:
        assert secret not in text
