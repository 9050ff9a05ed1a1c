"""A fio killed by someone else is an engine error (the point is lost), never a stop IOGate asked for.

The fresh-clone gate of 2026-11-28: a sweep point whose fio was SIGKILLed mid-run was read as measured. With a
live judge fio runs with --status-interval=1, so its output file already holds a status report each second;
killed, it writes no final report and no per-second logs, and the last status report read like a short run.
fio 3.33, measured on this machine (6 s runs, SIGINT or SIGKILL at 3.2 s): SIGINT -> "fio: terminating on
signal 2", exit 128, a final report after that line, its logs; SIGKILL -> exit 137, no line, no logs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from testinfra.backend.base import CommandResult

from iogate.arrays.base import Volume
from iogate.engines.fio import runner
from iogate.engines.fio.aborts import unfinished
from iogate.engines.fio.runner import FioEngine
from iogate.engines.stopping import run_watched
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import EngineError
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.judging.live import PointWatch
from iogate.lab import DeviceIdentity, HostConfig
from iogate.metrics.types import RunStop
from iogate.run import Run
from iogate.run.resources import release_all

_SECTION = {"io_bytes": 4096, "bw_bytes": 4096, "iops": 1.0, "runtime": 1000, "total_ios": 1,
            "clat_ns": {"min": 5, "max": 5, "mean": 5.0, "stddev": 0.0, "N": 1}}
_IDLE = {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}


def report(stamp_ms: int) -> str:
    return json.dumps({"fio version": "fio-3.33", "timestamp_ms": stamp_ms, "jobs": [
        {"jobname": "w", "error": 0, "elapsed": 3, "job_runtime": 1000, "read": _IDLE, "write": _SECTION, "trim": _IDLE}]}) + "\n"


STATUS = report(1_000_000) + report(1_001_000)  # two status reports: all a killed fio leaves
SIGINT_LINE = "\nfio: terminating on signal 2\n"


# -- the rule, case by case -------------------------------------------------------------------------------
def test_an_end_of_its_own_or_with_failed_jobs_stands() -> None:
    assert unfinished(0, STATUS + report(1_002_000), stop_asked=False, threads=1) is None
    assert unfinished(1, STATUS + report(1_002_000), stop_asked=False, threads=1) is None  # a job failed: judged
    # fio's exit value counts the failed jobs: 130 of 200 clones failing is that count, not a signal.
    assert unfinished(130, STATUS, stop_asked=False, threads=200) is None


def test_the_stop_we_asked_for_answered_with_a_final_report_stands() -> None:
    assert unfinished(128, STATUS + SIGINT_LINE + report(1_002_100), stop_asked=True, threads=16) is None
    # fio ended on its own just before our SIGINT reached it: exit 0, no line.
    assert unfinished(0, STATUS + report(1_002_000), stop_asked=True, threads=16) is None


def test_a_killed_fio_is_lost_whether_or_not_we_were_stopping_it() -> None:
    killed = unfinished(137, STATUS, stop_asked=False, threads=16)
    assert killed is not None and "exit 137 (SIGKILL)" in killed and "killed by someone else" in killed
    assert "the point is lost" in killed
    stopping = unfinished(137, STATUS, stop_asked=True, threads=16)
    assert stopping is not None and "while IOGate was stopping it" in stopping
    # The local transport reports a process killed by a signal as its negative number.
    signalled = unfinished(-9, "", stop_asked=True, threads=1)
    assert signalled is not None and "killed by SIGKILL (exit -9)" in signalled


def test_our_sigint_without_the_final_report_after_it_is_a_death_too() -> None:
    died = unfinished(137, STATUS + SIGINT_LINE, stop_asked=True, threads=16)
    assert died is not None and "without its final report" in died


def test_a_signal_nobody_here_sent_is_an_interruption() -> None:
    interrupted = unfinished(128, STATUS + SIGINT_LINE + report(1_002_100), stop_asked=False, threads=1)
    assert interrupted is not None and "interrupted by SIGINT" in interrupted
    term = unfinished(128, "\nfio: terminating on signal 15\n" + report(1_002_100), stop_asked=True, threads=1)
    assert term is not None and "interrupted by SIGTERM" in term  # ours is SIGINT only


# -- through the engine and the live judge ------------------------------------------------------------------
class _Blind(Guard):
    def check(self, initiator: Initiator, connection: Connection) -> None:
        return None


def _fake_fio(output: str, rc: int):  # type: ignore[no-untyped-def]
    """What _bounded returns for a fio that left `output` as its out.json and exited `rc` (no logs)."""

    def bounded(initiator: Initiator, command: str, wait_s: float) -> CommandResult:
        work = re.search(r"cd (\S+) &&", command)
        assert work is not None, command
        Path(work.group(1).strip("'"), "out.json").write_text(output)
        return CommandResult(None, rc, command.encode(), "", "")  # type: ignore[arg-type]

    return bounded


class _Asked(runner._Steer):
    """The steer of a point whose live judge asked for the stop: it sent its SIGINT (nothing to signal here)."""

    def run(self) -> None:
        self.stopped = True
        self.control.measuring()


def _point(tmp_path: Path, name: str) -> tuple[Run, Initiator, RunPlan]:
    run = Run.start(tmp_path / "work", name)
    me = Initiator.from_config(HostConfig(name="localhost"))
    volume = Volume("lun7", 64 << 20, DeviceIdentity(backing_file="/pool/lun7.img"))
    plan = RunPlan("rd70-4k-t16", (JobSpec("w", WorkloadSpec("w", read_pct=0, runtime_s=4), Connection.to_device(
        "block", me.name, volume, "/dev/loop97")),))
    return run, me, plan


def test_a_killed_point_under_a_live_judge_that_decided_a_stall_is_an_engine_error(tmp_path: Path,
                                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep-kill case: the judge saw the dead fio's silence as a stall and asked for the stop; fio was
    already gone (exit 137, status reports only). No result, so no RunStop: the sweep's expected_points names
    the point."""
    monkeypatch.setattr(runner, "_bounded", _fake_fio(STATUS, 137))
    monkeypatch.setattr(runner, "_Steer", _Asked)
    run, me, plan = _point(tmp_path, "killed")
    watch = PointWatch(planned_s=4)
    watch.decision, watch.decided_ms = RunStop("fail_fast", 2.0, 4.0, "no_stall: localhost/w completed no I/O for 2 s"), 1
    try:
        with pytest.raises(EngineError, match=r"host localhost: fio died: exit 137 \(SIGKILL\) .* while IOGate was stopping it"):
            run_watched(FioEngine(run, {me.name: me}, _Blind()), plan, watch)
    finally:
        release_all(run.ledger)


