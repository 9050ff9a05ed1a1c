"""The fault campaign (issue 15): inject a fault, see it named, bounded, and nothing left behind.

Each test injects one fault on the local lab in a workdir of its own and
records a row (the error the user sees, the time to detect it, whether work
went on afterwards, leftovers after teardown or after the next session's
self-healing start). The table prints at the end of the session; every test
asserts its own row: the error names the fault and the resource, detection
is bounded, and every leftover count is 0.

Faults under load (a LUN lost, the pool frozen, a namespace host lost, the
lab VM killed) are injected by a thread once fio runs; their detection time
counts from the injection.

Run: `.venv/bin/python -m pytest selftests/faults -m faults` (root, loop devices, network namespaces,
qemu: the lab VM row boots a guest of its own; IOGATE_SKIP_LABVM=1 skips it).
"""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.local import LocalArray
from iogate.arrays.static import StaticArray
from iogate.engines.choice import choose_engine
from iogate.engines.fio.runner import KILL_AFTER_S, STUCK_S, FioEngine
from iogate.engines.helper import require_complete
from iogate.engines.workload import Extent, JobSpec, RunPlan, WorkloadSpec
from iogate.errors import ArrayError, EngineError, GuardRefused, HostError, LabFileError
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.judging import no_io_errors
from iogate.lab import DEFAULT_LAB, DEFAULT_LIVENESS, DeviceIdentity, HostConfig, Lab, load_lab
from iogate.labs import netns
from iogate.metrics.types import Dir
from iogate.procedures.prefill import PREFILL
from iogate.run import Run
from iogate.run.resources import heal, marker_pids, release_all
from selftests.conftest import block_target
from selftests.exports import block_device
from selftests.faults.campaign import ROWS, FaultRow, changed_bytes, detect, leftovers
from selftests.netns_cluster import netns_cluster

pytestmark = [pytest.mark.faults, pytest.mark.skipif(os.geteuid() != 0, reason="loop devices and namespaces need root")]

ROOT = Path(__file__).resolve().parents[2]
BAD_LABS = ROOT / "selftests" / "data" / "labs_bad"
ZERO = {"loops": 0, "mounts": 0, "processes": 0, "cgroups": 0, "ledger": 0, "outside_bytes": 0, "netns": 0}
SHORT = WorkloadSpec("short", read_pct=50, runtime_s=1)


def record(row: FaultRow, *, bound_s: float, names: tuple[str, ...]) -> None:
    ROWS.append(row)
    for name in names:
        assert name in row.error, f"{row.fault}: error does not name {name!r}: {row.error}"
    assert row.detect_s <= bound_s, f"{row.fault}: detected after {row.detect_s:.1f} s (bound {bound_s} s)"
    assert row.went_on, f"{row.fault}: work did not go on afterwards"
    assert row.leftovers == ZERO, f"{row.fault}: left behind {row.leftovers}"


@contextmanager
def local(work: Path, **options: Any) -> Iterator[tuple[Lab, Run, LocalArray]]:
    base = load_lab(DEFAULT_LAB)
    lab = base.model_copy(update={"workdir": str(work),
                                  "array": base.array.model_copy(update={"options": {**base.array.options, **options}})})
    run = Run.start(work, "fault")
    array = LocalArray(lab, run)
    try:
        array.setup()
        yield lab, run, array
    finally:
        array.teardown()
        release_all(run.ledger)


def _still_works(lab: Lab, run: Run, array: LocalArray) -> bool:
    """Work goes on: a fresh volume on the same array takes a 1 s load."""
    _, connection, engine = block_target(lab, run, array, f"after{len(ROWS)}", 32 << 20)
    result = engine.run_plan(RunPlan("after", (JobSpec("after", SHORT, connection),)))
    return all(job[Dir.WRITE].ios > 0 for job in result.jobs)


