"""Client stepping logic (iogate/procedures/scaling.py) and its verdicts (iogate/judging/scaling_family.py), on synthetic runs.

Every verdict is shown passing on data where it must pass and failing where it
must fail; the slow-host verdict must name exactly the slow host.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fixtures.scaling import AllHostsSteps
from iogate.arrays.base import Volume
from iogate.engines.workload import WorkloadSpec
from iogate.errors import LabFileError
from iogate.hosts.connectors.base import Connection
from iogate.judging.scaling_family import (
    DATAPATH,
    LINEAR,
    SLOW_HOST,
    datapath_verdict,
    linear_verdict,
    slow_host_verdict,
    stepping_verdicts,
)
from iogate.judging.spec import load_named, load_spec
from iogate.lab import DeviceIdentity
from iogate.metrics.histogram import Histogram
from iogate.metrics.latency import LatencyHistogram
from iogate.metrics.nodata import NoData
from iogate.metrics.types import Dir, Direction, JobResult, LatencyStats, RunResult, Series
from iogate.procedures import scaling
from iogate.procedures.scaling import Step, StepResult
from iogate.report.table import rows_table

MIB = 1 << 20
HOSTS = ["h1", "h2", "h3", "h4"]


def job(name: str, host: str, iops: float, bs_bytes: int = MIB, latency_ns: int = 1_000_000, ios: int = 1000) -> JobResult:
    hist = LatencyHistogram.from_fio(Histogram.from_latencies_ns([latency_ns] * ios))
    read = Direction(Dir.READ, ios=ios, io_bytes=ios * bs_bytes, iops=iops, bw_bytes_per_s=iops * bs_bytes,
                     clat=LatencyStats(mean_ns=latency_ns, samples=ios, histogram=hist))
    return JobResult(name, host, {Dir.READ: read, Dir.WRITE: Direction(Dir.WRITE), Dir.TRIM: Direction(Dir.TRIM)})


def run_of(name: str, jobs: list[JobResult]) -> RunResult:
    return RunResult(name, tuple(jobs), Series(), 0, 0)


def stepping(solo_iops: dict[str, float], together_iops_per_host: dict[int, float]) -> list[StepResult]:
    """Constant steps with each host's figure alone; incremental steps with every host at the given figure."""
    results = []
    for step in scaling.plan_steps(list(solo_iops)):
        if step.mode == "constant":
            host = step.hosts[0]
            jobs = [job(f"{host}-1", host, solo_iops[host])]
        else:
            jobs = [job(f"{h}-1", h, together_iops_per_host[len(step.hosts)]) for h in step.hosts]
        results.append(StepResult.from_run(step, run_of(step.name, jobs)))
    return results


# -- step plans -------------------------------------------------------------------------
def test_incremental_counts_go_by_two_and_end_with_every_host() -> None:
    assert scaling.incremental_counts(4) == [2, 4]
    assert scaling.incremental_counts(7) == [2, 4, 6, 7]
    assert scaling.incremental_counts(2) == [2]
    assert scaling.incremental_counts(1) == [1]
    assert scaling.incremental_counts(10, every=4) == [4, 8, 10]
    with pytest.raises(ValueError, match="total >= 1"):
        scaling.incremental_counts(0)


def test_steps_on_four_hosts_are_each_alone_then_two_then_four() -> None:
    steps = scaling.plan_steps(HOSTS)
    assert [(s.mode, s.hosts) for s in steps] == [
        ("constant", ("h1",)), ("constant", ("h2",)), ("constant", ("h3",)), ("constant", ("h4",)),
        ("incremental", ("h1", "h2")), ("incremental", ("h1", "h2", "h3", "h4")),
    ]
    assert [s.name for s in steps] == ["alone-h1", "alone-h2", "alone-h3", "alone-h4", "hosts-2", "hosts-4"]
    assert [s.name for s in scaling.plan_steps(["a", "b", "c"])][-2:] == ["hosts-2", "hosts-3"]


def test_stepping_refuses_one_host_and_repeated_names() -> None:
    with pytest.raises(ValueError, match="at least 2 hosts"):
        scaling.plan_steps(["localhost"])
    with pytest.raises(ValueError, match="repeat"):
        scaling.plan_steps(["h1", "h1"])


