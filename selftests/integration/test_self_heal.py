"""Self-healing start: a SIGKILLed run is cleaned by the next session; a live one is left alone."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.run.ledger import LEDGER_NAME, process_start_ticks
from iogate.run.resources import heal
from selftests.conftest import loop_devices

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

# Provisions a pool and a volume (loop devices, a mount, a cgroup), then waits to be killed.
VICTIM = """
import sys, time
from iogate.lab import load_lab
from iogate.run import Run
from iogate.arrays.local import LocalArray

lab = load_lab().model_copy(update={"workdir": sys.argv[1]})
run = Run.start(lab.workdir, "victim")
array = LocalArray(lab, run)
array.setup()
array.create_volume("v1", 64 << 20)
print("PROVISIONED", flush=True)
time.sleep(600)
"""


def _start_victim(work: Path) -> subprocess.Popen[str]:
    victim = subprocess.Popen([sys.executable, "-c", VICTIM, str(work)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert victim.stdout is not None and victim.stdout.readline().strip() == "PROVISIONED"
    return victim


def _kill(victim: subprocess.Popen[str]) -> None:
    if victim.poll() is None:
        os.kill(victim.pid, signal.SIGKILL)
    victim.wait()


def test_next_session_cleans_a_killed_run_and_reports_it(tmp_path: Path) -> None:
    work = tmp_path / "work"
    victim = _start_victim(work)
    try:
        _kill(victim)
        assert str(work) in loop_devices()  # the kill really left loop devices behind
        lab = tmp_path / "lab.yaml"
        lab.write_text((ROOT / "labs" / "local.yaml").read_text().replace("workdir: /var/tmp/iogate", f"workdir: {work}"))
        results = tmp_path / "allure"
        session = subprocess.run(
            [sys.executable, "-m", "pytest", "tests", "--lab", str(lab), "-k", "iogate_selects_nothing", "--alluredir", str(results),
             "-p", "no:randomly"],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
        )
    finally:
        _kill(victim)
        heal(work)  # whatever the session left (it should have left nothing)
    assert "iogate self-healing start" in session.stdout, session.stdout[-3000:] + session.stderr[-3000:]
    assert "detached" in session.stdout and "unmounted" in session.stdout and "removed cgroup" in session.stdout
    assert f"controller pid {victim.pid} gone" in session.stdout
    assert str(work) not in loop_devices()
    assert str(work) not in Path("/proc/mounts").read_text()
    environment = (results / "environment.properties").read_text()
    assert "iogate.selfheal" in environment and "dead run(s)" in environment


def test_live_controller_is_left_alone(tmp_path: Path) -> None:
    work = tmp_path / "work"
    victim = _start_victim(work)
    try:
        report = heal(work)
        assert report.cleaned == [] and len(report.left_alone) == 1
        assert f"controller alive (pid {victim.pid})" in report.left_alone[0]
        assert str(work) in loop_devices()  # untouched
    finally:
        _kill(victim)
    after = heal(work)
    assert any("detached" in line for line in after.cleaned)
    assert str(work) not in loop_devices()


def _ledger_with_file(work: Path, header: dict[str, object]) -> Path:
    run_dir = work / "runs" / "forged"
    run_dir.mkdir(parents=True)
    leftover = run_dir / "leftover.img"
    leftover.write_bytes(b"x")
    records = [
        {"op": "open", "run_id": "forged", **header},
        {"op": "intend", "id": 1, "kind": "file", "attrs": {"path": str(leftover)}},
        {"op": "created", "id": 1, "attrs": {}},
    ]
    (run_dir / LEDGER_NAME).write_text("".join(json.dumps(r) + "\n" for r in records))
    return leftover


def test_reused_pid_with_another_start_time_counts_as_gone(tmp_path: Path) -> None:
    # Our own pid is alive, but the run was opened by an earlier process that had it.
    me = os.getpid()
    start = process_start_ticks(me)
    assert start is not None
    leftover = _ledger_with_file(tmp_path, {"pid": me, "pid_start": start - 1, "host": socket.gethostname()})
    report = heal(tmp_path)
    assert leftover.exists() is False and len(report.cleaned) == 1 and f"controller pid {me} gone" in report.cleaned[0]


def test_same_pid_and_start_time_is_alive(tmp_path: Path) -> None:
    me = os.getpid()
    leftover = _ledger_with_file(tmp_path, {"pid": me, "pid_start": process_start_ticks(me), "host": socket.gethostname()})
    assert heal(tmp_path).left_alone and leftover.exists()


def test_run_of_another_host_is_left_alone(tmp_path: Path) -> None:
    leftover = _ledger_with_file(tmp_path, {"pid": 1, "pid_start": 1, "host": "some-other-controller"})
    report = heal(tmp_path)
    assert leftover.exists() and "controller elsewhere (host some-other-controller)" in report.left_alone[0]


def test_dead_pid_without_start_time_counts_as_gone(tmp_path: Path) -> None:
    child = subprocess.Popen(["true"])
    child.wait()  # reaped: its pid names no process now
    leftover = _ledger_with_file(tmp_path, {"pid": child.pid, "pid_start": None, "host": socket.gethostname()})
    assert heal(tmp_path).cleaned and not leftover.exists()
