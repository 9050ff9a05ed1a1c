"""Ground truth for early stop with real fio on exact blkio caps (iogate/judging/live.py).

A fixed-rate VM (400 read IOPS, a tile's targets_held: >= 75 % of it in every
5 s interval) on a volume capped at 500 read IOPS holds its target exactly;
capped at 200 it cannot. Cases:
* late drift: the cap drops to 200 after four passing intervals: the point is
  not stopped before the drift, then fail-fasts, and fails. The drift lands
  anywhere in an interval (the drift thread's clock is not fio's), so the
  first failing interval may be the one after it; the planned time leaves
  several intervals after that, so a fail-fast decision is never outrun by the
  run's own end on a loaded machine (CI once saw 'ran its planned 30 s' with
  the drift at 21 s);
* early miss: capped at 200 from the start, the point fail-fasts within a few
  intervals with the same verdict the full run (fail-fast off) gives;
* steady: uncapped rate at the 500 IOPS cap, `stop: steady`: stops at or after
  min_s, long before its planned time, and passes.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import pytest

from iogate.arrays.local import LocalArray
from iogate.engines.base import LoadControl
from iogate.engines.fio.runner import FioEngine
from iogate.engines.stopping import run_watched
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.hosts.connectors.base import Connection
from iogate.judging.judge import SpecJudge
from iogate.judging.live import point_watch
from iogate.judging.monotonic import LiveContext
from iogate.judging.spec import AcceptanceSpec, load_spec
from iogate.judging.steady_stop import SteadyStop
from iogate.lab import Lab, QoS
from iogate.metrics.resample import judged_series
from iogate.metrics.types import RunResult
from iogate.run import Run
from iogate.verdict import Verdict
from selftests.conftest import block_target

pytestmark = pytest.mark.integration

SPEC = """version: 1
families:
  tiles:
    checks:
      targets_held:
        criterion: target_iops_held
        source: '[hand-set] the tiles family of criteria/local.yaml'
        tolerance: 0.25
        min_fraction: 1.0
  baseline:
    checks:
      iops_min:
        criterion: throughput_min
        source: '[hand-set] 90 % of the exact 500 IOPS blkio cap'
        metric: iops
        minimum: 450