def test_volumes_go_round_robin_and_no_host_is_left_without_one() -> None:
    assert scaling.assign_volumes(HOSTS, ["v1", "v2", "v3", "v4", "v5"]) == {
        "h1": ["v1", "v5"], "h2": ["v2"], "h3": ["v3"], "h4": ["v4"]}
    # Fewer volumes than hosts: the hosts without one share, still round-robin.
    assert scaling.assign_volumes(HOSTS, ["v1", "v2"]) == {"h1": ["v1"], "h2": ["v2"], "h3": ["v1"], "h4": ["v2"]}
    with pytest.raises(ValueError, match="needs hosts and volumes"):
        scaling.assign_volumes(HOSTS, [])


def test_a_step_plan_runs_the_same_workload_on_every_volume_of_the_step_hosts() -> None:
    def conn(host: str, name: str) -> Connection:
        volume = Volume(name, MIB, DeviceIdentity(backing_file=f"/tmp/{name}.img"))
        return Connection(protocol="block", host=host, volume=volume, filename=f"/dev/{name}", device=f"/dev/{name}")

    targets = {"h1": [conn("h1", "v1"), conn("h1", "v3")], "h2": [conn("h2", "v2")], "h3": []}
    workload = WorkloadSpec("seqread-1m", read_pct=100, random_pct=0, bs=1 << 20, iodepth=8)
    plan = scaling.step_plan(Step("incremental", ("h1", "h2")), workload, targets, prefix="seqread-1m-")
    assert plan.name == "seqread-1m-hosts-2" and plan.hosts == ["h1", "h2"]
    assert [(j.name, j.target.volume.name) for j in plan.jobs] == [("h1-1", "v1"), ("h1-2", "v3"), ("h2-1", "v2")]
    assert all(j.workload is workload for j in plan.jobs)
    with pytest.raises(ValueError, match="host h3 has no volume"):
        scaling.step_plan(Step("constant", ("h3",)), workload, targets)


# -- figures ----------------------------------------------------------------------------
def test_step_figures_per_host_add_up_and_p99_comes_from_merged_bins() -> None:
    step = Step("incremental", ("h1", "h2"))
    # h1: 990 I/Os at 1 ms (two jobs); h2: 30 I/Os at 20 ms. Merged, the slowest 3 % are h2's.
    jobs = [job("h1-1", "h1", 500, ios=495), job("h1-2", "h1", 500, ios=495), job("h2-1", "h2", 30, latency_ns=20_000_000, ios=30)]
    result = StepResult.from_run(step, run_of("p", jobs))
    assert result.hosts["h1"].iops == 1000 and result.hosts["h2"].iops == 30
    assert result.cluster.iops == 1030 and result.cluster.bytes_per_s == 1030 * MIB
    assert result.cluster.mb_per_s == pytest.approx(1030 * MIB / 1e6)
    merged_p99 = result.p99_ns
    assert 19_000_000 <= merged_p99 <= 21_000_000  # the pooled 99th percentile is one of h2's I/Os
    h1_p99 = Histogram.from_json_bins(jobs[0][Dir.READ].clat.bins).percentile_ns(99)
    assert merged_p99 != pytest.approx((h1_p99 + merged_p99) / 2)  # not an average of per-host percentiles


def test_step_p99_reads_vdbench_buckets_exactly_and_no_histogram_is_no_data() -> None:
    """The cluster p99 is engine-neutral: vdbench's buckets merge across hosts and give their own exact
    p99 (upper edge of the nearest-rank bucket); a direction with I/O but no histogram is NoData."""
    edges = (0, 1_000_000, 2_000_000, 4_000_000, math.inf)

    def vdbench_job(name: str, host: str, counts: tuple[int, ...]) -> JobResult:
        hist = LatencyHistogram.of_buckets(edges, counts, origin="vdbench histogram.html")
        ios = sum(counts)
        clat = LatencyStats(mean_ns=1_500_000, samples=ios, histogram=hist)
        read = Direction(Dir.READ, ios=ios, io_bytes=ios * 4096, iops=ios / 10, bw_bytes_per_s=ios * 409.6, clat=clat)
        return JobResult(name, host, {Dir.READ: read, Dir.WRITE: Direction(Dir.WRITE), Dir.TRIM: Direction(Dir.TRIM)})

    step = Step("incremental", ("h1", "h2"))
    # 200 I/Os together: rank ceil(0.99 x 200) = 198; running counts 100, 197, 199 -> the 2-4 ms bucket.
    jobs = [vdbench_job("h1-1", "h1", (60, 40, 0, 0)), vdbench_job("h2-1", "h2", (40, 57, 2, 1))]
    assert StepResult.from_run(step, run_of("p", jobs)).p99_ns == 4_000_000
    no_histogram = Direction(Dir.READ, ios=10, io_bytes=40960, iops=1, clat=LatencyStats(samples=10))
    bare = JobResult("h2-1", "h2", {Dir.READ: no_histogram, Dir.WRITE: Direction(Dir.WRITE), Dir.TRIM: Direction(Dir.TRIM)})
    with pytest.raises(NoData):
        StepResult.from_run(step, run_of("p", [jobs[0], bare]))


