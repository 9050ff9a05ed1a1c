"""The fault campaign (issue 15): inject a fault, see it named, bounded, and nothing left behind.

Each test injects one fault on the local lab in a workdir of its own and
records a row (the error the user sees, the time to detect it, whether work
went on afterwards, leftovers after teardown or after the next session's
self-healing start). The table prints at the end of the session; every test
asserts its own row: the error names the fault and the resource, detection
is bounded, and every leftover count is 0.

Run: `.venv/bin/python -m pytest selftests/faults -m faults` (root, loop devices).
"""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from criteria import no_io_errors
from iogate.arrays.base import Volume
from iogate.arrays.local import LocalArray
from iogate.arrays.static import StaticArray
from iogate.engines.fio.runner import FioEngine
from iogate.engines.helper import require_complete
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import ArrayError, EngineError, GuardRefused, HostError, LabFileError
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DEFAULT_LAB, DeviceIdentity, HostConfig, Lab, load_lab
from iogate.metrics.types import Dir
from iogate.procedures.prefill import PREFILL
from iogate.run import Run
from iogate.run.resources import heal, marker_pids, release_all
from selftests.conftest import block_target
from selftests.exports import block_device
from selftests.faults.campaign import ROWS, FaultRow, changed_bytes, detect, leftovers

pytestmark = [pytest.mark.faults, pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root")]

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
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec

stage = sys.argv[2]
lab = load_lab().model_copy(update={"workdir": sys.argv[1]})
run = Run.start(lab.workdir, "victim")
array = LocalArray(lab, run)
array.setup()
volume = array.create_volume("v1", 256 << 20)
if stage == "provision":
    print("READY", flush=True); time.sleep(600)
if stage == "event":  # duperemove on PATH is the campaign's stand-in for a long dedupe pass
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
fill = WorkloadSpec("p", read_pct=0, random_pct=0, bs="4k", iodepth=1, time_based=False, runtime_s=0)
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


def _slow_duperemove(tmp_path: Path) -> Path:
    """A `duperemove` that runs for minutes (a big pool's pass), its arguments on its command line."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "duperemove"
    fake.write_text(f'#!/bin/sh\nexec {sys.executable} -c "import time; time.sleep(600)" "$@"\n')
    fake.chmod(0o755)
    return bin_dir


@pytest.mark.parametrize("stage", ["provision", "prefill", "load", "event", "teardown"])
def test_controller_sigkilled(stage: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    env = {**os.environ, "PATH": f"{_slow_duperemove(tmp_path)}:{os.environ['PATH']}"} if stage == "event" else None
    victim = subprocess.Popen([sys.executable, "-c", VICTIM, str(work), stage], cwd=ROOT, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert victim.stdout is not None and victim.stdout.readline().strip() == "READY"
        deadline = time.monotonic() + 30
        while stage in ("prefill", "load") and not _fio_running(work) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert stage not in ("prefill", "load") or _fio_running(work)
        while stage == "event" and not marker_pids(f"{work}/runs") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert stage != "event" or marker_pids(f"{work}/runs"), "duperemove never started"
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
        crawl = WorkloadSpec("crawl", read_pct=0, random_pct=0, time_based=False, runtime_s=1, size="64m", rate_iops=20)
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
    verdict = no_io_errors.evaluate([_idle(job) for job in real_run("randrw.json").jobs])
    row = FaultRow("job did no I/O (json error 0)", verdict.detail, time.monotonic() - started, not verdict.passed, leftovers(tmp_path))
    record(row, bound_s=5, names=("did no I/O",))


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
