"""A run killed with SIGKILL mid-fio leaves a ledger; cleanup removes everything."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from selftests.conftest import loop_devices

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

VICTIM = """
import sys
from iogate.lab import load_lab
from iogate.run import Run
from iogate.arrays.local import LocalArray
from iogate.hosts.initiator import Initiator
from iogate.hosts.guard import Guard
from iogate.hosts.connectors.block import BlockConnector
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec

lab = load_lab().model_copy(update={"workdir": sys.argv[1]})
run = Run.start(lab.workdir, "victim")
array = LocalArray(lab, run)
array.setup()
volume = array.create_volume("v1", 64 << 20)
array.snapshot_create(volume, "s1")
guard = Guard()
guard.admit(volume.identity)
initiator = Initiator.from_config(lab.hosts[0])
connection = BlockConnector(lab.protocols[0], run).connect(initiator, volume)
print("RUNNING", flush=True)
FioEngine(run, {initiator.name: initiator}, guard).run_plan(
    RunPlan("long", (JobSpec("w", WorkloadSpec("w", read_pct=50, runtime_s=120), connection),))
)
"""


def fio_processes(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", "fio"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line]


def test_sigkill_mid_fio_then_cleanup(tmp_path: Path) -> None:
    work = tmp_path / "work"
    victim = subprocess.Popen([sys.executable, "-c", VICTIM, str(work)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout is not None and victim.stdout.readline().strip() == "RUNNING"
        deadline = time.monotonic() + 30
        while not fio_processes(str(work)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert fio_processes(str(work)), "fio never started"
        time.sleep(1)
    finally:
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
    assert str(work) in loop_devices()  # the kill really left things behind

    done = subprocess.run([sys.executable, "-m", "iogate", "cleanup", "--workdir", str(work)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = done.stdout
    assert "killed fio on localhost" in report
    assert "detached" in report and "unmounted" in report and "removed cgroup" in report

    assert fio_processes(str(work)) == []
    assert str(work) not in loop_devices()
    assert str(work) not in Path("/proc/mounts").read_text()
    assert not [p for p in Path("/sys/fs/cgroup/blkio").iterdir() if f"victim-{victim.pid}" in p.name]

    again = subprocess.run([sys.executable, "-m", "iogate", "cleanup", "--workdir", str(work)],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "nothing left behind" in again.stdout
