"""The lab VM tier: one qemu guest per session, the array and the initiator in one.

The guest's session fixtures (labvm_run, labvm, labvm_lab, guest) live in
selftests/labvm/fixtures.py, registered by selftests/conftest.py, so the vendor
behaviour tier shares the same boot.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.lab import Lab
from iogate.run import Run


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.labvm)


@pytest.fixture(scope="session")
def array(labvm_lab: Lab, labvm_run: Run) -> Iterator[object]:
    from iogate.arrays.linux_target import LinuxTarget

    driver = LinuxTarget(labvm_lab, labvm_run)
    driver.setup()
    yield driver
    driver.teardown()