# -- the controller killed (SIGKILL), then the next session starts -------------------------------
VICTIM = """
import sys, time
from iogate.run import resources
from iogate.lab import load_lab
from iogate.run import Run
from iogate.arrays.local import LocalArray
from iogate.hosts.initiator import Initiator
from iogate.hosts.guard import Guard
from iogate.hosts.connectors.block import BlockConnector
from iogate.engines.choice import choose_engine
from iogate.engines.fio.runner import KILL_AFTER_S, STUCK_S, FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec

stage = sys.argv[2]
lab = load_lab().model_copy(update={"workdir": sys.argv[1]})
if stage == "event":  # a pass at 1 byte/s: a big pool's pass, still running when the kill comes
    lab = lab.model_copy(update={"array": lab.array.model_copy(update={"options": {**lab.array.options, "dedupe_bytes_per_s": 1}})})
run = Run.start(lab.workdir, "victim")
array = LocalArray(lab, run)
array.setup()
volume = array.create_volume("v1", 256 << 20)
if stage == "provision":
    print("READY", flush=True); time.sleep(600)
if stage == "event":
    print("READY", flush=True); array.dedupe_run(); time.sleep(600)
if stage == "teardown":
    real = resources.release
    def slow(ledger, entries):
        if any(e.kind == "cgroup" for e in entries):  # the pool's turn: the volume is gone already
            print("READY", flush=True); time.sleep(600)
        return real(ledger, entries)
    import iogate.arrays.local as local_module
    local_module.release = slow
    array.teardown()
guard = Guard(); guard.admit(volume.identity)
initiator = Initiator.from_config(lab.hosts[0])
connection = BlockConnector(lab.protocols[0], run).connect(initiator, volume)
print("READY", flush=True)
# The prefill's shape at 4 KiB blocks, so it is still running when the kill comes.
fill = WorkloadSpec("p", read_pct=0, random_pct=0, bs=4 << 10, iodepth=1, time_based=False, runtime_s=0)
workload = fill if stage == "prefill" else WorkloadSpec("w", read_pct=50, runtime_s=120)
FioEngine(run, {initiator.name: initiator}, guard).run_plan(RunPlan(stage, (JobSpec("w", workload, connection),)))
"""


def _fio_running(work: Path) -> bool:
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline and cmdline[0].endswith(b"fio") and any(str(work).encode() in part for part in cmdline):
            return True
    return False


