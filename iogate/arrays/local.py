"""The embedded local array: loop devices over sparse files in a reflink pool.

Pool = XFS (reflink=1) or btrfs on a loop device over a sparse file in the run
directory, or (pool_medium: memory) in a tmpfs mounted there. Volume = a sparse file in the pool attached as a loop device with
direct I/O. Snapshot = reflink copy (later writes pay copy-on-write). Dedupe = a
real post-process pass (FIDEDUPERANGE, iogate.arrays.dedupe_pass) over the volumes.
QoS = cgroup v1 blkio throttle: exact per-device IOPS caps, the suite's own ground-truth lever. The array is this machine,
so its QoS is enforced on the fio processes of the local host, which the local
connector starts inside the run's blkio cgroup. Metrics = the kernel's block-layer
counters of each volume's loop device (/sys/block/loopN/stat), sampled by the array
itself every `metrics_interval_s` from the volume's creation (iogate.arrays.blockstat).
"""

from __future__ import annotations

import json
import mmap
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from iogate import shell
from iogate.arrays.base import ArraySample, Capability, Snapshot, Volume, check_window, unsupported
from iogate.arrays.blockstat import BlockStat, CounterSampler, parse_stat
from iogate.arrays.clock import ArrayClock
from iogate.arrays.exports import BlockExport
from iogate.arrays.pacing import Pacer
from iogate.errors import ArrayError, IOGateError
from iogate.lab import DeviceIdentity, Lab, QoS
from iogate.run import Run
from iogate.run.ledger import Entry
from iogate.run.resources import loop_backing_file, loops_backed_by, release
from iogate.units import parse_size_bytes

BLKIO_ROOT = Path("/sys/fs/cgroup/blkio")
DEDUPE_BLOCK_BYTES = 64 << 10  # the dedupe unit; the dedupe family fills its datastore at this block size
DEDUPE_LONGEST_S = 24 * 3600.0


class LocalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    pool_fs: Literal["xfs", "btrfs"] = "xfs"
    pool_size: str = "8GiB"
    # Where the pool image lives. `memory`: in a tmpfs of pool_size mounted in the run's directory (thin:
    # only what is written takes RAM), so the host's own disk is not in the lab's data path: its journal
    # commits, online discards and virtual-disk flushes stalled the lab's I/O for 0.3-1 s now and then,
    # which the caps cannot govern. `disk`: a sparse file in the workdir (the pool's latency is then also
    # that disk's).
    pool_medium: Literal["disk", "memory"] = "disk"
    # btrfs only: transparent compression of everything written (compression tests).
    compress: Literal["none", "zstd"] = "none"
    # Thin over-commit: the lab's volumes may add up to more than the pool (a full pool
    # then fails the prefill or the test as the array's error, naming the volume).
    overcommit: bool = False
    # A replica's initial sync runs at this rate, as an array's replication runs at its link's or
    # its replication QoS's rate: at the pool disk's full speed, the copy's impact on the load
    # measured how fast this machine's disk was that minute, not the lab's service level.
    replica_bytes_per_s: int = Field(default=64 << 20, gt=0)
    # The dedupe pass reads the volumes (and each duplicate pair again) at no more than this, as an
    # array's post-process dedupe runs as background work, not at the pool disk's full speed.
    dedupe_bytes_per_s: int = Field(default=64 << 20, gt=0)
    # METRICS: how often the array reads each volume's block counters, and how long it keeps them
    # (memory is bounded: a window older than that returns only what is left of it).
    metrics_interval_s: float = Field(default=1.0, ge=0.1, le=60)
    metrics_keep_s: float = Field(default=6 * 3600, gt=0)


def _run(argv: list[str]) -> str:
    return shell.run(argv, error=ArrayError).stdout.strip()


def device_numbers(device: str) -> str:
    """'MAJ:MIN' of a block device, as cgroup throttle files want it."""
    rdev = os.stat(device).st_rdev
    return f"{os.major(rdev)}:{os.minor(rdev)}"