def test_the_same_point_answering_our_stop_is_a_stopped_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness above, with fio answering the SIGINT as it does: the stop stands, with its RunStop."""
    monkeypatch.setattr(runner, "_bounded", _fake_fio(STATUS + SIGINT_LINE + report(1_002_100), 128))
    monkeypatch.setattr(runner, "_Steer", _Asked)
    run, me, plan = _point(tmp_path, "stopped")
    watch = PointWatch(planned_s=4)
    watch.decision, watch.decided_ms = RunStop("fail_fast", 2.0, 4.0, "no_stall: localhost/w completed no I/O for 2 s"), 1
    try:
        result = run_watched(FioEngine(run, {me.name: me}, _Blind()), plan, watch)
    finally:
        release_all(run.ledger)
    assert result.stop is not None and result.stop.kind == "fail_fast"
    assert result.total("write").ios == 1


def test_a_killed_point_without_a_live_judge_is_an_engine_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "_bounded", _fake_fio(STATUS, 137))
    run, me, plan = _point(tmp_path, "killed-plain")
    try:
        with pytest.raises(EngineError, match=r"fio died: exit 137 \(SIGKILL\) without saying it was terminating"):
            FioEngine(run, {me.name: me}, _Blind()).run_plan(plan)
    finally:
        release_all(run.ledger)
