"""Snapshot (LVM thin), dedupe (dm-vdo) and mirror (md RAID1) driven through the driver under fio load."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Self

import pytest

from iogate.arrays.base import Capability, Volume
from iogate.arrays.linux_target import LinuxTarget
from iogate.hosts.connectors.base import Connection
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab, registry
from iogate.run import Run

pytestmark = pytest.mark.labvm


class Load:
    """fio writing to a connection in the background while the array acts."""

    def __init__(self, guest: Initiator, connection: Connection, runtime_s: int) -> None:
        self.result: object = None
        self.thread = threading.Thread(target=self._run, args=(guest, connection.filename, runtime_s))

    def _run(self, guest: Initiator, filename: str, runtime_s: int) -> None:
        self.result = guest.run_unchecked(
            "fio --name=load --filename=%s --rw=randwrite --bs=64k --direct=1 --ioengine=libaio --iodepth=4 "
            f"--size=128m --runtime={runtime_s} --time_based --buffer_compress_percentage=50 --dedupe_percentage=50 --minimal",
            filename,
        )

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.thread.join()
        assert getattr(self.result, "rc", 1) == 0, f"fio under load failed: {self.result}"


@pytest.fixture
def connected(labvm_lab: Lab, labvm_run: Run, array: LinuxTarget, guest: Initiator) -> Iterator[tuple[Volume, Connection]]:
    protocol = labvm_lab.protocol("iscsi")
    connector = registry.connector_class(protocol.connector)(protocol, labvm_run)
    volume = array.create_volume("svc", 256 << 20, export="iscsi")
    connection = connector.connect(guest, volume)
    yield volume, connection
    connector.disconnect(guest, connection)
    array.delete_volume(volume)


def test_snapshot_during_load(connected: tuple[Volume, Connection], array: LinuxTarget, guest: Initiator) -> None:
    volume, connection = connected
    with Load(guest, connection, runtime_s=12):
        snapshot = array.snapshot_create(volume, "s1")
    lv = snapshot.location
    assert guest.run("lvs --noheadings -o origin %s", lv).stdout.strip() != ""
    array.snapshot_restore(volume, snapshot)
    array.snapshot_delete(snapshot)
    assert guest.run_unchecked("lvs %s", lv).rc != 0


def test_dedupe_pass_during_load(connected: tuple[Volume, Connection], array: LinuxTarget, guest: Initiator) -> None:
    if Capability.DEDUPE not in array.capabilities:
        pytest.skip("lab VM kernel has no dm-vdo")
    volume, connection = connected
    # Duplicate data first, so the pass has something to find: two copies of one random 32 MiB block.
    guest.run(
        "head -c 33554432 /dev/urandom > /tmp/blk && dd if=/tmp/blk of=%s bs=1M oflag=direct status=none && "
        "dd if=/tmp/blk of=%s bs=1M seek=64 oflag=direct status=none",
        connection.filename,
        connection.filename,
    )
    with Load(guest, connection, runtime_s=10):
        evidence = array.dedupe_run()
    assert evidence["logical_bytes"] == volume.size_bytes
    assert evidence["saved_bytes"] > 0, evidence


def test_mirror_attach_resyncs_under_load(connected: tuple[Volume, Connection], array: LinuxTarget, guest: Initiator) -> None:
    volume, connection = connected
    assert array.mirror_state(volume)["degraded"] == "1"
    with Load(guest, connection, runtime_s=15):
        evidence = array.mirror_attach(volume)
    assert array.mirror_state(volume) == {"sync_action": "idle", "degraded": "0", "raid_disks": "2"}
    assert evidence["resync_s"] > 0
    array.mirror_detach(volume)
    assert array.mirror_state(volume)["degraded"] == "1"


def test_replica_initial_sync_copies_the_live_volume(connected: tuple[Volume, Connection], array: LinuxTarget,
                                                     guest: Initiator) -> None:
    volume, connection = connected
    guest.run("head -c 8388608 /dev/urandom > /tmp/rep && dd if=/tmp/rep of=%s bs=1M oflag=direct status=none", connection.filename)
    first = array.replicate(volume)
    assert array.target.run("cmp -n 8388608 /tmp/rep %s && echo same", f"/dev/{first['replica']}").stdout.strip() == "same"
    with Load(guest, connection, runtime_s=10):
        again = array.replicate(volume)  # a resync of the same replica, read from the volume under load
    assert again["replica"] == first["replica"] and again["bytes"] == volume.size_bytes and again["duration_s"] > 0
