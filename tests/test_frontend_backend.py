"""IOgen key performance indicators: frontend/backend x read/write, SPEED and THROUGHPUT.

The cases run on volumes of their own (fixture kpi_volumes), prefilled once,
so no earlier dedupe or snapshot test leaves them sharing extents. Frontend
cases work on a small working set (16 MiB: fits any cache), backend
cases on the whole volume (workloads/iogen.yaml). SPEED is one process at queue
depth 1 on one volume: its latency is the figure. THROUGHPUT auto-scales the
process count (1, 2, 4 ... 64; the profile picks the steps), processes split
over the lab's volumes, and quotes the highest "N IOPS @ latency".

Checks of the spec's `kpi` family, by name: speed_* judge the SPEED run,
throughput_* judge the THROUGHPUT steps (iops_at_latency over the steps;
throughput_min on the best step), steady_state judges the backend cases' top
step (rounds = its one-second total IOPS: every job's expected interval grid,
merged by time, so a second without a completed I/O is a round of 0 and two
hosts ticking apart do not alternate); the rules every family gets (no_errors,
no_stall: iogate/judging/family_rules.py) every run.
"""

from __future__ import annotations

import allure
import pytest

from fixtures.suite import attach_table
from iogate.engines.workload import JobSpec, RunPlan
from iogate.judging.evidence import SweepPoint
from iogate.metrics.hostcpu import host_cpu, mean_pct_per_kiops
from iogate.procedures.iogen import load_iogen

IOGEN = load_iogen().iogen
CASES = list(IOGEN.cases)


def split(processes: int, volumes: int) -> list[int]:
    """Processes per volume, as even as possible; volumes left without a process get no job."""
    return [processes // volumes + (1 if i < processes % volumes else 0) for i in range(volumes)]


def run_step(case, processes, iodepth, lab, volumes, connect, measure, profile, runtime_s=None):  # type: ignore[no-untyped-def]
    jobs = []
    for index, (volume, count) in enumerate(zip(volumes, split(processes, len(volumes)), strict=True)):
        if count:
            workload = IOGEN.workload(case, count, iodepth, runtime_s or profile.runtime_s, profile.ramp_s)
            jobs.append(JobSpec(f"{case}-{volume.name}", workload, connect(lab.baseline, volume, lab.spread(index))))
    return measure(RunPlan(f"{case}-p{processes}", tuple(jobs)))


def row(label: str, result) -> dict:  # type: ignore[no-untyped-def]
    point = SweepPoint.from_run(result, label)
    return {"step": label, "iops": round(point.iops, 1),
            "mb_per_s": round(sum(result.total(d).bw_bytes_per_s for d in ("read", "write")) / 1e6, 2),
            "mean_latency_us": round(point.latency_mean_ns / 1e3, 1), "p99_latency_us": round(point.latency_pct_ns[99.0] / 1e3, 1),
            "host_cpu_pct_per_kiops": round(mean_pct_per_kiops(host_cpu(result)), 3)}


@pytest.mark.kpi
@pytest.mark.iogen
@allure.epic("IOgen KPIs")
@allure.feature("kpi")
@allure.story("SPEED: latency of one process")
@pytest.mark.parametrize("case", CASES)
def test_kpi_speed(case, lab, kpi_volumes, connect, measure, profile, judge):
    allure.dynamic.parameter("case", case)
    allure.dynamic.parameter("working_set", IOGEN.cases[case].working_set)
    result = run_step(case, IOGEN.speed.processes, IOGEN.speed.iodepth, lab, kpi_volumes[:1], connect, measure, profile)
    attach_table(f"{case} SPEED", [row("p1", result)])
    judge.speed(case, result)


@pytest.mark.kpi
@pytest.mark.iogen
@allure.epic("IOgen KPIs")
@allure.feature("kpi")
@allure.story("THROUGHPUT: N IOPS @ latency, processes auto-scaled")
@pytest.mark.parametrize("case", CASES)
def test_kpi_throughput(case, lab, kpi_volumes, connect, measure, profile, judge):
    steps = IOGEN.throughput_steps(profile)
    backend = IOGEN.cases[case].working_set == "backend"
    allure.dynamic.parameter("case", case)
    allure.dynamic.parameter("processes", ",".join(map(str, steps)))
    top_s = judge.top_step_runtime_s(case, profile.runtime_s, backend=backend)  # long enough for its steady-state window
    results = [(f"p{n}", run_step(case, n, IOGEN.throughput.iodepth, lab, kpi_volumes, connect, measure, profile,
                                  top_s if n == steps[-1] else None)) for n in steps]
    attach_table(f"{case} THROUGHPUT", [row(label, r) for label, r in results])
    judge.throughput(case, results, backend=backend)
