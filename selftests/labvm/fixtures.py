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
from iogate.labs.labvm import console
from iogate.labs.labvm import image as image_mod
from iogate.labs.labvm import vm as vm_mod
from iogate.labs.labvm.vanishing import vanishing_with
from iogate.run import Run
from iogate.run.resources import release_all

LAB_FILE = Path(__file__).resolve().parents[2] / "labs" / "labvm.yaml"
PANIC_RECORD_ENV = "IOGATE_GUEST_PANIC_RECORD"  # set by tools/rerun_on_guest_panic.py


@pytest.fixture(scope="session")
def labvm_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    if os.environ.get("IOGATE_SKIP_LABVM") == "1":
        pytest.skip("lab VM tier skipped: IOGATE_SKIP_LABVM=1")
    run = Run.start(tmp_path_factory.mktemp("labvm-workdir"), "labvm")
    yield run
    release_all(run.ledger)  # whatever a failed test left, qemu last (oldest entry)


@pytest.fixture(scope="session")
def labvm(labvm_run: Run, request: pytest.FixtureRequest) -> Iterator[vm_mod.LabVM]:
    started = time.monotonic()
    image = image_mod.ensure_image()
    built_s = time.monotonic() - started
    guest = vm_mod.boot(labvm_run, image, die_with_caller=True)  # a SIGKILLed session takes qemu with it
    print(f"\nlab VM: image ready in {built_s:.0f} s, booted in {guest.boot_seconds:.0f} s, {guest.transport}")
    failed_before = request.session.testsfailed
    yield guest
    death = console.kernel_death_in(guest.serial_log)
    if death and os.environ.get(PANIC_RECORD_ENV):
        # tools/rerun_on_guest_panic.py reads it: a tier whose guest kernel died runs once more.
        Path(os.environ[PANIC_RECORD_ENV]).write_text(death + "\n")
    if request.session.testsfailed > failed_before:
        _post_mortem(request, guest, death)
    late = guest.modules_loaded_since_boot() if guest.tcg_threads == "multi" and guest.alive() else []
    guest.stop()
    # Under multi-threaded TCG a module loaded while both vCPUs run may oops the guest (vm.qemu_argv).
    assert not late, f"the guest loaded modules after its vCPUs came up: {late}: add them to vm.GUEST_MODULES"


def _post_mortem(request: pytest.FixtureRequest, guest: vm_mod.LabVM, death: str | None) -> None:
    """Tests failed while the guest ran: its console and kernel log say whether it hung, panicked
    or ran out of memory (the run directory is gone by the time CI's log is read)."""
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    if death:  # the fault report from its first line (the last 40 lines of a panic are its module list)
        serial = death.splitlines()
    else:
        serial = guest.serial_log.read_text(errors="replace").splitlines()[-40:] if guest.serial_log.exists() else []
    try:
        said = guest.ssh("dmesg | tail -n 40; free -m; uptime", timeout_s=60)
        no_answer = f"(no answer: ssh exit {said.returncode}: {said.stderr.strip()[-300:]})"
        dmesg = said.stdout.splitlines() if said.returncode == 0 else [no_answer]
    except Exception as exc:  # the guest may be the thing that died
        dmesg = [f"(no answer: {exc})"]
    reporter.write_sep("-", "lab VM post-mortem: serial console" + (": the kernel's death" if death else " (last 40 lines)"))
    for line in serial:
        reporter.write_line(line)
    reporter.write_sep("-", "lab VM post-mortem: dmesg, memory, load")
    for line in dmesg:
        reporter.write_line(line)


@pytest.fixture(scope="session")
def labvm_lab(labvm: vm_mod.LabVM) -> Lab:
    """labs/labvm.yaml with this boot's port and key (the file says 10022 for `labvm up`), every host and the
    array marked as living in this qemu (what a test leaves there, its working directory and fio, goes with it)."""
    lab = load_lab(LAB_FILE)
    where = {"transport": labvm.transport, "ssh_key": labvm.ssh_key}
    here = lab.model_copy(
        update={
            "array": lab.array.model_copy(update={"options": {**lab.array.options, **where}}),
            "hosts": [host.model_copy(update=where) for host in lab.hosts],
        }
    )
    return vanishing_with(here, labvm.marker)


@pytest.fixture(scope="session")
def guest(labvm_lab: Lab) -> Initiator:
    return Initiator.from_config(labvm_lab.hosts[0])
