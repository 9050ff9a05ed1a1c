"""Early stop benchmark: one family on the local lab, run at its fixed duration and with early stop.

The family is the local spec's `baseline` (criteria/local.yaml), on a 4 KiB
random reader and a 4 KiB random writer (iodepth 8 each) per lab volume: the
blkio caps (500 read + 500 write IOPS per volume) hold each direction with its
own queue full, so IOPS are exact (2000), latency is the queue over the cap
(Little: 8 / 500 = 16 ms) and the fixed-duration verdict is deterministic.
Why not the baseline test's own 70/30 job: its uncapped writes run at the loop
device's 0.3 ms, +-50 % from second to second on shared cores; and one job
mixing two capped directions lets whichever direction is behind hold all 8
slots, so each direction's latency flips between 0.1 and 16 ms every ~20 s
(measured): neither is steady by the SNIA rule, which judges read and write
latency apart. The fixed run has fail-fast on (the
default) and no steady stop; the early run adds the nightly profile's
`stop: steady`. The bench prints both runs' verdicts and ends in

    early stop: same verdicts: yes, time ratio = 0.37

(time ratio: the early run's wall time over the fixed run's, ramp and start-up
included) and fails when the verdicts differ or the ratio is above 0.40.
Run: `make bench`, or `pytest selftests/bench/test_bench_early_stop.py -s`.
"""

from __future__ import annotations

import time

import pytest

from iogate.arrays.local import LocalArray
from iogate.engines.fio.runner import FioEngine
from iogate.engines.stopping import run_watched
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.judging.judge import SpecJudge
from iogate.judging.live import point_watch
from iogate.judging.spec import load_spec
from iogate.judging.steady_stop import SteadyStop
from iogate.lab import Lab
from iogate.metrics.types import RunResult
from iogate.run import Run
from iogate.verdict import Verdict
from selftests.bench.conftest import CLOSING

FAMILY = "baseline"
RUNTIME_S, RAMP_S = 60.0, 2.0
# The nightly profile's rule (criteria/nightly profile: docs/early-stop.md): 5 rounds of 3 s, after 15 s at least.
STEADY = SteadyStop(mode="steady", min_s=15, round_s=3)
MAX_RATIO = 0.40


def _plan(lab: Lab, run: Run, array: LocalArray) -> tuple[FioEngine, RunPlan]:
    guard = Guard()
    initiator = Initiator.from_config(lab.hosts[0])
    jobs = []
    for i in range(lab.volumes.count):
        volume = array.create_volume(f"early{i}", 256 << 20, lab.volumes.qos)
        guard.admit(volume.identity)
        connection = BlockConnector(lab.protocol("block"), run).connect(initiator, volume)
        for kind, read_pct in (("r", 100), ("w", 0)):
            workload = WorkloadSpec(f"rand{kind}-4k", read_pct=read_pct, random_pct=100, bs=4 << 10, iodepth=8, runtime_s=RUNTIME_S,
                                    ramp_s=RAMP_S)
            jobs.append(JobSpec(f"{kind}{i}", workload, connection))
    return FioEngine(run, {initiator.name: initiator}, guard), RunPlan(FAMILY, tuple(jobs))


def _once(judge: SpecJudge, engine: FioEngine, plan: RunPlan, steady: SteadyStop | None) -> tuple[RunResult, list[Verdict], float]:
    watch = point_watch(judge.family(FAMILY), RUNTIME_S, steady=steady, hosts=plan.hosts)
    began = time.monotonic()
    result = run_watched(engine, plan, watch)
    wall_s = time.monotonic() - began
    return result, judge.run(FAMILY, result), wall_s


def _show(label: str, result: RunResult, verdicts: list[Verdict], wall_s: float) -> None:
    assert result.stop is not None
    print(f"{label}: {wall_s:.1f} s wall; {result.stop.sentence()}")
    for v in verdicts:
        print(f"  {'PASS' if v.passed else 'FAIL'} {v.criterion}: {v.detail[:160]}")


@pytest.mark.integration
def test_early_stop_gives_the_same_verdicts_in_a_fraction_of_the_time(local_lab: Lab, local_run: Run, local_array: LocalArray,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    judge = SpecJudge(load_spec("criteria/local.yaml"))
    engine, plan = _plan(local_lab, local_run, local_array)
    fixed, fixed_verdicts, fixed_s = _once(judge, engine, plan, None)
    early, early_verdicts, early_s = _once(judge, engine, plan, STEADY)
    same = [(v.criterion, v.passed) for v in fixed_verdicts] == [(v.criterion, v.passed) for v in early_verdicts]
    ratio = early_s / fixed_s
    with capsys.disabled():
        print()
        _show(f"family {FAMILY}, fixed {RUNTIME_S:g} s", fixed, fixed_verdicts, fixed_s)
        _show(f"family {FAMILY}, early stop ({STEADY.model_dump(exclude_defaults=True)})", early, early_verdicts, early_s)
        line = f"early stop: same verdicts: {'yes' if same else 'no'}, time ratio = {ratio:.2f}"
        print(line)
    CLOSING.append(line)
    assert same, "early stop changed a verdict"
    assert early.stop is not None and early.stop.kind == "steady" and early.stop.at_s >= STEADY.min_s
    assert ratio <= MAX_RATIO
