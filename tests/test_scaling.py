"""Scale-out client testing (Intel + VAST Data): client stepping and data-path efficiency.

VAST runs one schedule (a workload per line: bs, rw, numjobs, iodepth,
runtime, ramp_time) with fio client/server on every client and steps the
clients through it:
  * constant steps: each client alone, the same workload: a client that
    delivers much less than the others is a slow client (bad NIC, MTU, driver);
  * incremental steps: 2, 4, 6 ... N clients together: the aggregate should grow
    with the clients until the data path saturates.
Then the aggregate of all clients is set against the data path's theoretical
limit (the minimum of all links): 117.7 of 120 GB/s = 98 %.

Here every schedule line steps through the lab's hosts (constant: h1, h2 ...
alone; incremental: 2, 4 ... N, see iogate/procedures/scaling.py), each host driving its
round-robin share of the lab's prefilled volumes. Verdicts (criteria spec,
family `scaling`): no host more than X % below the median of the hosts alone,
the name of any slow host in the failure; aggregate of every incremental step
>= Y % of k x one host. A second test runs all hosts at once with large
sequential reads and judges the aggregate against the lab's declared
`datapath_limit_bytes_per_s`, or skips when the lab declares none. Every step's
run is also judged by the rules every family gets (I/O errors, stalls) and every
planned step must be present (iogate/judging/scaling_family.py); when the
stepping test has already run that load on all hosts in this session, its
N-host step is judged instead of running it again.

The smoke profile runs the first schedule line only; quick and full sweep all.
A lab with one host (labs/local.yaml) skips client stepping: it needs >= 2.
"""

from __future__ import annotations

import allure
import pytest

from fixtures.scaling import attach_step_tables, host_targets
from fixtures.session import LabSession, per_lab
from iogate.engines.workload import WorkloadSpec
from iogate.errors import EngineError, HostError
from iogate.procedures import scaling

# The VAST-style schedule, one workload per line (runtime and ramp come from the run profile).
SCHEDULE = (
    WorkloadSpec("seqread-1m", read_pct=100, random_pct=0, bs=1 << 20, numjobs=1, iodepth=8),
    WorkloadSpec("seqwrite-1m", read_pct=0, random_pct=0, bs=1 << 20, numjobs=1, iodepth=8),
    WorkloadSpec("randread-4k", read_pct=100, random_pct=100, bs=4 << 10, numjobs=1, iodepth=16),
)
# The data-path measure is a bandwidth figure: large sequential reads on every host at once.
DATAPATH_WORKLOAD = SCHEDULE[0]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "schedule_line" in metafunc.fixturenames:
        # By name: the report shows the parameter's value, and a name reads better than the whole spec.
        per_lab(metafunc, "schedule_line", _schedule_for)


def _schedule_for(session: LabSession) -> list[tuple[str, str, list[pytest.MarkDecorator]]]:
    """A lab's schedule lines; a hundred hosts step for longer than pytest.ini's 900 s: the timeout follows the plan."""
    profile = session.profile
    lines = SCHEDULE[:1] if profile.name == "smoke" else SCHEDULE
    hosts = [h.name for h in session.lab.hosts]
    steps = scaling.plan_steps(hosts, scaling.incremental_every(len(hosts), profile.name)) if len(hosts) >= 2 else []
    budget = pytest.mark.timeout(scaling.stepping_budget_s(steps, profile.runtime_s + profile.ramp_s))
    return [(line.name, line.name, [budget]) for line in lines]


def _needs_hosts(lab, count: int, what: str) -> None:  # type: ignore[no-untyped-def]
    names = [h.name for h in lab.hosts]
    if len(names) < count:
        pytest.skip(f"{what} needs >= {count} hosts; lab {lab.name} has {len(names)} ({', '.join(names)})")