@pytest.mark.parametrize("stage", ["provision", "prefill", "load", "event", "teardown"])
def test_controller_sigkilled(stage: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    victim = subprocess.Popen([sys.executable, "-c", VICTIM, str(work), stage], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout is not None and victim.stdout.readline().strip() == "READY"
        deadline = time.monotonic() + 30
        while stage in ("prefill", "load") and not _fio_running(work) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert stage not in ("prefill", "load") or _fio_running(work)
        while stage == "event" and not marker_pids(f"{work}/runs") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert stage != "event" or marker_pids(f"{work}/runs"), "the dedupe pass never started"
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()
    assert any(leftovers(work).values())  # the kill left something behind
    started = time.monotonic()
    report = heal(work)  # what the next session does at its start
    detect_s = time.monotonic() - started
    went_on = Run.start(work, "next").run_dir.is_dir() and not report.failed
    row = FaultRow(f"SIGKILL controller during {stage}", "; ".join(report.cleaned), detect_s, went_on, leftovers(work))
    record(row, bound_s=60, names=(f"controller pid {victim.pid} gone",))


def test_pytest_sigkilled_during_baseline_then_next_session_heals(tmp_path: Path) -> None:
    """The issue's own case: pytest itself killed mid-load; the next session's start cleans up and says so."""
    work = tmp_path / "work"
    lab = tmp_path / "lab.yaml"
    lab.write_text((ROOT / "labs" / "local.yaml").read_text().replace("workdir: /var/tmp/iogate", f"workdir: {work}"))
    args = ["--lab", str(lab), "--profile", "smoke", "--results-db", str(tmp_path / "results.sqlite"), "-p", "no:cacheprovider"]
    victim = subprocess.Popen([sys.executable, "-m", "pytest", "tests/test_baseline.py", "-q", *args], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not _fio_running(work) and time.monotonic() < deadline and victim.poll() is None:
            time.sleep(0.2)
        assert _fio_running(work), "the baseline never started fio"
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()
    assert any(leftovers(work).values())
    started = time.monotonic()
    session = subprocess.run([sys.executable, "-m", "pytest", "tests", "-k", "iogate_selects_nothing", *args], cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
    detect_s = time.monotonic() - started
    lines = [line for line in session.stdout.splitlines() if line.startswith("iogate")]
    row = FaultRow("SIGKILL pytest during baseline load", "; ".join(lines), detect_s, session.returncode == 5, leftovers(work))
    # fio may have ended on its own while the next session started (a short prefill): whether
    # "killed fio" shows is timing; that nothing is left and the heal is reported is not.
    record(row, bound_s=120, names=("iogate self-healing start", "detached", f"controller pid {victim.pid} gone"))


# -- faults the running session sees and names ---------------------------------------------------
def test_fio_sigkilled_under_load(tmp_path: Path) -> None:
    work = tmp_path / "work"
    with local(work) as (lab, run, array):
        _, connection, engine = block_target(lab, run, array, "v1", 64 << 20)
        stop = threading.Event()

        def killer() -> None:
            while not stop.is_set():
                for proc in Path("/proc").iterdir():
                    try:
                        cmdline = (proc / "cmdline").read_bytes().split(b"\0")
                    except OSError:
                        continue
                    if cmdline[0].endswith(b"fio") and any(str(run.run_dir).encode() in c for c in cmdline):
                        os.kill(int(proc.name), signal.SIGKILL)
                        return
                time.sleep(0.1)

        thread = threading.Thread(target=killer, daemon=True)
        thread.start()
        long = WorkloadSpec("long", read_pct=50, runtime_s=60)
        error, detect_s = detect(lambda: engine.run_plan(RunPlan("long", (JobSpec("w", long, connection),))), EngineError)
        stop.set()
        went_on = _still_works(lab, run, array)
    record(FaultRow("SIGKILL fio under load", error, detect_s, went_on, leftovers(work)), bound_s=30, names=("host localhost", "fio"))


def test_io_past_the_engine_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crawling (or hung) array: fio does not end in its runtime + grace; the engine stops it and says so."""
    import iogate.engines.fio.runner as runner

    monkeypatch.setattr(runner, "GRACE_S", 2)
    work = tmp_path / "work"
    with local(work) as (lab, run, array):
        _, connection, engine = block_target(lab, run, array, "slow", 64 << 20)
        crawl = WorkloadSpec("crawl", read_pct=0, random_pct=0, time_based=False, runtime_s=1, size=Extent.of_bytes(64 << 20), rate_iops=20)
        error, detect_s = detect(lambda: engine.run_plan(RunPlan("p", (JobSpec("w", crawl, connection),))), EngineError)
        went_on = _still_works(lab, run, array)
    record(FaultRow("I/O past the engine's deadline", error, detect_s, went_on, leftovers(work)), bound_s=30,
           names=("host localhost", "did not end within 3 s", "hung"))


def test_thin_pool_full_under_prefill(tmp_path: Path) -> None:
    work = tmp_path / "work"
    with local(work, pool_size="320MiB", overcommit=True) as (lab, run, array):
        volume, connection, engine = block_target(lab, run, array, "big", 512 << 20)
        plan = RunPlan("prefill", (JobSpec("prefill-big", PREFILL, connection),))
        error, detect_s = detect(lambda: require_complete(plan, engine.run_plan(plan), "prefill"), EngineError)
        array.delete_volume(volume)
        went_on = _still_works(lab, run, array)
    record(FaultRow("thin pool full under prefill", error, detect_s, went_on, leftovers(work)), bound_s=120,
           names=("volume big", "host localhost", "errno", "bytes", "pool is full"))


def test_device_vanished_before_load(tmp_path: Path) -> None:
    work = tmp_path / "work"
    with local(work) as (lab, run, array):
        volume, connection, engine = block_target(lab, run, array, "gone", 32 << 20)
        subprocess.run(["losetup", "-d", block_device(volume)], check=True)  # detached behind the array's back
        # The /dev node stays (loop nodes are permanent); its identity is gone, so the guard refuses it.
        error, detect_s = detect(lambda: engine.run_plan(RunPlan("p", (JobSpec("w", SHORT, connection),))), GuardRefused)
        went_on = _still_works(lab, run, array)
    record(FaultRow("device detached before load", error, detect_s, went_on, leftovers(work)), bound_s=30,
           names=(block_device(volume), "no identity in sysfs"))


@contextmanager
def foreign_loop(tmp_path: Path, name: str) -> Iterator[tuple[str, Path]]:
    image = tmp_path / f"{name}.img"
    with image.open("wb") as handle:
        handle.truncate(64 << 20)
    device = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True, check=True).stdout.strip()
    try:
        yield device, image
    finally:
        subprocess.run(["losetup", "-d", device], check=False)


@pytest.mark.parametrize("use", ["mounted", "swap"])
def test_device_in_use_offered_by_the_lab(use: str, tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"
    with foreign_loop(tmp_path, use) as (device, image):
        if use == "mounted":
            subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
            mnt.mkdir()
            subprocess.run(["mount", device, str(mnt)], check=True)
        else:
            subprocess.run(["mkswap", "-q", device], check=True)
            subprocess.run(["swapon", device], check=True)
        subprocess.run(["sync"], check=True)
        before = image.read_bytes()
        try:
            guard = Guard(allowed=[DeviceIdentity(backing_file=str(image), destructive=True)])
            me = Initiator.from_config(HostConfig(name="me"))
            error, detect_s = detect(lambda: guard.check_device(me, device), GuardRefused)
            written = changed_bytes(before, image.read_bytes())  # before umount/swapoff write their own
        finally:
            subprocess.run(["umount", str(mnt)] if use == "mounted" else ["swapoff", device], check=False)
        guard.check_device(me, device) if use == "mounted" else None  # freed, the same device is admitted
    names = (device, str(mnt)) if use == "mounted" else (device, "active swap")
    left = leftovers(tmp_path)
    left["outside_bytes"] += written
    record(FaultRow(f"{use} device in the allow list", error, detect_s, True, left), bound_s=30, names=names)


def test_partitioned_device_with_file_system_offered(tmp_path: Path) -> None:
    from selftests.integration.test_guard_in_use import _write_mbr

    image = tmp_path / "parted.img"
    with image.open("wb") as handle:
        handle.truncate(64 << 20)
    _write_mbr(image)
    device = subprocess.run(["losetup", "--find", "--show", "--partscan", str(image)], capture_output=True, text=True,
                            check=True).stdout.strip()
    try:
        subprocess.run(["partx", "-a", device], capture_output=True, check=False)
        if not Path(f"{device}p1").is_block_device():
            pytest.skip(f"the kernel did not expose {device}p1")
        subprocess.run(["mkfs.ext4", "-q", "-F", f"{device}p1"], check=True)
        subprocess.run(["sync"], check=True)
        before = image.read_bytes()
        me = Initiator.from_config(HostConfig(name="me"))
        guard = Guard(allowed=[DeviceIdentity(backing_file=str(image))])
        error, detect_s = detect(lambda: guard.check_device(me, device), GuardRefused)
        written = changed_bytes(before, image.read_bytes())
        Guard(allowed=[DeviceIdentity(backing_file=str(image), destructive=True)]).check_device(me, device)  # the lab's word waives it
    finally:
        subprocess.run(["losetup", "-d", device], check=False)
    left = leftovers(tmp_path)
    left["outside_bytes"] += written
    record(FaultRow("partitioned device with ext4 offered", error, detect_s, True, left), bound_s=30,
           names=(device, "partition table with file systems", "ext4"))


class _Blind(Guard):
    def check(self, initiator: Initiator, connection: Connection) -> None:
        return None


def test_fio_abort_is_not_a_pass(tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    run = Run.start(tmp_path / "work", "abort")
    with foreign_loop(tmp_path, "abort") as (device, image):
        subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
        subprocess.run(["mount", device, str(mnt)], check=True)
        subprocess.run(["sync"], check=True)
        before = image.read_bytes()
        try:
            me = Initiator.from_config(HostConfig(name="localhost"))
            engine = FioEngine(run, {me.name: me}, _Blind())
            target = Connection("block", me.name, Volume("m", 64 << 20, DeviceIdentity(backing_file=str(image))), device, device)
            error, detect_s = detect(lambda: engine.run_plan(RunPlan("p", (JobSpec("w", SHORT, target),))), EngineError)
            written = changed_bytes(before, image.read_bytes())
        finally:
            subprocess.run(["umount", str(mnt)], check=False)
            release_all(run.ledger)
    left = leftovers(tmp_path)
    left["outside_bytes"] += written
    record(FaultRow("fio aborts (mounted, guard bypassed)", error, detect_s, True, left), bound_s=30,
           names=("fio aborted", device, "appears mounted"))


def test_job_without_io_fails_no_io_errors(tmp_path: Path) -> None:
    from selftests.unit.test_criteria_errors import _idle, real_run

    started = time.monotonic()
    verdict = no_io_errors.evaluate([_idle(job) for job in real_run("randrw.json").jobs], no_io_errors.Params())
    row = FaultRow("job did no I/O (json error 0)", verdict.detail, time.monotonic() - started, not verdict.passed, leftovers(tmp_path))
    record(row, bound_s=5, names=("did no I/O",))


# -- faults under load: the LUN lost, the pool frozen, a namespace host lost ----------------------------
class _Injector(threading.Thread):
    """Injects a fault once `ready()` says the load runs and delay_s more of I/O went by; keeps the time."""

    def __init__(self, ready: Callable[[], bool], inject: Callable[[], object], delay_s: float = 1.0, wait_s: float = 60) -> None:
        super().__init__(daemon=True, name="fault injector")
        self.ready, self.inject, self.delay_s, self.wait_s = ready, inject, delay_s, wait_s
        self.at: float | None = None
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._cancelled = False

    def run(self) -> None:
        try:
            deadline = time.monotonic() + self.wait_s
            while not self.ready():
                if time.monotonic() > deadline or self._cancelled:
                    raise AssertionError(f"the load never started within {self.wait_s} s: no fault injected")
                time.sleep(0.1)
            time.sleep(self.delay_s)
            with self._lock:
                if self._cancelled:
                    return
                self.inject()
                self.at = time.monotonic()
        except BaseException as exc:  # handed to the test by injected_at()
            self.error = exc

    def cancel(self) -> None:
        """After this returns the fault was injected or never will be (undo it after this)."""
        with self._lock:
            self._cancelled = True

    def injected_at(self) -> float:
        self.join(self.wait_s + self.delay_s + 30)
        if self.error is not None:
            raise self.error
        assert self.at is not None, "the fault was never injected"
        return self.at


def _no_fio_within(work: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while _fio_running(work) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _fio_running(work), f"fio still runs {seconds} s later"


def _settled(work: Path, within_s: float = 10) -> dict[str, int]:
    """Leftovers once the kernel is done: a busy pool unmounted lazily and its loop devices (detached
    while a killed job still held them) are released asynchronously after the last user is gone."""
    deadline = time.monotonic() + within_s
    while any((left := leftovers(work)).values()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def test_lun_lost_under_load(tmp_path: Path) -> None:
    """The LUN under a running load goes away: every read and write of its device fails with EIO.

    Why this fault: a storage engineer's "the LUN went away" (paths lost, the LUN unmapped or offlined)
    is, on the host, every request to the device failing with EIO, in flight or new. A loop device
    cannot vanish while fio holds it (LOOP_CLR_FD only marks it for removal at last close,
    LOOP_CTL_REMOVE refuses a busy one, LOOP_CHANGE_FD takes read-only devices only), and shrinking it
    to 0 bytes (truncate + LOOP_SET_CAPACITY) gives ENOSPC on writes and 0-byte reads fio counts as
    done, i.e. a full volume, not a lost one. What fails a loop device the way a lost LUN fails is its
    backing storage failing: the XFS holding the volume's backing file shut down (`xfs_io -x -c
    shutdown`, what XFS does by itself when its disk fails) answers the loop driver's every read and
    write with EIO. That pool is the volume's own (a second pool of the array); the session's pool
    goes on serving.
    """
    work = tmp_path / "work"
    with local(work) as (lab, run, array):
        lun_run = Run.start(work, "lun")
        failing = LocalArray(lab, lun_run)
        try:
            failing.setup()
            volume, connection, engine = block_target(lab, lun_run, failing, "lun", 64 << 20)
            device = block_device(volume)
            shutdown = ["xfs_io", "-x", "-c", "shutdown", str(failing.pool_dir)]
            injector = _Injector(lambda: _fio_running(work), lambda: subprocess.run(shutdown, check=True, capture_output=True))
            injector.start()
            load = WorkloadSpec("load", read_pct=50, runtime_s=30)  # a cap: the first EIO ends the job
            result = engine.run_plan(RunPlan("load", (JobSpec("w", load, connection),)))
            detect_s = time.monotonic() - injector.injected_at()
            verdict = no_io_errors.evaluate(result, no_io_errors.Params())
            # What fio said beside its json (the report attaches both): the io_u error line names the device.
            said = "\n".join(Path(result.artifacts[label]).read_text().split("\n{", 1)[0]
                             for label in ("localhost fio stderr", "localhost fio json+") if label in result.artifacts)
            io_error = next((line for line in said.splitlines() if "io_u error" in line), "(fio named no file)")
            error = f"no_io_errors {'passed' if verdict.passed else 'FAILED'}: {verdict.detail}; fio: {io_error}"
            went_on = _still_works(lab, run, array)
        finally:
            try:
                failing.teardown()
            finally:
                release_all(lun_run.ledger)
    assert not verdict.passed
    record(FaultRow("LUN lost under load (pool shut down)", error, detect_s, went_on, leftovers(work)), bound_s=30,
           names=("FAILED", "error 5 (EIO", device, "Input/output error"))


def test_pool_frozen_under_write_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The array's pool hangs under a write load: its I/O neither completes nor fails.

    `fsfreeze -f` on the pool's XFS: the loop driver's writes into the volume's backing file wait for
    the thaw, as the writes of a host wait on an array whose back end stalls. fio cannot be stopped
    (its I/O waits uninterruptibly, `timeout`'s TERM and KILL do nothing): the engine gives up
    waiting after runtime + GRACE_S + KILL_AFTER_S + STUCK_S and names the hang and the device. The
    pool is thawed in a finally (and by a timer, should the engine hang), and the session goes on.
    GRACE_S (120 s in a session) is shortened to 3 s to keep the campaign short; the rest of the
    watchdog is the engine's own.
    """
    import iogate.engines.fio.runner as runner

    grace_s, runtime_s = 3, 4
    monkeypatch.setattr(runner, "GRACE_S", grace_s)
    work = tmp_path / "work"
    with local(work) as (lab, run, array):
        volume, connection, engine = block_target(lab, run, array, "frozen", 64 << 20)
        pool = str(array.pool_dir)
        frozen = threading.Event()
        lock = threading.Lock()

        def freeze() -> None:
            subprocess.run(["fsfreeze", "-f", pool], check=True, capture_output=True)
            frozen.set()

        def thaw() -> None:
            with lock:
                if frozen.is_set():
                    subprocess.run(["fsfreeze", "-u", pool], check=True, capture_output=True)
                    frozen.clear()

        safety = threading.Timer(runtime_s + grace_s + KILL_AFTER_S + STUCK_S + 40, thaw)  # never leave the pool frozen
        safety.daemon = True
        injector = _Injector(lambda: _fio_running(work), freeze)
        writes = WorkloadSpec("writes", read_pct=0, runtime_s=runtime_s)
        try:
            safety.start()
            injector.start()
            error, _ = detect(lambda: engine.run_plan(RunPlan("frozen", (JobSpec("w", writes, connection),))), EngineError)
            detect_s = time.monotonic() - injector.injected_at()
            gave_up_while_frozen = frozen.is_set()
        finally:
            safety.cancel()
            injector.cancel()
            thaw()
        _no_fio_within(work, 30)  # thawed, the stuck I/O completes and the killed fio ends
        went_on = _still_works(lab, run, array)
    assert gave_up_while_frozen, "the engine only returned once the safety timer had thawed the pool"
    bound_s = runtime_s + grace_s + KILL_AFTER_S + STUCK_S + 10
    record(FaultRow("pool frozen under write load", error, detect_s, went_on, leftovers(work)), bound_s=bound_s,
           names=("host localhost", "hung", block_device(volume), "volume frozen"))


# The engine a netns session opens: fio client/server with the lab's host_liveness (defaults: a probe
# every 5 s, each at most 10 s, a host lost after 20 s without an answer; iogate.lab.HostLiveness).
# Link down (silence: no RST, no FIN) and sshd killed (refused at once) are both seen by the
# watchdog within the deadline of the loss (+ its 1 s check); the run then stops: the client gets
# LOSS_STOP_S, the other host's jobs are stopped over ssh. The bound is the deadline plus slack for
# that stop and a loaded machine, not a tight figure: before this deadline the link-down row took
# 55-67 s (4 ssh connect attempts 3+6+9 s apart, then a 20 s wait for the client).
HOST_LOST_SLACK_S = 30


@pytest.mark.parametrize("loss", ["link down", "sshd killed"])
def test_namespace_host_lost_under_load(loss: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    subnet = {"link down": 93, "sshd killed": 94}[loss]
    with netns_cluster(work, f"f{subnet}", count=2, subnet_base=subnet) as cluster:
        engine = choose_engine(cluster.run, cluster.initiators, cluster.guard)
        lost, other = cluster.hosts
        lost_dir = netns.lab_run_dir(cluster.lab) / "netns" / lost.name

        def jobs_run() -> bool:  # the servers fork a job process beside their listener
            dirs = [netns.lab_run_dir(cluster.lab) / "netns" / h.name for h in cluster.hosts]
            return all(len(marker_pids(netns.fio_marker(d))) > 1 for d in dirs)

        def inject() -> None:
            if loss == "link down":
                # The host's own end of its link, as a pulled cable or a dead NIC: no RST, no FIN, silence.
                subprocess.run(["ip", "-n", lost.namespace, "link", "set", "dev", netns.PEER_IFNAME, "down"], check=True)
            else:
                for pid in marker_pids(netns.sshd_marker(lost_dir)):
                    os.kill(pid, signal.SIGKILL)

        injector = _Injector(jobs_run, inject)
        injector.start()
        load = WorkloadSpec("load", read_pct=50, runtime_s=50)  # a cap far beyond the fault
        plan = RunPlan("load", tuple(JobSpec(f"load-{h}", load, target) for h, target in cluster.targets.items()))
        try:
            error, _ = detect(lambda: engine.run_plan(plan), HostError)
        finally:
            injector.cancel()
        detect_s = time.monotonic() - injector.injected_at()
        # The rest of the session goes on: the other host takes its next load.
        after = engine.run_plan(RunPlan("after", (JobSpec(f"after-{other.name}", SHORT, cluster.targets[other.name]),)))
        went_on = all(job[Dir.WRITE].ios > 0 for job in after.jobs)
    assert f"host {other.name}:" not in error.split("(run stopped")[0], f"the healthy host {other.name} was blamed: {error}"
    record(FaultRow(f"netns host {loss} under load", error, detect_s, went_on, _settled(work)),
           bound_s=DEFAULT_LIVENESS.deadline_s + HOST_LOST_SLACK_S, names=(f"host {lost.name}: stopped answering",))


# -- the lab VM killed under load -------------------------------------------------------------------
LABVM_FILE = ROOT / "labs" / "labvm.yaml"
# A host whose transport breaks mid-load is seen when the break reaches the controller: the VM's
# qemu holds the controller's end of its ssh (user-mode network, hostfwd), so its death closes it at
# once. The bound is the engine's next safeguard, the watchdog's deadline, plus slack; fio's own
# bound (runtime + grace + KILL_AFTER_S + STUCK_S) would be minutes.
LABVM_LOST_BOUND_S = DEFAULT_LIVENESS.deadline_s + HOST_LOST_SLACK_S


def _fio_over_ssh(run: Run) -> bool:
    """fio runs in the guest: this run's ssh carrying its fio command is up."""
    return any("--output=out.json" in " ".join(_cmdline(pid)) for pid in marker_pids(f"/{run.run_id}/"))


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


@pytest.mark.labvm  # boots a guest: `-m "faults and not labvm"` leaves it out
def test_lab_vm_killed_under_load(tmp_path: Path) -> None:
    """The lab VM (array and initiator in one qemu guest) is SIGKILLed while fio writes its iSCSI LUN.

    The guest boots here (~60-90 s under TCG), not from the labvm tier's session fixture: that guest
    serves the tiers after this one, and this test kills its own. Expected: the engine names the
    host lost and the volume whose I/O was lost, the session's teardown finds the guest's LUN,
    target and iSCSI session gone with the VM (journalled `vanishes_with` its qemu), nothing is left
    on this machine, and the session goes on (a local-lab load runs afterwards).
    """
    from iogate.arrays.linux_target import LinuxTarget
    from iogate.lab import registry
    from iogate.labs.labvm import image as image_mod
    from iogate.labs.labvm import vm as vm_mod
    from iogate.labs.labvm.vanishing import vanishing_with

    if os.environ.get("IOGATE_SKIP_LABVM") == "1":
        pytest.skip("lab VM fault skipped: IOGATE_SKIP_LABVM=1")
    work = tmp_path / "work"
    run = Run.start(work, "vmkill")
    guest_vm = vm_mod.boot(run, image_mod.ensure_image())
    try:
        base = load_lab(LABVM_FILE)
        where = {"transport": guest_vm.transport, "ssh_key": guest_vm.ssh_key}
        # Plain LUNs: no VDO (its index alone takes minutes under TCG) and no md mirror.
        options = {**base.array.options, **where, "vdo": False, "mirror": False}
        # The array's volumes and the guest host's own leftovers (its working directory) vanish with the VM.
        lab = vanishing_with(base.model_copy(update={"workdir": str(work), "array": base.array.model_copy(update={"options": options}),
                                                     "hosts": [host.model_copy(update=where) for host in base.hosts]}), guest_vm.marker)
        array = LinuxTarget(lab, run)
        array.setup()
        volume = array.create_volume("v1", 256 << 20, export="iscsi")
        protocol = lab.protocol("iscsi")
        connector = registry.connector_class(protocol.connector)(protocol, run)
        guest = Initiator.from_config(lab.hosts[0])
        connection = connector.connect(guest, volume)
        guard = Guard()
        guard.admit(volume.identity)
        engine = FioEngine(run, {guest.name: guest}, guard)
        # fio starts slowly in an emulated guest: a few seconds of I/O before the kill.
        injector = _Injector(lambda: _fio_over_ssh(run), lambda: os.kill(guest_vm.pid, signal.SIGKILL), delay_s=8, wait_s=180)
        injector.start()
        load = WorkloadSpec("load", read_pct=50, runtime_s=120)  # a cap far beyond the fault
        try:
            error, _ = detect(lambda: engine.run_plan(RunPlan("load", (JobSpec("w", load, connection),))), HostError)
        finally:
            injector.cancel()
        detect_s = time.monotonic() - injector.injected_at()
        # The session's own teardown: the LUN, target and session vanished with the VM, nothing to undo.
        connector.disconnect(guest, connection)
        array.teardown()
    finally:
        try:
            guest_vm.stop()
        finally:
            release_all(run.ledger)
    with local(work) as (local_lab, local_run, local_array):
        went_on = _still_works(local_lab, local_run, local_array)
    record(FaultRow("lab VM (qemu) SIGKILLed under load", error, detect_s, went_on, _settled(work)), bound_s=LABVM_LOST_BOUND_S,
           names=("host labvm lost during the load", f"{connection.device} (volume {volume.name})"))


# -- array actions (static lab hooks) that fail ---------------------------------------------------
class _Http500(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(500)
        self.end_headers()
        self.wfile.write(b"array says: internal error")

    def log_message(self, *args: object) -> None:
        return None


@contextmanager
def http_500() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Http500)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def _static(tmp_path: Path, hooks: dict[str, Any]) -> tuple[StaticArray, Run]:
    base = load_lab(DEFAULT_LAB)
    volumes = [{"name": "lun1", "size": "1GiB", "protocol": "block", "identity": {"serial": "FAULT1"}}]
    array_config = base.array.model_copy(update={"driver": "static", "options": {"volumes": volumes, "hooks": hooks}})
    lab = base.model_copy(update={"workdir": str(tmp_path / "work"), "array": array_config})
    run = Run.start(lab.workdir, "hooks")
    return StaticArray(lab, run), run


@pytest.mark.parametrize("fault", ["exit 1", "HTTP 500", "timeout", "unreachable"])
def test_array_action_fails(fault: str, tmp_path: Path) -> None:
    with http_500() as url:
        hook = {
            "exit 1": {"command": "echo snapshot quota exceeded >&2; exit 1"},
            "HTTP 500": {"http": {"url": f"{url}/api/dedupe"}},
            "timeout": {"command": "sleep 30", "timeout_s": 1},
            "unreachable": {"http": {"url": "http://127.0.0.1:9/api/dedupe"}, "timeout_s": 5},
        }[fault]
        array, run = _static(tmp_path, {"dedupe": hook, "replicate": {"command": "true"}})
        error, detect_s = detect(array.dedupe_run, ArrayError)
    went_on = array.replicate(array.create_volume("v", 1 << 20, export="block"))["ok"]
    release_all(run.ledger)
    names = {"exit 1": ("`dedupe` hook failed", "exited 1", "quota exceeded"), "HTTP 500": ("`dedupe` hook failed", "HTTP 500"),
             "timeout": ("`dedupe` hook failed", "no end after 1 s"), "unreachable": ("`dedupe` hook failed", "127.0.0.1")}[fault]
    record(FaultRow(f"array action: {fault}", error, detect_s, went_on, leftovers(tmp_path)), bound_s=15, names=names)


# -- a host that cannot be reached, and input a user can get wrong --------------------------------
def test_host_unreachable(tmp_path: Path) -> None:
    host = Initiator.from_config(HostConfig(name="array-side", transport="ssh://root@127.0.0.1:1"))
    error, detect_s = detect(lambda: host.run("true"), HostError)
    went_on = Initiator.from_config(HostConfig(name="localhost")).run("true").rc == 0
    record(FaultRow("host unreachable (ssh refused)", error, detect_s, went_on, leftovers(tmp_path)), bound_s=30,
           names=("host array-side", "Connection refused"))


@pytest.mark.parametrize("name", ["volumes_exceed_pool", "pool_size_beyond_any_fs", "secret_env_unset", "workdir_root"])
def test_bad_lab_refused_before_provisioning(name: str, tmp_path: Path) -> None:
    path = BAD_LABS / f"{name}.yaml"
    error, detect_s = detect(lambda: load_lab(path), LabFileError)
    went_on = load_lab(DEFAULT_LAB).name == "local"
    record(FaultRow(f"lab file: {name}", error, detect_s, went_on, leftovers(tmp_path)), bound_s=10, names=(str(path), " line "))
    assert not Path("/var/tmp/iogate-labs-bad").exists()
