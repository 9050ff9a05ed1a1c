"""Client stepping (the Intel/VAST scale-out procedure): step plans, per-step figures, slow hosts.

The same workload per host runs on a changing set of hosts:
  constant     each host alone, one after the other (h1, h2, ... hN): the N
               single-host figures that find a slow client;
  incremental  2, 4, 6 ... N hosts together (N last, also when odd): how the
               aggregate grows, and where it stops growing (saturation).
On a 4-host lab: constant h1, h2, h3, h4, then incremental {h1, h2} and
{h1 .. h4}. The incremental series has no 1-host step of its own: the constant
steps are the single-host points, and their mean is the "one host" that linear
scaling multiplies (efficiency of k hosts = aggregate(k) / (k x mean single host)).

Slow host: a host whose constant-step figure is more than X % below the median
of all hosts' constant-step figures ("host h3 delivers 40 % less than the
median"). The median, not the mean, so one slow host cannot drag the reference
down and hide itself.

Pure logic: no fio, no pytest. Figures come from RunResults (any engine: hosts
are told apart by JobResult.host).

At many hosts a profile may bound the incremental series (`incremental_every`):
the smoke profile runs at most SMOKE_INCREMENTAL_STEPS incremental steps, so
100 hosts step 10, 20 ... 100 (the constant steps stay one per host: a slow
host is only found alone); quick and full step 2, 4 ... N as the guide does.

>>> steps = plan_steps(["h1", "h2", "h3", "h4"])
>>> [s.name for s in steps]
['alone-h1', 'alone-h2', 'alone-h3', 'alone-h4', 'hosts-2', 'hosts-4']
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.hosts.connectors.base import Connection
from iogate.lab import round_robin
from iogate.metrics.latency import LatencyHistogram
from iogate.metrics.nodata import NoData
from iogate.metrics.types import Dir, RunResult

Mode = Literal["constant", "incremental"]
Metric = Literal["iops", "mb_per_s"]
MEDIAN = "median"  # the reference's name among per-host values (relative_to_baseline's baseline)
T = TypeVar("T")


@dataclass(frozen=True)
class Step:
    """One run of client stepping: which hosts run the workload together."""

    mode: Mode
    hosts: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"alone-{self.hosts[0]}" if self.mode == "constant" else f"hosts-{len(self.hosts)}"


def incremental_counts(total: int, every: int = 2) -> list[int]:
    """Host counts of the incremental series: every, 2 x every ... and `total` last.

    >>> incremental_counts(4), incremental_counts(5), incremental_counts(1)
    ([2, 4], [2, 4, 5], [1])
    """
    if total < 1 or every < 1:
        raise ValueError(f"incremental stepping needs total >= 1 and every >= 1 (got total={total}, every={every})")
    counts = list(range(every, total + 1, every))
    if not counts or counts[-1] != total:
        counts.append(total)
    return counts


# The guide's stride (2, 4, 6 ... N) and the smoke profile's bound on the incremental series.
GUIDE_EVERY = 2
SMOKE_INCREMENTAL_STEPS = 10


def incremental_every(total: int, profile: str = "full") -> int:
    """The incremental series' stride for `total` hosts under a run profile: the guide's 2, except that the
    smoke profile runs at most SMOKE_INCREMENTAL_STEPS incremental steps (a stride rounded up to an even count).

    >>> incremental_every(4, "smoke"), incremental_every(20, "smoke"), incremental_every(100, "smoke"), incremental_every(100)
    (2, 2, 10, 2)
    >>> incremental_counts(100, incremental_every(100, "smoke"))
    [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    """
    if total < 1:
        raise ValueError(f"incremental stepping needs at least 1 host (got {total})")
    if profile != "smoke":
        return GUIDE_EVERY
    every = -(-total // SMOKE_INCREMENTAL_STEPS)  # ceil
    every += every % 2  # even: 2, 4, 6 ... as the guide steps
    return max(GUIDE_EVERY, every)


def plan_steps(hosts: Sequence[str], every: int = GUIDE_EVERY) -> list[Step]:
    """Constant steps (each host alone, in lab order), then the incremental series on the first k hosts."""
    if len(set(hosts)) != len(hosts):
        raise ValueError(f"client stepping: host names repeat: {list(hosts)}")
    if len(hosts) < 2:
        raise ValueError(f"client stepping needs at least 2 hosts (got {list(hosts)})")
    constant = [Step("constant", (host,)) for host in hosts]
    incremental = [Step("incremental", tuple(hosts[:count])) for count in incremental_counts(len(hosts), every)]
    return constant + incremental


# What a step costs beyond its measured time (ssh to each host: guard, CPU ticks, the fio client's set-up and
# the hosts' results), per step and per host in it: 100 hosts on the 2-core reference machine took 80 s for a 5 s point.
STEP_OVERHEAD_S = 15.0
STEP_OVERHEAD_PER_HOST_S = 0.8
MIN_BUDGET_S = 900.0  # pytest.ini's timeout: a small lab keeps it


def stepping_budget_s(steps: Sequence[Step], point_s: float, margin: float = 1.5) -> float:
    """The longest the stepping of one schedule line may take (its test's timeout): every step's point plus its
    overhead, times a margin, never below MIN_BUDGET_S. 100 hosts under smoke (110 steps of 5 s): about 68 min.

    >>> round(stepping_budget_s(plan_steps(["h1", "h2", "h3", "h4"]), 5))
    900
    >>> hosts = [f"h{n}" for n in range(1, 101)]
    >>> round(stepping_budget_s(plan_steps(hosts, incremental_every(100, "smoke")), 5))
    4080
    """
    total = sum(point_s + STEP_OVERHEAD_S + STEP_OVERHEAD_PER_HOST_S * len(step.hosts) for step in steps)
    return max(MIN_BUDGET_S, margin * total)


def assign_volumes(hosts: Sequence[str], volumes: Sequence[T]) -> dict[str, list[T]]:
    """Each host's volumes: volume i goes to host i mod N (as the lab's round-robin spread);
    a host left without one (fewer volumes than hosts) shares volume j mod V, so every host has load."""
    if not hosts or not volumes:
        raise ValueError(f"assign_volumes needs hosts and volumes (got {len(hosts)} hosts, {len(volumes)} volumes)")
    assigned: dict[str, list[T]] = {host: [] for host in hosts}
    for index, volume in enumerate(volumes):
        assigned[round_robin(hosts, index)].append(volume)
    for index, host in enumerate(hosts):
        if not assigned[host]:
            assigned[host].append(volumes[index % len(volumes)])
    return assigned


def step_plan(step: Step, workload: WorkloadSpec, targets: Mapping[str, Sequence[Connection]], prefix: str = "") -> RunPlan:
    """The step as one run point: the same workload on every volume of every host of the step."""
    jobs = []
    for host in step.hosts:
        if not targets.get(host):
            raise ValueError(f"step {step.name}: host {host} has no volume connected")
        jobs += [JobSpec(f"{host}-{index + 1}", workload, target) for index, target in enumerate(targets[host])]
    return RunPlan(f"{prefix}{step.name}", tuple(jobs))


# -- figures ------------------------------------------------------------------------
@dataclass(frozen=True)
class Figures:
    """Throughput of one host, or of the cluster, in one step."""

    iops: float
    bytes_per_s: float

    @property
    def mb_per_s(self) -> float:
        """Decimal MB/s, as reports quote bandwidth."""
        return self.bytes_per_s / 1e6

    def of(self, metric: Metric) -> float:
        if metric == "iops":
            return self.iops
        if metric == "mb_per_s":
            return self.mb_per_s
        raise ValueError(f"throughput metric {metric!r}: use iops or mb_per_s")


@dataclass(frozen=True)
class StepResult:
    """A step's per-host and cluster figures; p99 from the hosts' merged latency bins."""

    step: Step
    hosts: Mapping[str, Figures]
    cluster: Figures
    p99_ns: float
    run: str = ""  # the run point's name (its artifacts carry it)

    @classmethod
    def from_run(cls, step: Step, result: RunResult) -> StepResult:
        jobs_by_host: dict[str, list[str]] = {}
        for job in result.jobs:
            jobs_by_host.setdefault(job.host, []).append(job.name)
        missing = [host for host in step.hosts if host not in jobs_by_host]
        if missing:
            raise ValueError(f"step {step.name}: run {result.name} has no jobs of host(s) {', '.join(missing)}")
        extra = sorted(set(jobs_by_host) - set(step.hosts))
        if extra:
            raise ValueError(f"step {step.name}: run {result.name} has jobs of host(s) {', '.join(extra)} outside the step")
        hosts = {host: _figures(result, jobs_by_host[host]) for host in step.hosts}
        return cls(step, hosts, _figures(result, None), _cluster_p99_ns(result), result.name)


def _cluster_p99_ns(result: RunResult) -> float:
    """p99 of every direction that did I/O, from the hosts' merged latency histograms in the engine's own
    bucket scheme (fio bins or vdbench buckets; iogate.metrics.latency). A direction with I/O but no
    histogram, or none with I/O, is NoData: a step without latency data never reads as fast."""
    active = [(d, result.total(d)) for d in Dir if result.total(d).active]
    missing = [str(d) for d, total in active if total.clat.histogram is None]
    if missing:
        raise NoData(f"run {result.name}: no latency histogram for direction(s) {', '.join(missing)}: no cluster p99")
    merged = LatencyHistogram.merged(t.clat.histogram for _, t in active if t.clat.histogram is not None)
    if merged is None:
        raise NoData(f"run {result.name}: no direction did I/O: no cluster p99")
    return merged.percentile_ns(99)


def _figures(result: RunResult, jobs: list[str] | None) -> Figures:
    totals = [result.total(d, jobs) for d in Dir]
    return Figures(sum(t.iops for t in totals), sum(t.bw_bytes_per_s for t in totals))


def constant_figures(results: Sequence[StepResult], metric: Metric) -> dict[str, float]:
    """{host: figure when alone} from the constant steps, in lab order."""
    values = {r.step.hosts[0]: r.cluster.of(metric) for r in results if r.step.mode == "constant"}
    if not values:
        raise ValueError("no constant (single-host) steps among the results")
    return values


def incremental_figures(results: Sequence[StepResult], metric: Metric) -> dict[int, float]:
    """{host count: aggregate} of the incremental steps."""
    return {len(r.step.hosts): r.cluster.of(metric) for r in results if r.step.mode == "incremental"}


def single_host_reference(results: Sequence[StepResult], metric: Metric) -> float:
    """The "one host" of linear scaling: the mean of the constant steps."""
    return statistics.fmean(constant_figures(results, metric).values())


def against_median(values: Mapping[str, float]) -> dict[str, float]:
    """The per-host values plus their median under MEDIAN (relative_to_baseline's input)."""
    if MEDIAN in values:
        raise ValueError(f"a host is named {MEDIAN!r}: the median could not be told apart from it")
    return {**values, MEDIAN: statistics.median(values.values())}


@dataclass(frozen=True)
class SlowHost:
    host: str
    value: float
    median: float
    metric: str

    @property
    def below_pct(self) -> float:
        # A median of nothing (most hosts did no I/O) leaves no reference: every host counts as 100 % below.
        return 100.0 * (self.median - self.value) / self.median if self.median > 0 else 100.0

    def sentence(self) -> str:
        unit = "IOPS" if self.metric == "iops" else "MB/s" if self.metric == "mb_per_s" else self.metric
        return (f"host {self.host} delivers {self.below_pct:.1f} % less than the median "
                f"({self.value:.6g} vs {self.median:.6g} {unit})")


def slow_hosts(values: Mapping[str, float], max_below_median_pct: float, metric: str = "iops") -> list[SlowHost]:
    """Hosts more than max_below_median_pct below the median of all hosts, slowest first."""
    if not values:
        return []
    median = statistics.median(values.values())
    found = [SlowHost(host, value, median, metric) for host, value in values.items()]
    return sorted((s for s in found if s.below_pct > max_below_median_pct), key=lambda s: s.value)


# -- tables -------------------------------------------------------------------------
def step_rows(results: Sequence[StepResult]) -> list[dict[str, Any]]:
    """One row per step: hosts, cluster IOPS / MB/s / p99, then each host's figures.

    pct_of_linear = the step's MB/s as % of (its hosts x the mean single host):
    the linear-scaling efficiency of an incremental step; for a constant step,
    that host against the mean host.
    """
    single = single_host_reference(results, "mb_per_s") if any(r.step.mode == "constant" for r in results) else 0.0
    every_host = list(dict.fromkeys(h for r in results for h in r.step.hosts))
    rows = []
    for result in results:
        linear = len(result.step.hosts) * single
        row: dict[str, Any] = {
            "step": result.step.name,
            "mode": result.step.mode,
            "hosts": len(result.step.hosts),
            "host_names": " ".join(result.step.hosts),
            "cluster_iops": round(result.cluster.iops, 1),
            "cluster_mb_per_s": round(result.cluster.mb_per_s, 2),
            "cluster_p99_ms": round(result.p99_ns / 1e6, 3),
            "pct_of_linear": round(100.0 * result.cluster.mb_per_s / linear, 1) if linear else None,
        }
        for host in every_host:
            figures = result.hosts.get(host)
            row[f"{host}_iops"] = round(figures.iops, 1) if figures else None
            row[f"{host}_mb_per_s"] = round(figures.mb_per_s, 2) if figures else None
        rows.append(row)
    return rows