@pytest.mark.scaling
@pytest.mark.vast
@allure.epic("VAST client scaling")
@allure.feature("scaling")
@allure.story("client stepping: each host alone, then 2, 4 ... N hosts")
def test_client_stepping(schedule_line, lab, request, connect, measure, judge, profile, run,  # type: ignore[no-untyped-def]
                         all_hosts_steps, spec) -> None:
    _needs_hosts(lab, 2, "client stepping")
    line = next(line for line in SCHEDULE if line.name == schedule_line)
    workload = line.with_(runtime_s=profile.runtime_s, ramp_s=profile.ramp_s)
    hosts = [h.name for h in lab.hosts]
    steps = scaling.plan_steps(hosts, every=scaling.incremental_every(len(hosts), profile.name))
    allure.dynamic.parameter("protocol", lab.baseline)
    allure.dynamic.parameter("steps", ", ".join(s.name for s in steps))
    for key, value in workload.params().items():
        allure.dynamic.parameter(key, value)
    targets = host_targets(lab, request.getfixturevalue("prefilled"), connect)

    results, runs, failed = [], [], {}
    for step in steps:
        try:
            result = measure(scaling.step_plan(step, workload, targets, prefix=f"{workload.name}-"))
        except (HostError, EngineError) as exc:  # the step fails, named (expected_points); the others still run
            failed[step.name] = str(exc)
            print(f"\nstep {step.name} failed: {exc}")
            continue
        runs.append(result)
        results.append(scaling.StepResult.from_run(step, result))
    if failed:
        allure.attach("\n".join(f"{name}: {why}" for name, why in failed.items()), name=f"{workload.name}: failed steps",
                      attachment_type=allure.attachment_type.TEXT)
    if results and results[-1].step == steps[-1]:
        all_hosts_steps.keep(workload, results[-1])  # the last incremental step runs every host
    table = attach_step_tables(results, run.path("scaling"), workload.name, limit_bytes_per_s=lab.datapath_limit_bytes_per_s,
                               spec=spec)
    print(f"\nclient stepping {workload.name} ({table}):")
    for row in scaling.step_rows(results):
        print(f"  {row['step']:>10}: {row['cluster_mb_per_s']:9.1f} MB/s {row['cluster_iops']:10.0f} IOPS "
              f"p99 {row['cluster_p99_ms']:.3f} ms, {row['pct_of_linear']} % of linear")
    judge.scaling(results, planned=steps, runs=runs)


@pytest.mark.scaling
@pytest.mark.vast
@allure.epic("VAST client scaling")
@allure.feature("scaling")
@allure.story("aggregate of all hosts vs the data path's limit")
def test_datapath_efficiency(lab, request, connect, measure, judge, profile, spec, all_hosts_steps) -> None:  # type: ignore[no-untyped-def]
    limit = lab.datapath_limit_bytes_per_s
    if limit is None:
        pytest.skip(f"lab {lab.name} declares no datapath_limit_bytes_per_s (the minimum of all links): nothing to judge against")
    if not judge.judges_datapath():
        pytest.skip(f"spec {spec.path} has no scaling check of the data path's efficiency (scaling_efficiency against the limit)")
    workload = DATAPATH_WORKLOAD.with_(runtime_s=profile.runtime_s, ramp_s=profile.ramp_s)
    hosts = [h.name for h in lab.hosts]
    step = scaling.Step("incremental", tuple(hosts))
    allure.dynamic.parameter("protocol", lab.baseline)
    allure.dynamic.parameter("hosts", len(hosts))
    allure.dynamic.parameter("datapath limit MB/s", round(limit / 1e6, 1))
    for key, value in workload.params().items():
        allure.dynamic.parameter(key, value)
    result = all_hosts_steps.get(workload, hosts)
    if result is not None:
        # Where the figure came from depends on what else ran: not the test's identity (Allure's history id).
        allure.dynamic.parameter("measured in", f"test_client_stepping[{workload.name}] step {result.step.name}", excluded=True)
    else:
        targets = host_targets(lab, request.getfixturevalue("prefilled"), connect)
        run = measure(scaling.step_plan(step, workload, targets, prefix="datapath-"))
        judge.rules("scaling", [run])  # the stepping test judged its own runs by the same rules
        result = scaling.StepResult.from_run(step, run)
    print(f"\ndata path: {len(hosts)} hosts ({result.run}) {result.cluster.mb_per_s:.1f} MB/s of {limit / 1e6:.1f} MB/s declared")
    judge.datapath(result.cluster.bytes_per_s, len(hosts), limit)
