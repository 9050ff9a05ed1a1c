"""Each protocol end to end on real kernel code: provision, connect, find by identity, fio, undo; over iSCSI
the guard also refuses the device to a run that provisioned another volume (folded in: one login, not two)."""

from __future__ import annotations

import json

import pytest

from iogate.arrays.linux_target import LinuxTarget
from iogate.errors import GuardRefused
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, Lab, registry
from iogate.run import Run

pytestmark = pytest.mark.labvm

VOLUME_BYTES = 256 << 20


def fio_write_iops(guest: Initiator, filename: str, extra: dict[str, str], runtime_s: int = 5) -> float:
    options = " ".join(f"--{key}={value}" for key, value in extra.items())
    done = guest.run(
        "fio --name=probe --filename=%s --rw=randwrite --bs=4k --direct=1 --ioengine=libaio --iodepth=8 "
        f"--size=64m {options} --runtime={runtime_s} --time_based --output-format=json",
        filename,
    )
    return float(json.loads(done.stdout)["jobs"][0]["write"]["iops"])


def leftovers(guest: Initiator) -> str:
    """Sessions, controllers, NFS mounts, LUNs and subsystems that are still there."""
    return guest.run(
        "iscsiadm -m session 2>/dev/null; ls /sys/class/nvme 2>/dev/null; awk '$3 ~ /^nfs4?$/' /proc/mounts;"
        "ls /sys/kernel/config/target/iscsi | grep '^iqn' ; ls /sys/kernel/config/nvmet/subsystems; exportfs; true"
    ).stdout.strip()


@pytest.mark.parametrize("protocol_name", ["iscsi", "nvme-tcp", "nfs3", "nfs4.1"])
def test_protocol_end_to_end(protocol_name: str, labvm_lab: Lab, labvm_run: Run, array: LinuxTarget, guest: Initiator) -> None:
    protocol = labvm_lab.protocol(protocol_name)
    connector = registry.connector_class(protocol.connector)(protocol, labvm_run)
    volume = array.create_volume(f"e2e-{protocol_name.replace('.', '')}", VOLUME_BYTES, export=protocol.connector)
    guard = Guard()
    guard.admit(volume.identity)
    try:
        connection = connector.connect(guest, volume)
        try:
            guard.check(guest, connection)
            if protocol_name == "iscsi":
                # The guard refuses this very device to a run that provisioned another volume (a LUN of its WWN).
                with pytest.raises(GuardRefused):
                    Guard(provisioned=[DeviceIdentity(wwn="naa.6001405" + "0" * 25)]).check_device(guest, connection.device or "")
            if connection.device is not None:
                # Found by identity: the kernel's own WWN / NGUID for it is the one the array set.
                assert volume.identity.wwn or volume.identity.nguid
                assert connection.device.startswith("/dev/disk/by-id/")
                # Exactly the size the array reported (md's superblock once took 1 MiB of it: LD-2).
                assert int(guest.run("blockdev --getsize64 %s", connection.device).stdout) == VOLUME_BYTES
            else:
                assert (
                    guest.run("findmnt -n -o SOURCE --target %s", connection.details["mountpoint"]).stdout.strip()
                    == volume.identity.nfs_export
                )
            assert fio_write_iops(guest, connection.filename, connection.fio_options) > 0
        finally:
            connector.disconnect(guest, connection)
    finally:
        array.delete_volume(volume)
    assert leftovers(guest) == ""