def test_step_figures_refuse_a_run_that_does_not_match_the_step() -> None:
    with pytest.raises(ValueError, match="no jobs of host"):
        StepResult.from_run(Step("incremental", ("h1", "h2")), run_of("p", [job("h1-1", "h1", 10)]))
    with pytest.raises(ValueError, match="outside the step"):
        StepResult.from_run(Step("constant", ("h1",)), run_of("p", [job("h1-1", "h1", 10), job("h2-1", "h2", 10)]))


# -- slow hosts ------------------------------------------------------------------------------
def test_slow_host_is_the_one_far_below_the_median() -> None:
    values = {"h1": 1000.0, "h2": 980.0, "h3": 600.0, "h4": 1010.0}
    slow = scaling.slow_hosts(values, 25, "mb_per_s")
    assert [s.host for s in slow] == ["h3"]
    assert slow[0].median == 990.0 and slow[0].below_pct == pytest.approx(39.39, abs=0.01)
    assert slow[0].sentence() == "host h3 delivers 39.4 % less than the median (600 vs 990 MB/s)"
    assert scaling.slow_hosts(values, 40) == []
    assert scaling.slow_hosts({"h1": 1000.0, "h2": 990.0, "h3": 1005.0}, 5) == []


def test_one_slow_host_cannot_hide_by_dragging_the_median() -> None:
    # Two slow hosts of five: the median is still a healthy host's figure.
    slow = scaling.slow_hosts({"a": 100.0, "b": 98.0, "c": 102.0, "d": 20.0, "e": 30.0}, 30)
    assert [s.host for s in slow] == ["d", "e"]
    assert [s.host for s in scaling.slow_hosts({"a": 0.0, "b": 0.0, "c": 5.0}, 30)] == ["a", "b", "c"]


def test_against_median_adds_the_reference_and_refuses_a_host_named_like_it() -> None:
    assert scaling.against_median({"h1": 1.0, "h2": 3.0}) == {"h1": 1.0, "h2": 3.0, "median": 2.0}
    with pytest.raises(ValueError, match="named 'median'"):
        scaling.against_median({"median": 1.0})


