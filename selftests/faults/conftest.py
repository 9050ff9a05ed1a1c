"""The fault campaign's table: one row per injected fault, printed at the end of the session."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from selftests.faults.campaign import ROWS, SENTINELS, table


@pytest.fixture(scope="session", autouse=True)
def sentinel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A loop device no fault may write: random bytes, compared after every fault."""
    if os.geteuid() != 0:
        yield
        return
    image = tmp_path_factory.mktemp("sentinel") / "sentinel.img"
    image.write_bytes(os.urandom(8 << 20))
    device = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True, check=True).stdout.strip()
    SENTINELS[image] = image.read_bytes()
    try:
        yield
    finally:
        subprocess.run(["losetup", "-d", device], check=False)
        SENTINELS.clear()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if ROWS:
        terminalreporter.section("iogate fault campaign")
        for line in table(ROWS):
            terminalreporter.write_line(line)
