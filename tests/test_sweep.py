"""Dell PowerStore transport sweep: read % x block size x threads, on every transport the lab offers.

Per point (test_sweep[local-block-rd70-4k-t8]): 100 % random I/O with the
Dell data pattern on every lab volume at once, one job per volume whose
iodepth is the point's thread count (vdbench threads = outstanding I/Os),
measured after warmup; the point's IOPS, MB/s, mean/p99 latency and host CPU
per I/O go to the session's sweep collector. Per-point checks of the spec's
`sweep` family and the rules every family gets (no_errors, no_stall) judge each point.

Per transport (test_sweep_saturation[local-block]): the points measured for
that transport, one load curve per read % and block size, judged by the
sweep-level checks: "N IOPS @ latency" (iops_at_latency) and "I/O before
saturation" (knee), after every point of the profile's grid is found measured
(expected_points: a point that hung fails the sweep, named). The full table is attached as HTML and CSV, with every
transport's IOPS as % of the baseline transport's (baseline = 100; Dell quotes the difference).
"""

from __future__ import annotations

from dataclasses import dataclass

import allure
import pytest

from fixtures.session import per_lab
from fixtures.suite import SweepRecord, attach_table
from iogate.engines.workload import JobSpec, RunPlan
from iogate.judging.evidence import SweepPoint
from iogate.procedures.dell import GridPoint, load_sweeps, point_row, relative_rows

DELL = load_sweeps().dell


@dataclass(frozen=True)
class SweepCase:
    protocol: str
    point: GridPoint


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """test_sweep[local-block-rd70-4k-t8]: every transport x the profile's grid, transport outermost."""
    if "case" in metafunc.fixturenames:
        per_lab(metafunc, "case", lambda s: [(f"{p.name}-{point.id}", SweepCase(p.name, point))
                                             for p in s.lab.protocols for point in DELL.grid_for(s.profile).points()])


@pytest.mark.sweep
@pytest.mark.dell
@allure.epic("Dell PowerStore transport sweep")
@allure.feature("sweep")
@allure.story("read % x block size x threads, per transport")
def test_sweep(case, lab, protocol_volumes, connect, measure, profile, spec, judge, sweep_points, initiators):
    protocol, grid_point = case.protocol, case.point
    sweep_points.begin(protocol, grid_point.id)  # before anything can fail: a point that never finishes is named
    workload = DELL.workload(grid_point, profile.runtime_s, profile.ramp_s)
    allure.dynamic.parameter("protocol", protocol)
    for key, value in workload.params().items():
        allure.dynamic.parameter(key, value)
    # Volumes spread over the hosts (Dell: 4 hosts, each driving its own VMs' volumes).
    jobs = tuple(JobSpec(v.name, workload, connect(protocol, v, lab.spread(i))) for i, v in enumerate(protocol_volumes(protocol)))
    result = measure(RunPlan(f"{protocol}-{grid_point.id}", jobs))
    measured = SweepPoint.from_run(result, label=f"t{grid_point.threads}")
    cpus = {name: int(i.facts().get(f"host.{name}.cpus", "0") or 0) for name, i in initiators.items()}
    row = point_row(protocol, grid_point, measured, result, cpus)
    sweep_points.add(protocol, SweepRecord(grid_point, measured, row))
    attach_table(f"{protocol} {grid_point.id}", [row])
    judge.run("sweep", result)  # the checks that read a point's run; the load-curve checks judge test_sweep_saturation


@pytest.mark.sweep
@pytest.mark.dell
@allure.epic("Dell PowerStore transport sweep")
@allure.feature("sweep")
@allure.story("N IOPS @ latency and I/O before saturation, per transport")
def test_sweep_saturation(protocol, lab, spec, judge, sweep_points, profile):
    allure.dynamic.parameter("protocol", protocol)
    records = sweep_points.get(protocol)
    if not sweep_points.begun(protocol):  # none selected; one that began and failed is judged missing below
        pytest.skip(f"no sweep point of protocol {protocol} ran in this session (select test_sweep too)")
    if not judge.judges_curves("sweep"):
        pytest.skip(f"spec {spec.path} has no sweep-level check (iops_at_latency, knee) in family sweep")
    # The grid is known before the sweep runs: a point that hung or failed is named, not left out of the curve.
    planned = [point.id for point in DELL.grid_for(profile).points()]
    baseline_rows = [r.row for r in sweep_points.get(lab.baseline)]
    attach_table(f"sweep {protocol}", relative_rows([r.row for r in records], baseline_rows, lab.baseline))
    curves: dict[str, list[SweepRecord]] = {}
    for record in records:
        curves.setdefault(record.point.curve, []).append(record)
    judge.curve("sweep", {curve: [r.measured for r in sorted(members, key=lambda r: r.point.threads)] for curve, members in curves.items()},
                planned=planned, measured=[r.point.id for r in records], what=f"{protocol} sweep point", window=f"sweep {protocol}")