"""
TARGET, HIGH, LOW = 400, QoS(read_iops=500), QoS(read_iops=200)
BUCKET_MS = 5000
RAMP_S = 1.0


def load_spec_text(text: str) -> AcceptanceSpec:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spec.yaml"
        path.write_text(text)
        return load_spec(path)


@pytest.fixture
def spec_judge() -> SpecJudge:
    return SpecJudge(load_spec_text(SPEC))


@pytest.fixture
def target(local_lab: Lab, local_run: Run, local_array: LocalArray) -> tuple[LocalArray, FioEngine, Connection]:
    _, connection, engine = block_target(local_lab, local_run, local_array, "early", 64 << 20, HIGH)
    return local_array, engine, connection


def _vm(connection: Connection, runtime_s: float, rate: int | None) -> RunPlan:
    workload = WorkloadSpec("vm", read_pct=100, random_pct=100, bs=4 << 10, iodepth=4, runtime_s=runtime_s, ramp_s=RAMP_S,
                            rate_iops=rate)
    return RunPlan("early", (JobSpec("vm", workload, connection),))


def _tiles(judge: SpecJudge, engine: FioEngine, plan: RunPlan, *, fail_fast: bool,
           control: LoadControl | None = None) -> tuple[RunResult, list[Verdict]]:
    watch = point_watch(judge.family("tiles"), plan.jobs[0].workload.runtime_s, fail_fast=fail_fast,
                        context=LiveContext({"vm": TARGET}, BUCKET_MS))
    result = run_watched(engine, plan, watch, control)
    # One interval is enough here: what is judged is whether the stop was right, not a procedure's tile length.
    verdicts = judge.targets("tiles", result, judged_series(result, BUCKET_MS), {"vm": TARGET}, {"all": {"vm"}}, min_intervals=1)
    return result, verdicts


def _verdict(verdicts: list[Verdict], name: str) -> Verdict:
    return next(v for v in verdicts if v.criterion == name)


def test_late_drift_is_not_stopped_before_it_and_fails(spec_judge: SpecJudge, target: tuple[LocalArray, FioEngine, Connection]) -> None:
    array, engine, connection = target
    runtime_s = 60.0
    drift_s = 4 * BUCKET_MS / 1000
    control = LoadControl()

    def drift() -> None:
        if control.wait_measuring(60) is not None and not control.wait_stop(drift_s):
            array.set_qos(connection.volume, LOW)

    thread = threading.Thread(target=drift, daemon=True)
    thread.start()
    result, verdicts = _tiles(spec_judge, engine, _vm(connection, runtime_s, TARGET), fail_fast=True, control=control)
    thread.join()
    assert result.stop is not None
    held = _verdict(verdicts, "targets_held")
    assert not held.passed, held.detail
    assert result.stop.at_s >= drift_s, f"stopped before the drift at {drift_s:g} s: {result.stop.sentence()}"
    assert result.stop.kind == "fail_fast", result.stop.sentence()
    assert result.stop.at_s < runtime_s


def test_early_miss_fail_fasts_with_the_full_runs_verdict(spec_judge: SpecJudge, target: tuple[LocalArray, FioEngine, Connection]) -> None:
    array, engine, connection = target
    array.set_qos(connection.volume, LOW)
    runtime_s = 30.0
    early, early_verdicts = _tiles(spec_judge, engine, _vm(connection, runtime_s, TARGET), fail_fast=True)
    full, full_verdicts = _tiles(spec_judge, engine, _vm(connection, runtime_s, TARGET), fail_fast=False)
    assert early.stop is not None and full.stop is not None
    assert early.stop.kind == "fail_fast" and early.stop.at_s <= 12, early.stop.sentence()
    assert "the verdict could no longer pass" in early.stop.sentence()
    assert full.stop.kind == "full" and full.stop.at_s >= runtime_s - 1
    assert {v.criterion: v.passed for v in early_verdicts} == {v.criterion: v.passed for v in full_verdicts}
    assert not _verdict(early_verdicts, "targets_held").passed


def test_steady_run_stops_after_min_s_and_passes(spec_judge: SpecJudge, target: tuple[LocalArray, FioEngine, Connection]) -> None:
    _, engine, connection = target
    runtime_s = 60.0
    rule = SteadyStop(mode="steady", min_s=10, round_s=2)
    plan = _vm(connection, runtime_s, None)
    watch = point_watch(spec_judge.family("baseline"), runtime_s, steady=rule)
    result = run_watched(engine, plan, watch)
    verdicts = spec_judge.run("baseline", result)
    assert result.stop is not None and result.stop.kind == "steady", result.stop
    assert rule.min_s <= result.stop.at_s <= runtime_s / 2, result.stop.sentence()
    assert all(v.passed for v in verdicts), [(v.criterion, v.detail) for v in verdicts if not v.passed]


def test_vdbench_steady_run_stops_too(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    """vdbench publishes its flatfile's interval rows (the run's total): a run held by its cap is steady and stops after min_s."""
    from iogate.engines.vdbench import health
    from iogate.engines.vdbench.runner import VdbenchEngine
    from iogate.hosts.connectors.block import BlockConnector
    from iogate.hosts.guard import Guard
    from iogate.hosts.initiator import Initiator
    from selftests.vdbench_home import require_vdbench

    home = require_vdbench()
    volume = local_array.create_volume("early-vd", 64 << 20, HIGH)  # the cap holds IOPS and latency steady
    guard = Guard()
    guard.admit(volume.identity)
    initiator = Initiator.from_config(local_lab.hosts[0])
    connection = BlockConnector(local_lab.protocol("block"), local_run).connect(initiator, volume)
    engine = VdbenchEngine(local_run, {initiator.name: initiator}, guard, str(home), tolerated_warnings=(health.CPU_WARNING,))
    runtime_s = 60.0
    workload = WorkloadSpec("vm", read_pct=100, random_pct=100, bs=4 << 10, iodepth=4, runtime_s=runtime_s, ramp_s=2)
    rule = SteadyStop(mode="steady", min_s=10, round_s=2)
    family = SpecJudge(load_spec_text(SPEC)).family("baseline")
    result = run_watched(engine, RunPlan("early-vd", (JobSpec("vm1", workload, connection),)),
                         point_watch(family, runtime_s, steady=rule, hosts={initiator.name}))
    assert result.stop is not None and result.stop.kind == "steady", result.stop
    assert rule.min_s <= result.stop.at_s <= runtime_s / 2, result.stop.sentence()
    assert result.total_iops > 0 and result.errors == 0
