"""Vendor drivers, behaviour depth: the vendor's SDK -> the spec-checked fake array -> LIO LUNs /
nvmet namespaces in the lab VM carrying the vendor's identity -> iSCSI / NVMe-TCP login -> the
device found by that identity -> the guard admits it -> fio writes; a snapshot and a replication
through the vendor API while fio runs; after a SIGKILL, `iogate cleanup` leaves nothing on the
fake array or in the guest."""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from iogate.arrays.base import Capability
from iogate.hosts import identity
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab, registry
from iogate.run import Run
from selftests.vendors.behaviour.conftest import Vendor
from selftests.vendors.conftest import PASSWORD_ENV
from selftests.vendors.guest_backing import GuestBacking, lv_name

pytestmark = [pytest.mark.labvm, pytest.mark.vendors]
REPO = Path(__file__).resolve().parents[3]
VOLUME_BYTES = 256 << 20
FIO_OUT = "/tmp/iogate-vendor-behaviour-fio.json"
ALL = pytest.mark.parametrize("vendor", ["pure", "powerstore", "ontap", "vast", "huawei", "hitachi"], indirect=True)
RESTORING = pytest.mark.parametrize("vendor", ["pure", "huawei", "hitachi"], indirect=True)  # the drivers with RESTORE


def sessions(guest: Initiator) -> str:
    """iSCSI sessions and node records, NVMe controllers: '' when the host holds none."""
    return guest.run("iscsiadm -m session 2>/dev/null; iscsiadm -m node 2>/dev/null; ls /sys/class/nvme 2>/dev/null; true").stdout.strip()


def assert_nothing_left(vendor: Vendor, fake: Any, emulated: GuestBacking, guest: Initiator) -> None:
    """No object on the fake array, none of its objects in the guest, no session or controller on the host."""
    assert vendor.leftovers(fake) == {}
    assert emulated.leftovers() == ""
    assert sessions(guest) == ""


def kernel_identity(guest: Initiator, device: str, protocol: str) -> str:
    facts = identity.read_identity(guest, device)
    return facts["device/wwid"] if protocol == "iscsi" else facts["nguid"]


def make_driver(vendor: Vendor, lab: Lab, run: Run) -> Any:
    return getattr(importlib.import_module(f"iogate.arrays.{vendor.name}"), vendor.driver_class)(lab, run)


@ALL
def test_chain_with_snapshot_and_replication_under_load(
    vendor: Vendor, lab: Lab, fake: Any, emulated: GuestBacking, guest: Initiator, tmp_path: Path
) -> None:
    run = Run.start(lab.workdir, "vendor-behaviour")
    driver = make_driver(vendor, lab, run)
    driver.setup()
    assert "emulated" in " ".join(driver.facts().values()), driver.facts()
    protocol = lab.protocol(vendor.protocol)
    connector = registry.connector_class(protocol.connector)(protocol, run)
    volume = driver.create_volume("bh0", VOLUME_BYTES, export=vendor.protocol)
    guard = Guard()
    guard.admit(volume.identity)
    connection = connector.connect(guest, volume)
    try:
        guard.check(guest, connection)
        # The kernel's own identity for the device is the one the vendor API reported.
        wanted = volume.identity.wwn if vendor.protocol == "iscsi" else volume.identity.nguid
        seen = kernel_identity(guest, connection.filename, vendor.protocol)
        assert seen.lower().replace("-", "") == (wanted or "").lower().replace("-", ""), seen
        assert re.fullmatch(vendor.kernel_identity, seen.lower()), seen
        fio = guest.run(
            "rm -f %s; nohup fio --name=load --filename=%s --rw=randwrite --bs=4k --direct=1 --ioengine=libaio --iodepth=4 "
            "--runtime=1800 --time_based --output-format=json --output=%s >/dev/null 2>&1 & echo $!",
            FIO_OUT,
            connection.filename,
            FIO_OUT,
        ).stdout.strip()
        alive = f"kill -0 {fio} 2>/dev/null && echo running || echo gone"
        try:
            assert guest.run(alive).stdout.strip() == "running"
            snapshot = driver.snapshot_create(volume, "under-load")
            if Capability.REPLICATE in driver.capabilities:  # VAST, Huawei, Hitachi refuse it (their refusal tables)
                driver.replicate(volume)
            # The data services ran while fio was writing (containment, not a wall-clock margin).
            assert guest.run(alive).stdout.strip() == "running"
        finally:
            guest.run_unchecked(f"kill -INT {fio}; while kill -0 {fio} 2>/dev/null; do sleep 1; done")
        # The vendor snapshot is an LVM thin snapshot of the volume's LV; the replication a finished copy.
        (vol_key,) = emulated.state.volumes
        (snap_key,) = emulated.state.snapshots
        lvs = guest.run("lvs --noheadings -o lv_name,origin %s", emulated.vg).stdout.splitlines()
        origins = dict(line.split() for line in lvs if len(line.split()) == 2)
        assert origins.get(lv_name(f"emu-snap-{snap_key}")) == emulated.lv_of[vol_key], origins
        if Capability.REPLICATE in driver.capabilities:
            assert emulated.state.replicas and all(emulated.replica_done(rep) for rep in emulated.state.replicas)
        output = guest.run("cat %s", FIO_OUT).stdout
        # fio notes the SIGINT we sent before its json; any other note is an error.
        note, _, report = output.partition("{")
        assert note.strip() == "fio: terminating on signal 2", note
        job = json.loads("{" + report)["jobs"][0]
        assert job["error"] == 0 and job["write"]["io_bytes"] > 0, job
        driver.snapshot_delete(snapshot)
    finally:
        connector.disconnect(guest, connection)
        driver.teardown()
    assert_nothing_left(vendor, fake, emulated, guest)


