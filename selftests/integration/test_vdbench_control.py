"""vdbench under a LoadControl and a killed run's leftovers, with the real vdbench.

- the measured phase start the engine reports is exactly where the averaged
  window of its result starts (both from vdbench's flatfile), after the ramp;
- the master's port 5570 (wildcard address) is not open in this machine's own
  network namespace: local runs get a private loopback-only one;
- a stop request ends a long run early with full results (vdbench's own stop
  message is not mistaken for an abort);
- a run that dies leaves JVMs and an output directory that `cleanup` removes,
  found through the ledger (the marker every JVM carries).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from iogate.arrays.local import LocalArray
from iogate.engines.base import LoadControl
from iogate.engines.vdbench import health
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import IOGateError
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab
from iogate.run import Run
from iogate.run.resources import cleanup, marker_pids
from selftests.vdbench_home import require_vdbench

pytestmark = [pytest.mark.integration]

SLOW = WorkloadSpec("slow", read_pct=50, random_pct=100, bs=4 << 10, iodepth=1, rate_iops=100, runtime_s=60, ramp_s=2,
                    until_stopped=True)


MASTER_PORT = 5570


def _listening_here(port: int) -> bool:
    """A TCP listener on `port` in this process's (the machine's own) network namespace."""
    rows = [r.split() for name in ("tcp", "tcp6") for r in Path(f"/proc/self/net/{name}").read_text().splitlines()[1:]]
    return any(r[3] == "0A" and int(r[1].rsplit(":", 1)[1], 16) == port for r in rows)


def _engine(lab: Lab, run: Run, array: LocalArray, home: Path) -> tuple[VdbenchEngine, RunPlan]:
    volume = array.create_volume("ctl", 64 << 20)
    guard = Guard()
    guard.admit(volume.identity)
    initiator = Initiator.from_config(lab.hosts[0])
    connection = BlockConnector(lab.protocol("block"), run).connect(initiator, volume)
    # Shared 2-core machine: vdbench's whole-machine CPU notice says nothing about these runs.
    engine = VdbenchEngine(run, {initiator.name: initiator}, guard, str(home), tolerated_warnings=(health.CPU_WARNING,))
    return engine, RunPlan("ctl", (JobSpec("vm1", SLOW, connection),))


def test_measuring_start_and_stop_on_request(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    engine, plan = _engine(local_lab, local_run, local_array, require_vdbench())
    control = LoadControl()
    root_listeners: list[bool] = []

    def stop_once_measuring() -> None:
        if control.wait_measuring(120) is not None:
            root_listeners.append(_listening_here(MASTER_PORT))
            control.request_stop()

    stopper = threading.Thread(target=stop_once_measuring, daemon=True)
    stopper.start()
    result = engine.run_plan(plan, control)
    stopper.join()
    assert root_listeners == [False]  # the master's wildcard port stayed in its private namespace
    assert control.measuring_since_ms == result.start_ms  # same flatfile row, same rule
    assert result.start_ms < min(s.t_ms for s in result.series.samples)
    measured_s = result.jobs[0]["read"].runtime_ms / 1000
    assert 1 <= measured_s < SLOW.runtime_s  # ended early, with its average
    assert result.total_iops > 0 and result.errors == 0


def test_cleanup_removes_a_dead_runs_jvms_and_output(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    engine, plan = _engine(local_lab, local_run, local_array, require_vdbench())
    control = LoadControl()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            engine.run_plan(plan, control)
        except IOGateError as exc:
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert control.wait_measuring(120) is not None
    marker = next(e.attrs["marker"] for e in local_run.ledger.open_entries("process"))
    out = next(e.attrs["path"] for e in local_run.ledger.open_entries("dir"))
    assert len(marker_pids(marker)) >= 2  # master and slave JVMs both carry the marker
    # As `python -m iogate cleanup` would after a crash (this run's owner is alive, hence include_live).
    lines = cleanup(Path(local_lab.workdir), include_live=True)
    thread.join(60)
    assert any("killed vdbench" in line for line in lines) and any(out in line for line in lines), lines
    assert marker_pids(marker) == [] and not Path(out).exists()
    assert failure and "vdbench" in str(failure[0])  # the killed run is an error, never a result