# -- verdicts with the shipped spec's bounds ----------------------------------------------------
@pytest.fixture(params=["poc", "nightly", "netns"])
def family(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    return load_named(request.param).for_family("scaling")


def test_slow_host_verdict_fails_naming_exactly_the_slow_host(family) -> None:  # type: ignore[no-untyped-def]
    results = stepping({"h1": 1000, "h2": 1000, "h3": 200, "h4": 1000}, {2: 1000, 4: 1000})
    verdict = slow_host_verdict(family[SLOW_HOST], results)
    assert not verdict.passed and verdict.measured == pytest.approx(80.0)
    assert "host h3 delivers 80.0 % less than the median" in verdict.detail
    assert "h1 delivers" not in verdict.detail and "out of bounds: h3" in verdict.detail
    assert "host h3" in verdict.line() and verdict.window == "constant steps"


def test_slow_host_verdict_passes_when_hosts_are_alike(family) -> None:  # type: ignore[no-untyped-def]
    results = stepping({"h1": 1000, "h2": 950, "h3": 1040, "h4": 990}, {2: 1000, 4: 1000})
    verdict = slow_host_verdict(family[SLOW_HOST], results)
    assert verdict.passed and "no host more than" in verdict.detail and "delivers" not in verdict.detail


def test_linear_efficiency_passes_when_linear_and_fails_when_flat(family) -> None:  # type: ignore[no-untyped-def]
    linear = linear_verdict(family[LINEAR], stepping(dict.fromkeys(HOSTS, 1000.0), {2: 1000, 4: 1000}))
    assert linear.passed and linear.measured == pytest.approx(100.0) and linear.window == "incremental steps"
    # The aggregate never grows past one host: 2 hosts = 50 %, 4 hosts = 25 %, 8 % at 4 hosts fails.
    flat = linear_verdict(family[LINEAR], stepping(dict.fromkeys(HOSTS, 1000.0), {2: 500, 4: 80}))
    assert not flat.passed and flat.measured == pytest.approx(8.0)
    assert "4 hosts:" in flat.detail and "2 hosts:" in flat.detail


def test_datapath_efficiency_against_the_declared_limit(family) -> None:  # type: ignore[no-untyped-def]
    check = family[DATAPATH]
    near = datapath_verdict(check, 1.177e11, 20, 1.2e11)  # VAST: 117.7 of 120 GB/s
    assert near.passed and near.measured == pytest.approx(98.08, abs=0.01) and "20 hosts" in near.detail
    far = datapath_verdict(check, 2.0e10, 20, 1.2e11)
    assert not far.passed and far.measured == pytest.approx(16.67, abs=0.01)


def test_stepping_verdicts_judge_the_named_checks_and_a_spec_with_unknown_ones_does_not_load(tmp_path: Path) -> None:
    results = stepping({"h1": 1000, "h2": 1000, "h3": 300, "h4": 1000}, {2: 1000, 4: 1000})
    verdicts = stepping_verdicts(load_named("netns").for_family("scaling"), results, planned=[r.step for r in results], runs=[])
    assert [v.criterion for v in verdicts] == ["expected_points", SLOW_HOST, LINEAR]
    assert [v.passed for v in verdicts] == [True, False, True]
    spec = tmp_path / "spec.yaml"
    spec.write_text("version: 1\nfamilies:\n  scaling:\n    checks:\n      efficiency_typo:\n"
                    "        criterion: scaling_efficiency\n        min_efficiency_pct: 50\n")
    with pytest.raises(LabFileError, match=r"spec\.yaml line 5: families\.scaling\.checks\.efficiency_typo: no scaling test applies"):
        load_spec(spec)


# -- tables and reuse -----------------------------------------------------------------------
def test_step_table_has_hosts_cluster_figures_and_per_host_columns() -> None:
    results = stepping({"h1": 1000, "h2": 1000, "h3": 500, "h4": 1500}, {2: 900, 4: 600})
    rows = scaling.step_rows(results)
    assert [r["step"] for r in rows] == ["alone-h1", "alone-h2", "alone-h3", "alone-h4", "hosts-2", "hosts-4"]
    four = rows[-1]
    assert four["hosts"] == 4 and four["host_names"] == "h1 h2 h3 h4" and four["cluster_iops"] == 2400
    assert four["pct_of_linear"] == pytest.approx(60.0)  # 2400 of 4 x mean(1000, 1000, 500, 1500)
    assert four["h3_iops"] == 600 and four["h3_mb_per_s"] == round(600 * MIB / 1e6, 2)
    assert rows[0]["h2_iops"] is None and rows[0]["cluster_p99_ms"] == pytest.approx(1.0, rel=0.05)
    page = rows_table(rows, "client stepping: seqread-1m")
    assert page.count("<tr>") == 7 and "<th>h4_mb_per_s</th>" in page and "client stepping: seqread-1m" in page


def test_all_hosts_steps_are_reused_only_for_the_same_workload_and_hosts() -> None:
    memo = AllHostsSteps()
    workload = WorkloadSpec("seqread-1m", read_pct=100, random_pct=0, bs=1 << 20, iodepth=8, runtime_s=4, ramp_s=1)
    result = stepping(dict.fromkeys(HOSTS, 1000.0), {2: 1000, 4: 1000})[-1]
    memo.keep(workload, result)
    assert memo.get(workload, HOSTS) is result
    assert memo.get(workload.with_(runtime_s=60), HOSTS) is None
    assert memo.get(workload, HOSTS[:2]) is None