@RESTORING
def test_restore_from_a_snapshot_brings_back_the_blocks_the_host_wrote(
    vendor: Vendor, lab: Lab, fake: Any, emulated: GuestBacking, guest: Initiator
) -> None:
    run = Run.start(lab.workdir, "vendor-behaviour")
    driver = make_driver(vendor, lab, run)
    driver.setup()
    protocol = lab.protocol(vendor.protocol)
    connector = registry.connector_class(protocol.connector)(protocol, run)
    volume = driver.create_volume("rs0", VOLUME_BYTES, export=vendor.protocol)
    connection = connector.connect(guest, volume)
    head = f"dd if={connection.filename} bs=1M count=8 iflag=direct status=none | md5sum"
    try:
        guest.run("dd if=/dev/urandom of=%s bs=1M count=8 oflag=direct status=none", connection.filename)
        written = guest.run(head).stdout.split()[0]
        snapshot = driver.snapshot_create(volume, "before")
        guest.run("dd if=/dev/zero of=%s bs=1M count=8 oflag=direct status=none", connection.filename)
        assert guest.run(head).stdout.split()[0] != written
        driver.snapshot_restore(volume, snapshot)
        assert guest.run(head).stdout.split()[0] == written  # through the same session: name, LUN and identity kept
        driver.snapshot_delete(snapshot)
    finally:
        connector.disconnect(guest, connection)
        driver.teardown()
    assert_nothing_left(vendor, fake, emulated, guest)


CHILD = textwrap.dedent(
    """
    import importlib, sys
    from iogate.lab import registry
    from iogate.hosts.initiator import Initiator
    from iogate.lab import Lab
    from iogate.run import Run
    module, cls, protocol_name, lab_json = sys.argv[1:]
    lab = Lab.model_validate_json(lab_json)
    run = Run.start(lab.workdir, "crash")
    array = getattr(importlib.import_module(f"iogate.arrays.{module}"), cls)(lab, run)
    array.setup()
    volume = array.create_volume("crash0", 256 << 20, export=protocol_name)
    array.snapshot_create(volume, "s1")
    if "REPLICATE" in {c.name for c in array.capabilities}:
        array.replicate(volume)
    protocol = lab.protocol(protocol_name)
    registry.connector_class(protocol.connector)(protocol, run).connect(Initiator.from_config(lab.hosts[0]), volume)
    print("provisioned", flush=True)
    sys.stdin.read()
    """
)


@ALL
def test_cleanup_after_sigkill_leaves_nothing_on_the_array_or_in_the_guest(
    vendor: Vendor, lab: Lab, fake: Any, emulated: GuestBacking, guest: Initiator, canary: str
) -> None:
    env = {**os.environ, PASSWORD_ENV: canary}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, vendor.name, vendor.driver_class, vendor.protocol, lab.model_dump_json()],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = child.stdout.readline() if child.stdout else ""
        assert line.strip() == "provisioned", child.stderr.read() if child.stderr else ""
        assert vendor.leftovers(fake) and sessions(guest) != "" and emulated.leftovers() != ""
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    done = subprocess.run(
        [sys.executable, "-m", "iogate", "cleanup", "--workdir", lab.workdir],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert canary not in done.stdout + done.stderr
    assert_nothing_left(vendor, fake, emulated, guest)