class LocalArray:
    """ArrayDriver over loop devices on this machine (see module docstring)."""

    Options: ClassVar[type[BaseModel]] = LocalOptions
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.SNAPSHOT,
            Capability.RESTORE,
            Capability.DEDUPE,
            Capability.REPLICATE,
            Capability.QOS,
            Capability.COMPRESSION,
            Capability.METRICS,
        }
    )

    serves_all_protocols: ClassVar[bool] = True  # block and nbd both reach the same loop device

    def __init__(self, lab: Lab, run: Run) -> None:
        self.lab = lab
        self.run = run
        self.options = LocalOptions.model_validate(lab.array.options)
        self.pool_dir = run.run_dir / "pool"
        self.cgroup = BLKIO_ROOT / f"iogate-{run.run_id}"
        self._own: list[Entry] = []
        self._volumes: dict[str, tuple[Volume, list[Entry]]] = {}
        self._snapshots: dict[str, Entry] = {}
        interval_s = self.options.metrics_interval_s
        self.counters = CounterSampler(
            interval_s, max(2, int(self.options.metrics_keep_s / interval_s) + 1), name=f"iogate-counters-{run.run_id}"
        )

    @classmethod
    def lab_problems(cls, lab: Lab, options: LocalOptions) -> list[tuple[tuple[str | int, ...], str]]:
        """The lab's volumes must fit the pool (unless it says overcommit) and the pool image must be a
        file the workdir's file system can hold; both as lab errors, before anything is made."""
        from iogate.lab.checks import human_size, nearest_existing

        problems: list[tuple[tuple[str | int, ...], str]] = []
        pool_bytes = parse_size_bytes(options.pool_size)
        total_bytes = lab.volumes.count * lab.volumes.size_bytes
        if total_bytes > pool_bytes and not options.overcommit:
            problems.append(
                (
                    ("volumes", "size"),
                    (
                        f"{lab.volumes.count} volume(s) of {human_size(lab.volumes.size_bytes)} = {human_size(total_bytes)} do not fit "
                        f"the local pool (array.options.pool_size {human_size(pool_bytes)}); enlarge the pool, shrink the volumes, "
                        "or set array.options.overcommit: true for a thin pool"
                    ),
                )
            )
        if options.pool_medium == "memory":
            memory_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            if pool_bytes > memory_bytes // 2:
                problems.append(
                    (
                        ("array", "options", "pool_size"),
                        (
                            f"{human_size(pool_bytes)}: a pool in memory may take at most half of this machine's "
                            f"{human_size(memory_bytes)} of RAM; shrink the pool or set array.options.pool_medium: disk"
                        ),
                    )
                )
            return problems
        where = nearest_existing(lab.workdir)
        try:
            with open(os.open(where, os.O_TMPFILE | os.O_RDWR, 0o600), "wb") as probe:
                probe.truncate(pool_bytes)  # sparse: costs no space, fails with EFBIG past the fs limit
        except OverflowError:
            problems.append(
                (("array", "options", "pool_size"), (f"{human_size(pool_bytes)}: cannot hold the pool image: larger than any file offset"))
            )
        except OSError as exc:
            if exc.errno not in (13, 30, 95):  # EACCES, EROFS, EOPNOTSUPP: setup reports those itself
                problems.append(
                    (
                        ("array", "options", "pool_size"),
                        (f"{human_size(pool_bytes)}: the file system of {where} cannot hold the pool image ({exc.strerror})"),
                    )
                )
        return problems

    # -- lifecycle -------------------------------------------------------------
    def setup(self) -> None:
        ledger = self.run.ledger
        image = self._pool_image_dir() / "pool.img"
        self._own.append(entry := ledger.intend("file", path=str(image)))
        try:
            with image.open("wb") as handle:
                handle.truncate(parse_size_bytes(self.options.pool_size))
        except OSError as exc:
            raise ArrayError(
                f"local array: pool_size {self.options.pool_size}: cannot make {image}: {exc.strerror} (errno {exc.errno})"
            ) from None
        ledger.created(entry)
        device = self._attach(image, self._own)
        if self.options.pool_fs == "xfs":
            _run(["mkfs.xfs", "-q", "-f", "-m", "reflink=1", device])
        else:
            _run(["mkfs.btrfs", "-q", "-f", device])
        self._own.append(entry := ledger.intend("dir", path=str(self.pool_dir)))
        self.pool_dir.mkdir()
        ledger.created(entry)
        self._own.append(entry := ledger.intend("mount", target=str(self.pool_dir), source=device))
        mount = ["mount", device, str(self.pool_dir)]
        if self.options.pool_fs == "btrfs" and self.options.compress != "none":
            mount[1:1] = ["-o", f"compress-force={self.options.compress}"]
        _run(mount)
        ledger.created(entry)
        if not BLKIO_ROOT.is_dir():
            raise ArrayError(f"local array: {BLKIO_ROOT} missing: cgroup v1 blkio is needed for QoS")
        self._own.append(entry := ledger.intend("cgroup", path=str(self.cgroup)))
        self.cgroup.mkdir(exist_ok=True)
        ledger.created(entry)

    def _pool_image_dir(self) -> Path:
        """The directory the pool image goes in: the run's own, or a tmpfs of pool_size mounted in it."""
        if self.options.pool_medium == "disk":
            return self.run.run_dir
        ledger, memory = self.run.ledger, self.run.run_dir / "pool-memory"
        self._own.append(entry := ledger.intend("dir", path=str(memory)))
        memory.mkdir()
        ledger.created(entry)
        self._own.append(entry := ledger.intend("mount", target=str(memory), source="tmpfs"))
        size = parse_size_bytes(self.options.pool_size)
        _run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "iogate-pool", str(memory)])
        ledger.created(entry)
        return memory

    def teardown(self) -> None:
        self.counters.stop()
        # A failed pool (XFS shut down after its storage failed) answers EIO even to a stat of the files in
        # it, so their removal fails; they go with the pool's unmount and are released after it.
        failed: list[Entry] = []
        for volume, owned in list(self._volumes.values()):
            try:
                self.delete_volume(volume)
            except IOGateError:
                failed.extend(owned)
        for entry in self._snapshots.values():
            try:
                release(self.run.ledger, [entry])
            except IOGateError:
                failed.append(entry)
        self._snapshots.clear()
        release(self.run.ledger, self._own)
        self._own.clear()
        release(self.run.ledger, failed)

    def facts(self) -> dict[str, str]:
        return {
            "array.driver": "local",
            "array.model": f"Linux loop devices on {self.options.pool_fs} (reflink) pool",
            "array.firmware": f"kernel {platform.release()}",
        }

    # -- volumes ---------------------------------------------------------------
    def _attach(self, backing: Path, owned: list[Entry]) -> str:
        owned.append(entry := self.run.ledger.intend("loop", backing_file=str(backing)))
        device = _run(["losetup", "--find", "--show", "--direct-io=on", str(backing)])
        self.run.ledger.created(entry, device=device)
        return device

    def create_volume(self, name: str, size_bytes: int, qos: QoS | None = None, export: str | None = None) -> Volume:
        if name in self._volumes:
            raise ArrayError(f"local array: volume {name} exists already")
        owned: list[Entry] = []
        path = self.pool_dir / f"{name}.img"
        owned.append(entry := self.run.ledger.intend("file", path=str(path)))
        with path.open("wb") as handle:
            handle.truncate(size_bytes)
        self.run.ledger.created(entry)
        device = self._attach(path, owned)
        volume = Volume(
            name=name,
            size_bytes=size_bytes,
            identity=DeviceIdentity(backing_file=str(path)),
            exports=(BlockExport(device=device, cgroup=str(self.cgroup)),),
        )
        self._volumes[name] = (volume, owned)
        self.set_qos(volume, qos)
        self.counters.watch(str(path), self._counter_reader(str(path)))
        return volume

    def delete_volume(self, volume: Volume) -> None:
        self.counters.forget(str(self._volume_file(volume)))
        _, owned = self._volumes.pop(volume.name)
        release(self.run.ledger, owned)

    def list_volumes(self) -> list[Volume]:
        return [volume for volume, _ in self._volumes.values()]

    def set_qos(self, volume: Volume, qos: QoS | None) -> None:
        """Apply (or with None lift) exact caps; takes effect on running I/O at once."""
        numbers = device_numbers(self._device(volume))
        qos = qos or QoS()
        caps = {
            "read_iops_device": qos.read_iops,
            "write_iops_device": qos.write_iops,
            "read_bps_device": qos.read_bytes_per_s,
            "write_bps_device": qos.write_bytes_per_s,
        }
        for name, value in caps.items():
            try:
                (self.cgroup / f"blkio.throttle.{name}").write_text(f"{numbers} {value or 0}\n")
            except OSError as exc:
                raise ArrayError(f"local array: volume {volume.name}: cannot set {name}={value}: {exc}") from exc

    def _device(self, volume: Volume) -> str:
        export = volume.export_of(BlockExport)
        if export is None:
            raise ArrayError(f"local array: volume {volume.name} has no loop device (not a volume of this array)")
        return export.device

    # -- data services -----------------------------------------------------------
    def _volume_file(self, volume: Volume) -> Path:
        return Path(volume.identity.backing_file or "")

    def snapshot_create(self, volume: Volume, name: str) -> Snapshot:
        target = self.pool_dir / f"{volume.name}@{name}.img"
        entry = self.run.ledger.intend("file", path=str(target))
        self._snapshots[f"{volume.name}@{name}"] = entry
        _run(["cp", "--reflink=always", str(self._volume_file(volume)), str(target)])
        self.run.ledger.created(entry)
        return Snapshot(name=name, volume=volume.name, location=str(target), evidence={"file": str(target)})

    def snapshot_delete(self, snapshot: Snapshot) -> None:
        entry = self._snapshots.pop(f"{snapshot.volume}@{snapshot.name}")
        release(self.run.ledger, [entry])

    def snapshot_restore(self, volume: Volume, snapshot: Snapshot) -> None:
        # Remap the extents in place: the loop device keeps the same open inode.
        _run(["xfs_io", "-c", f"reflink {snapshot.location} 0 0 {volume.size_bytes}", str(self._volume_file(volume))])

    def settle(self) -> None:
        """Let deferred pool work finish before a measurement: syncfs makes XFS free a deleted snapshot's
        extents (background inode GC) now, instead of during the next test's baseline window."""
        _run(["sync", "-f", str(self.pool_dir)])

    def mirror_attach(self, volume: Volume) -> dict[str, Any]:
        raise unsupported("local", Capability.MIRROR)

    def mirror_detach(self, volume: Volume) -> None:
        raise unsupported("local", Capability.MIRROR)

    def refusal(self, capability: Capability) -> str:
        if capability in self.capabilities:
            return ""
        if capability is Capability.MIRROR:
            return "a loop device has no second leg to attach (the lab VM's linux_target mirrors over md RAID1)"
        return "not offered by this driver"

    def array_clock(self) -> ArrayClock:
        # The sampler runs in this process: its stamps are this machine's clock, the controller's own.
        return ArrayClock(0.0, 0.0, "the local array's samples are stamped by this machine's clock")

    def volume_metrics(self, volume: Volume, start: datetime, end: datetime) -> list[ArraySample]:
        """The kernel's block counters of the volume's loop device, per sampling interval, stamped at the
        interval's end within [start, end]: IOPS = completed I/Os / interval, latency = the device's summed
        request time / its I/Os (whole milliseconds of sums: +-1 ms per interval; a throttle's wait is not in
        it). Sampled since the volume was created, kept `metrics_keep_s`; [] for a window without a sample."""
        check_window(start, end)
        key = self._owned_file(volume)
        samples = self.counters.samples(key, start, end)
        failing = self.counters.failing(key)
        if not samples and failing is not None:
            raise ArrayError(f"local array: volume {volume.name}: cannot read its block counters: {failing}")
        return samples

    def _counter_reader(self, backing_file: str) -> Callable[[], tuple[str, BlockStat]]:
        """Reads the counters of the loop device the kernel says is backed by the volume's file: found by that
        identity (not by the device name it was given), checked again at every reading, looked up anew when
        it no longer matches."""
        device: list[str] = []

        def read() -> tuple[str, BlockStat]:
            if not device or loop_backing_file(device[0]) != backing_file:
                found = loops_backed_by(backing_file)
                if len(found) != 1:
                    device.clear()
                    raise ArrayError(f"{len(found)} loop devices are backed by {backing_file} ({', '.join(found) or 'none'}), not one")
                device[:] = found
            name = Path(device[0]).name
            return name, parse_stat(Path(f"/sys/block/{name}/stat").read_text())

        return read

    def pool_used_bytes(self) -> int:
        stats = os.statvfs(self.pool_dir)
        return (stats.f_blocks - stats.f_bfree) * stats.f_frsize

    def _owned_file(self, volume: Volume) -> str:
        """The volume's backing file, if the volume is one this array made; otherwise an ArrayError."""
        path = str(self._volume_file(volume))
        if path not in {str(self._volume_file(own)) for own, _ in self._volumes.values()}:
            raise ArrayError(f"local array: volume {volume.name} ({path}) is not a volume of this array")
        return path

    def dedupe_run(self, volumes: Sequence[Volume] = ()) -> dict[str, Any]:
        """A real post-process dedupe pass (iogate.arrays.dedupe_pass: FIDEDUPERANGE over 64 KiB blocks, read
        at `dedupe_bytes_per_s`) over the volumes' files (none given: every volume in the pool). Scoped, its
        cost is the datastore's: a whole-pool pass in `make accept` also hashed the 2 GiB of the other
        families' prefilled volumes, and its VMs' latency tail grew with the suite's order."""
        before = self.pool_used_bytes()
        started = time.monotonic()
        files = [self._owned_file(v) for v in volumes] or sorted(str(self._volume_file(v)) for v, _ in self._volumes.values())
        marker = str(self.run.path("dedupe.pass"))
        # Journalled by its marker: a controller killed mid-pass must not leave the pass
        # running in the pool (it would keep the pool busy and outlive the run).
        entry = self.run.ledger.intend("process", name="dedupe pass", marker=marker)
        try:
            rate = self.options.dedupe_bytes_per_s
            argv = [sys.executable, "-m", "iogate.arrays.dedupe_pass", "--marker", marker, "--block-bytes", str(DEDUPE_BLOCK_BYTES)]
            # The pass reads every byte once and each duplicate pair again (at most twice over) at `rate`: a big
            # pool's pass runs for many minutes, and only a pass well past that is stuck (at most a day: the
            # kernel's poll takes no longer timeout, and a slower pass is a mistake in the lab's rate).
            longest_s = min(2 * 3 * sum(os.path.getsize(f) for f in files) / rate + 120, DEDUPE_LONGEST_S)
            done = shell.run([*argv, "--rate-bytes-per-s", str(rate), *files], timeout_s=longest_s, error=ArrayError)
            report = json.loads(done.stdout)
        finally:
            release(self.run.ledger, [entry])
        _run(["sync", "-f", str(self.pool_dir)])
        after = self.pool_used_bytes()
        return {
            "pool_used_before_bytes": before,
            "pool_used_after_bytes": after,
            "saved_bytes": before - after,
            **report,
            "rate_bytes_per_s": self.options.dedupe_bytes_per_s,
            "scope": ", ".join(v.name for v in volumes) if volumes else "every volume in the pool",
            "duration_s": round(time.monotonic() - started, 3),
        }

    def replicate(self, volume: Volume) -> dict[str, Any]:
        """Initial sync of a replica: a full, non-shared copy read from the live volume."""
        target = self.run.path("replica", f"{volume.name}.img")
        entry = self.run.ledger.intend("file", path=str(target))
        self._own.append(entry)
        started = time.monotonic()
        rate = self.options.replica_bytes_per_s
        try:
            copied = paced_copy(self._volume_file(volume), target, rate)
        except OSError as exc:
            raise ArrayError(f"array {self.lab.array.name}: replica of volume {volume.name} to {target}: {exc}") from None
        self.run.ledger.created(entry)
        return {"replica": str(target), "bytes": copied, "rate_bytes_per_s": rate, "duration_s": round(time.monotonic() - started, 3)}


def paced_copy(source: Path, target: Path, bytes_per_s: int, chunk_bytes: int = 1 << 20) -> int:
    """Copy every byte of source (holes included) to target at no more than bytes_per_s; return the bytes.

    The source is read with O_DIRECT: the load writes the volume through the loop device with
    direct I/O, so a buffered read could return stale cached blocks.
    """
    buffer = mmap.mmap(-1, chunk_bytes)  # page-aligned, as O_DIRECT wants
    pacer = Pacer(bytes_per_s)
    source_fd = os.open(source, os.O_RDONLY | os.O_DIRECT)
    try:
        with open(target, "wb") as out:
            while (length := os.readv(source_fd, [buffer])) > 0:
                out.write(buffer[:length])
                pacer.account(length)
    finally:
        os.close(source_fd)
        buffer.close()
    return pacer.moved_bytes
