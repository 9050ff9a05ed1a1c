"""Shared self-test fixtures: a throwaway run on the local lab, released afterwards."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.arrays.local import LocalArray
from iogate.lab import DEFAULT_LAB, Lab, load_lab
from iogate.resources import release_all
from iogate.run import Run


@pytest.fixture
def local_lab(tmp_path: Path) -> Lab:
    """The embedded lab with its workdir moved into the test's tmp dir."""
    return load_lab(DEFAULT_LAB).model_copy(update={"workdir": str(tmp_path / "work")})


@pytest.fixture
def local_run(local_lab: Lab) -> Iterator[Run]:
    run = Run.start(local_lab.workdir, "selftest")
    yield run
    release_all(run.ledger)


@pytest.fixture
def local_array(local_lab: Lab, local_run: Run) -> Iterator[LocalArray]:
    array = LocalArray(local_lab, local_run)
    array.setup()
    yield array
    array.teardown()


def loop_devices() -> str:
    return subprocess.run(["losetup", "-a"], capture_output=True, text=True, check=True).stdout
