"""A fio interrupted by a signal nobody in IOGate sent is an error naming the signal, not a short clean run.

fio answers SIGINT/SIGTERM by writing "fio: terminating on signal N" into its output and then a
complete-looking report (error 0) of the part it ran: the real fio 3.33 file in
shared/data/real-outputs read 48 s of a 5 min run that way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from testinfra.backend.base import CommandResult

from iogate.arrays.base import Volume
from iogate.engines.fio import runner
from iogate.engines.fio.aborts import interrupted_message, terminating_signal
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import EngineError
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, HostConfig
from iogate.run import Run
from iogate.run.resources import release_all

_SECTION = {"io_bytes": 4096, "bw_bytes": 4096, "iops": 1.0, "runtime": 1000, "total_ios": 1,
            "clat_ns": {"min": 5, "max": 5, "mean": 5.0, "stddev": 0.0, "N": 1}}
_IDLE = {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}
REPORT = json.dumps({"fio version": "fio-3.33", "timestamp_ms": 1_000_000, "jobs": [
    {"jobname": "w", "error": 0, "job_runtime": 1000, "read": _IDLE, "write": _SECTION, "trim": _IDLE}]})


def test_the_signal_line_is_found_with_or_without_a_server_name() -> None:
    assert terminating_signal("\nfio: terminating on signal 2\n{") == 2
    assert terminating_signal("<h1> fio: terminating on signal 15\n") == 15
    assert terminating_signal('{"jobname": "fio: terminating on signal 2"}') is None  # not at a line start
    assert terminating_signal("fio: this platform does not support process shared mutexes\n") is None
    assert interrupted_message("fio: terminating on signal 9") is not None
    assert "SIGKILL" in str(interrupted_message("fio: terminating on signal 9"))


class _Blind(Guard):
    def check(self, initiator: Initiator, connection: Connection) -> None:
        return None


def _fake_fio(output: str):  # type: ignore[no-untyped-def]
    """What _bounded returns for a fio that wrote `output` as its out.json and exited 0."""

    def bounded(initiator: Initiator, command: str, wait_s: float) -> CommandResult:
        work = re.search(r"cd (\S+) &&", command)
        assert work is not None, command
        Path(work.group(1).strip("'"), "out.json").write_text(output)
        return CommandResult(None, 0, command.encode(), "", "")  # type: ignore[arg-type]

    return bounded


def test_an_interrupted_fio_is_an_engine_error_naming_the_signal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "_bounded", _fake_fio("\nfio: terminating on signal 2\n" + REPORT))
    run = Run.start(tmp_path / "work", "interrupted")
    me = Initiator.from_config(HostConfig(name="localhost"))
    volume = Volume("lun7", 64 << 20, DeviceIdentity(backing_file="/pool/lun7.img"))
    plan = RunPlan("p", (JobSpec("w", WorkloadSpec("w", read_pct=0, runtime_s=2),
                                 Connection.to_device("block", me.name, volume, "/dev/loop97")),))
    try:
        with pytest.raises(EngineError, match=r"host localhost: fio was interrupted by SIGINT \(\"fio: terminating on signal 2\"\)"):
            FioEngine(run, {me.name: me}, _Blind()).run_plan(plan)
    finally:
        release_all(run.ledger)


def test_the_same_fio_without_the_signal_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness above, with fio's report alone: a result, so the error there came from the signal line."""
    monkeypatch.setattr(runner, "_bounded", _fake_fio(REPORT))
    run = Run.start(tmp_path / "work", "clean")
    me = Initiator.from_config(HostConfig(name="localhost"))
    volume = Volume("lun7", 64 << 20, DeviceIdentity(backing_file="/pool/lun7.img"))
    plan = RunPlan("p", (JobSpec("w", WorkloadSpec("w", read_pct=0, runtime_s=2),
                                 Connection.to_device("block", me.name, volume, "/dev/loop97")),))
    try:
        result = FioEngine(run, {me.name: me}, _Blind()).run_plan(plan)
    finally:
        release_all(run.ledger)
    assert result.total("write").iops == 1.0
    # No log lines: the span runs the write runtime (1000 ms) back from the report (1 000 000).
    assert [(s.start_ms, s.end_ms) for s in result.series.spans] == [(999_000, 1_000_000)]
