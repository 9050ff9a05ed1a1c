"""The guard refuses every device the run did not provision, by identity."""

import subprocess
from pathlib import Path

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.exports import BlockExport
from iogate.arrays.local import LocalArray
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import GuardRefused
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, Lab
from iogate.run import Run

pytestmark = pytest.mark.integration


@pytest.fixture
def foreign_loop(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A loop device someone else created: it must never be written."""
    image = tmp_path / "foreign.img"
    image.write_bytes(b"precious" * 512 * 256)
    device = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True, check=True).stdout.strip()
    yield device, image
    subprocess.run(["losetup", "-d", device], check=False)


def _engine(lab: Lab, run: Run, guard: Guard) -> tuple[FioEngine, Initiator]:
    initiator = Initiator.from_config(lab.hosts[0])
    return FioEngine(run, {initiator.name: initiator}, guard), initiator


def test_foreign_loop_device_refused_before_fio(local_lab: Lab, local_run: Run, local_array: LocalArray, foreign_loop) -> None:  # type: ignore[no-untyped-def]
    device, image = foreign_loop
    ours = local_array.create_volume("v1", 16 << 20)
    guard = Guard()
    guard.admit(ours.identity)
    engine, initiator = _engine(local_lab, local_run, guard)
    # A connection that claims to be our volume but points at the foreign device.
    forged = Connection(protocol="block", host=initiator.name, volume=ours, filename=device, device=device)
    with pytest.raises(GuardRefused, match=f"refusing {device}.*backing_file {image}"):
        engine.run_plan(RunPlan("p", (JobSpec("w", WorkloadSpec("w", read_pct=0, runtime_s=1), forged),)))
    assert image.read_bytes()[:8] == b"precious"
    assert not list(local_run.run_dir.glob("points/*/localhost/out.json"))


def test_unprovisioned_volume_refused(local_lab: Lab, local_run: Run, foreign_loop) -> None:  # type: ignore[no-untyped-def]
    device, image = foreign_loop
    stranger = Volume("stranger", 1 << 20, DeviceIdentity(backing_file=str(image)), (BlockExport(device=device),))
    engine, initiator = _engine(local_lab, local_run, Guard())
    connection = Connection(protocol="block", host=initiator.name, volume=stranger, filename=device, device=device)
    with pytest.raises(GuardRefused, match="was not provisioned by this run"):
        engine.run_plan(RunPlan("p", (JobSpec("w", WorkloadSpec("w", read_pct=0, runtime_s=1), connection),)))


def test_system_disk_refused(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    system_disk = next(p for p in ("/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/xvda") if Path(p).exists())
    ours = local_array.create_volume("v1", 16 << 20)
    guard = Guard()
    guard.admit(ours.identity)
    _, initiator = _engine(local_lab, local_run, guard)
    with pytest.raises(GuardRefused, match=f"refusing {system_disk} on host localhost"):
        guard.check(initiator, Connection(protocol="block", host="localhost", volume=ours, filename=system_disk, device=system_disk))


def test_explicitly_allowed_device_is_accepted(local_lab: Lab, foreign_loop) -> None:  # type: ignore[no-untyped-def]
    device, image = foreign_loop
    allowed = DeviceIdentity(backing_file=str(image))
    guard = Guard(allowed=[allowed])
    initiator = Initiator.from_config(local_lab.hosts[0])
    volume = Volume("user-disk", 1 << 20, allowed, {"device": device})
    guard.check(initiator, Connection(protocol="block", host="localhost", volume=volume, filename=device, device=device))


def test_device_smaller_than_its_volume_refused_before_fio(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    """The lab VM's md LUNs were 1 MiB short of the volume the array reported: the job placed on the last region
    ran past the device's end and did no I/O, with no error from fio. The guard refuses such a device by size."""
    ours = local_array.create_volume("v1", 16 << 20)
    guard = Guard()
    guard.admit(ours.identity)
    engine, initiator = _engine(local_lab, local_run, guard)
    device = ours.exports[0].device  # type: ignore[attr-defined]
    claimed = Volume(ours.name, (16 << 20) + (1 << 20), ours.identity, ours.exports)  # what a sloppy driver reports
    short = Connection(protocol="block", host=initiator.name, volume=claimed, filename=device, device=device)
    expected = f"refusing {device}.*holds 16777216 bytes, less than the 17825792 bytes of volume v1.*last 1048576 bytes"
    with pytest.raises(GuardRefused, match=expected):
        engine.run_plan(RunPlan("p", (JobSpec("w", WorkloadSpec("w", read_pct=0, runtime_s=1), short),)))
    assert not list(local_run.run_dir.glob("points/*/localhost/out.json"))
    # The control: the same device, reported at its true size, passes the guard.
    guard.check(initiator, Connection(protocol="block", host=initiator.name, volume=ours, filename=device, device=device))
