"""The guard refuses a device in use whatever the allow list says: mounted, held, swap, file systems.

Each test makes its own loop device on an image in its tmp dir and removes
everything it made in a finally block; the allow list names the device's
identity, so only the usage check stands between fio and the data.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from iogate.errors import GuardRefused
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, HostConfig

pytestmark = pytest.mark.integration

SIZE_BYTES = 64 << 20


def _sh(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


@contextmanager
def loop_on(image: Path, *, partitions: bool = False) -> Iterator[str]:
    if not image.exists():
        with image.open("wb") as handle:
            handle.truncate(SIZE_BYTES)
    device = _sh("losetup", "--find", "--show", *(["--partscan"] if partitions else []), str(image))
    try:
        yield device
    finally:
        subprocess.run(["losetup", "-d", device], check=False)


def _write_mbr(image: Path) -> None:
    """One Linux partition from sector 2048 to the end (what sfdisk would write; fdisk may be absent)."""
    sectors = SIZE_BYTES // 512 - 2048
    entry = bytes([0, 0, 0, 0, 0x83, 0, 0, 0]) + (2048).to_bytes(4, "little") + sectors.to_bytes(4, "little")
    with image.open("r+b") as handle:
        handle.seek(446)
        handle.write(entry)
        handle.seek(510)
        handle.write(b"\x55\xaa")


def _guard_allowing(image: Path, destructive: bool = False) -> tuple[Guard, Initiator]:
    return Guard(allowed=[DeviceIdentity(backing_file=str(image), destructive=destructive)]), Initiator.from_config(HostConfig(name="me"))


def test_free_allowed_device_admitted(tmp_path: Path) -> None:
    image = tmp_path / "free.img"
    with loop_on(image) as device:
        guard, me = _guard_allowing(image)
        guard.check_device(me, device)  # the control: nothing uses it, identity matches


def test_mounted_device_refused_naming_mount(tmp_path: Path) -> None:
    image, mnt = tmp_path / "mounted.img", tmp_path / "mnt"
    mnt.mkdir()
    with loop_on(image) as device:
        _sh("mkfs.ext4", "-q", "-F", device)
        _sh("mount", device, str(mnt))
        try:
            guard, me = _guard_allowing(image, destructive=True)  # destructive never waives a mount
            with pytest.raises(GuardRefused, match=f"refusing {device}.*in use: it carries a file system mounted at {mnt}"):
                guard.check_device(me, device)
        finally:
            subprocess.run(["umount", str(mnt)], check=False)


def test_active_swap_refused(tmp_path: Path) -> None:
    image = tmp_path / "swap.img"
    with loop_on(image) as device:
        _sh("mkswap", device)
        _sh("swapon", device)
        try:
            guard, me = _guard_allowing(image)
            with pytest.raises(GuardRefused, match="it is active swap"):
                guard.check_device(me, device)
        finally:
            subprocess.run(["swapoff", device], check=False)
        # Switched off, the swap signature alone still says another system owns it.
        with pytest.raises(GuardRefused, match="carries a swap signature"):
            guard.check_device(me, device)
        _guard_allowing(image, destructive=True)[0].check_device(me, device)


def test_held_device_refused_naming_holder(tmp_path: Path) -> None:
    image = tmp_path / "held.img"
    dm_name = f"iogate-selftest-{tmp_path.name}"[:100]
    if subprocess.run(["dmsetup", "version"], capture_output=True, check=False).returncode != 0:
        pytest.skip("no device-mapper in this kernel (the unit test covers holders from sysfs facts)")
    with loop_on(image) as device:
        _sh("dmsetup", "create", dm_name, "--table", f"0 {SIZE_BYTES // 512} linear {device} 0")
        try:
            guard, me = _guard_allowing(image, destructive=True)
            with pytest.raises(GuardRefused, match=rf"it is held by dm-\d+ \({dm_name}\)"):
                guard.check_device(me, device)
        finally:
            subprocess.run(["dmsetup", "remove", dm_name], check=False)


def test_partition_with_file_system_refused_unless_destructive(tmp_path: Path) -> None:
    image = tmp_path / "parted.img"
    with image.open("wb") as handle:
        handle.truncate(SIZE_BYTES)
    _write_mbr(image)
    with loop_on(image, partitions=True) as device:
        partition = f"{device}p1"
        # Without udev (a container) the kernel's scan at attach may not add the partition: ask again.
        subprocess.run(["partx", "-a", device], capture_output=True, check=False)
        if not Path(partition).is_block_device():
            pytest.skip(f"the kernel did not expose {partition}")
        _sh("mkfs.ext4", "-q", "-F", partition)
        guard, me = _guard_allowing(image)
        name = Path(partition).name
        with pytest.raises(GuardRefused, match=rf"dos partition table with file systems on {name} \(ext4\)"):
            guard.check_device(me, device)
        _guard_allowing(image, destructive=True)[0].check_device(me, device)
        mnt = tmp_path / "mnt"
        mnt.mkdir()
        _sh("mount", partition, str(mnt))
        try:
            with pytest.raises(GuardRefused, match=f"its partition {name} carries a file system mounted at {mnt}"):
                _guard_allowing(image, destructive=True)[0].check_device(me, device)
        finally:
            subprocess.run(["umount", str(mnt)], check=False)


def test_root_file_system_refused() -> None:
    root_source = _sh("findmnt", "-n", "-o", "SOURCE", "/")
    if not root_source.startswith("/dev/"):
        pytest.skip(f"root file system is on {root_source}, not a block device")
    guard, me = Guard(), Initiator.from_config(HostConfig(name="me"))
    with pytest.raises(GuardRefused, match=r"the root file system \(/\)"):
        guard.check_device(me, root_source)


def test_static_lab_handing_out_a_mounted_loop_is_refused_before_fio(tmp_path: Path) -> None:
    """The issue's case: a static lab lists a mounted device by identity; only the guard stands before fio."""
    from iogate.arrays.static import StaticArray
    from iogate.engines.fio.runner import FioEngine
    from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
    from iogate.hosts.connectors.block import BlockConnector
    from iogate.lab import DEFAULT_LAB, load_lab
    from iogate.run import Run
    from iogate.run.resources import release_all

    image, mnt = tmp_path / "static.img", tmp_path / "mnt"
    mnt.mkdir()
    with loop_on(image) as device:
        _sh("mkfs.ext4", "-q", "-F", device)
        _sh("mount", device, str(mnt))
        (mnt / "data").write_text("precious")
        run = None
        try:
            base = load_lab(DEFAULT_LAB)
            volumes = [{"name": "lun1", "size": "32MiB", "protocol": "block", "identity": {"backing_file": str(image)},
                        "export": {"device": device}, "destructive": True}]
            lab = base.model_copy(update={"workdir": str(tmp_path / "work"),
                                          "array": base.array.model_copy(update={"driver": "static", "options": {"volumes": volumes}})})
            run = Run.start(lab.workdir, "static")
            volume = StaticArray(lab, run).create_volume("v1", 32 << 20, export="block")
            guard = Guard()
            guard.admit(volume.identity)
            me = Initiator.from_config(lab.hosts[0])
            connection = BlockConnector(lab.protocol("block"), run).connect(me, volume)
            engine = FioEngine(run, {me.name: me}, guard)
            with pytest.raises(GuardRefused, match=f"refusing {device} on host localhost: in use: .*mounted at {mnt}"):
                engine.run_plan(RunPlan("p", (JobSpec("w", WorkloadSpec("w", read_pct=0, runtime_s=1), connection),)))
            assert not list(run.run_dir.glob("points/*/localhost/out.json"))  # fio never started
            assert (mnt / "data").read_text() == "precious"
        finally:
            subprocess.run(["umount", str(mnt)], check=False)
            if run is not None:
                release_all(run.ledger)
