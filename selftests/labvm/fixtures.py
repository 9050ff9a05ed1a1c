"""The lab VM session fixtures, shared by every tier that needs the guest (one boot per session).

Registered in selftests/conftest.py so the labvm tier and the vendor behaviour tier
share one guest. Builds the image when the cache has none (about 3 minutes), boots
it (about 70 s under TCG), and hands the tests labs/labvm.yaml pointed at this
boot's SSH port. Skipped only when IOGATE_SKIP_LABVM=1.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.hosts.initiator import Initiator
from iogate.lab import Lab, load_lab
from iogate.labvm import image as image_mod
from iogate.labvm import vm as vm_mod
from iogate.resources import release_all
from iogate.run import Run

LAB_FILE = Path(__file__).resolve().parents[2] / "labs" / "labvm.yaml"


@pytest.fixture(scope="session")
def labvm_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    if os.environ.get("IOGATE_SKIP_LABVM") == "1":
        pytest.skip("lab VM tier skipped: IOGATE_SKIP_LABVM=1")
    run = Run.start(tmp_path_factory.mktemp("labvm-workdir"), "labvm")
    yield run
    release_all(run.ledger)  # whatever a failed test left, qemu last (oldest entry)


@pytest.fixture(scope="session")
def labvm(labvm_run: Run) -> Iterator[vm_mod.LabVM]:
    started = time.monotonic()
    image = image_mod.ensure_image()
    built_s = time.monotonic() - started
    guest = vm_mod.boot(labvm_run, image)
    print(f"\nlab VM: image ready in {built_s:.0f} s, booted in {guest.boot_seconds:.0f} s, {guest.transport}")
    yield guest
    guest.stop()


@pytest.fixture(scope="session")
def labvm_lab(labvm: vm_mod.LabVM) -> Lab:
    """labs/labvm.yaml with this boot's port and key (the file says 10022 for `labvm up`)."""
    lab = load_lab(LAB_FILE)
    where = {"transport": labvm.transport, "ssh_key": labvm.ssh_key}
    options = {**lab.array.options, **where, "vanishes_with": labvm.marker}
    return lab.model_copy(
        update={
            "array": lab.array.model_copy(update={"options": options}),
            "hosts": [host.model_copy(update=where) for host in lab.hosts],
        }
    )


@pytest.fixture(scope="session")
def guest(labvm_lab: Lab) -> Initiator:
    return Initiator.from_config(labvm_lab.hosts[0])
