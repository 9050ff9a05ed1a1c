"""Ground truth for client stepping: per-host caps make the expected figures exact.

A 4-host copy of labs/netns.yaml is brought up for the module, each host with
its own loop volume of the local array. The local array's QoS is a cgroup v1
blkio throttle on the processes of the run's cgroup; the namespaces' fio
servers are started outside it, so the fixture moves them in (cgroup.procs):
every job a server forks is then throttled per device, i.e. per host. Then:

  * every host capped at CAP_BYTES_PER_S: each host alone delivers the cap,
    k hosts deliver k caps; no host is slow, scaling is linear, and the
    aggregate is >= 95 % of a declared data-path limit equal to the sum of caps;
  * h3 alone capped at a quarter of that: the slow-host verdict fails and names
    h3, and only h3;
  * caps lifted: every step runs far beyond the caps (uncapped speed is no ground truth for naming hosts).

Verdicts come from the shipped criteria/netns.yaml bounds (the spec of the netns lab, calibrated on it) through
the same glue the acceptance test uses (iogate/judging/scaling_family.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.local import LocalArray
from iogate.engines.fio.client_server import ClientServerEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.hosts.connectors.base import Connection
from iogate.judging.scaling_family import DATAPATH, LINEAR, SLOW_HOST, datapath_verdict, linear_verdict, slow_host_verdict
from iogate.judging.spec import FamilySpec, load_named
from iogate.lab import Lab, QoS
from iogate.labs import netns
from iogate.procedures import scaling
from iogate.procedures.scaling import StepResult
from selftests.netns_cluster import netns_cluster

REPO = Path(__file__).resolve().parents[2]
BS = 64 << 10
CAP_BYTES_PER_S = 16 << 20  # per host: 256 reads of 64 KiB a second
SLOW_CAP_BYTES_PER_S = CAP_BYTES_PER_S // 4
# A deep queue (32 x 64 KiB = 125 ms of the cap) keeps the throttle saturated while a loaded machine
# starves fio for a moment: the cap, not the generator, must set the figure.
WORKLOAD = WorkloadSpec("capped-read", read_pct=100, random_pct=0, bs=BS, iodepth=32, runtime_s=3, ramp_s=1)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces, loop devices and blkio cgroups need root"),
]


@dataclass
class Cluster:
    lab: Lab
    array: LocalArray
    engine: ClientServerEngine
    volumes: dict[str, Volume]
    targets: dict[str, list[Connection]]

    @property
    def hosts(self) -> list[str]:
        return [h.name for h in self.lab.hosts]

    def cap(self, caps: dict[str, int | None]) -> None:
        for host, bytes_per_s in caps.items():
            self.array.set_qos(self.volumes[host], QoS(read_bytes_per_s=bytes_per_s) if bytes_per_s else None)

    def step(self, steps: list[scaling.Step]) -> list[StepResult]:
        results = [StepResult.from_run(s, self.engine.run_plan(scaling.step_plan(s, WORKLOAD, self.targets))) for s in steps]
        for row in scaling.step_rows(results) if any(s.mode == "constant" for s in steps) else []:
            print(f"{row['step']:>10}: {row['cluster_mb_per_s']:8.2f} MB/s ({row['pct_of_linear']} % of linear)")
        return results

    def constant_steps(self) -> list[StepResult]:
        return self.step([s for s in scaling.plan_steps(self.hosts) if s.mode == "constant"])


def _join_blkio_cgroup(lab: Lab, cgroup: Path) -> list[int]:
    """Move every namespace's fio server into the array's blkio cgroup, so the jobs it forks are throttled."""
    pids = []
    for host in lab.hosts:
        host_pids = netns.marker_pids(netns.fio_marker(netns.lab_run_dir(lab) / "netns" / host.name))
        assert host_pids, f"host {host.name}: no fio server found"
        for pid in host_pids:
            (cgroup / "cgroup.procs").write_text(f"{pid}\n")
        pids += host_pids
    return pids


PF_EXITING = 0x4  # include/linux/sched.h: set when a task starts to exit, kept while it is a zombie


def _exiting(pid: int) -> bool:
    """True if the process is gone or exiting (flags from /proc/PID/stat, field 9)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    flags = int(stat.rsplit(")", 1)[1].split()[6])
    return bool(flags & PF_EXITING)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with netns_cluster(tmp_path_factory.mktemp("scaling") / "work", "sc", count=4, subnet_base=87) as made:
        targets = {host: [connection] for host, connection in made.targets.items()}
        engine = ClientServerEngine(made.run, made.initiators, made.guard)
        fill = WorkloadSpec("fill", read_pct=0, random_pct=0, bs=1 << 20, iodepth=8, time_based=False, runtime_s=0)
        engine.run_plan(RunPlan("fill", tuple(JobSpec(f"fill-{h}", fill, t[0]) for h, t in targets.items())))
        joined = _join_blkio_cgroup(made.lab, made.array.cgroup)
        # A server's child of the fill job may still be exiting when it is joined: the kernel skips an exiting
        # task when it migrates (it can never fork again) and /proc keeps it until it is reaped. What must be
        # capped is every server process that is not exiting (children forked later inherit the cgroup).
        capped = {int(p) for p in (made.array.cgroup / "cgroup.procs").read_text().split()}
        uncapped = {pid for pid in joined if pid not in capped and not _exiting(pid)}
        assert joined and not uncapped, f"fio server processes outside the blkio cgroup: {uncapped}"
        yield Cluster(made.lab, made.array, engine, made.volumes, targets)


@pytest.fixture(scope="module")
def family() -> FamilySpec:
    return load_named("netns").for_family("scaling")


def test_equal_caps_scale_linearly_up_to_the_declared_limit(cluster: Cluster, family: FamilySpec) -> None:
    cluster.cap(dict.fromkeys(cluster.hosts, CAP_BYTES_PER_S))
    results = cluster.step(scaling.plan_steps(cluster.hosts))
    for result in results:
        expected = len(result.step.hosts) * CAP_BYTES_PER_S
        assert result.cluster.bytes_per_s == pytest.approx(expected, rel=0.03), f"{result.step.name}: caps not exact"
        for host, figures in result.hosts.items():
            assert figures.bytes_per_s == pytest.approx(CAP_BYTES_PER_S, rel=0.05), f"{result.step.name}: {host}"

    slow = slow_host_verdict(family[SLOW_HOST], results)
    assert slow.passed and "delivers" not in slow.detail, slow.line()
    print(slow.line())
    linear = linear_verdict(family[LINEAR], results)
    assert linear.passed and linear.measured >= 95.0, linear.line()
    print(linear.line())
    every_host = results[-1]
    assert every_host.step.hosts == tuple(cluster.hosts)
    limit = len(cluster.hosts) * CAP_BYTES_PER_S  # the declared data path = the sum of the caps
    datapath = datapath_verdict(family[DATAPATH], every_host.cluster.bytes_per_s, len(cluster.hosts), limit)
    assert datapath.passed and 95.0 <= datapath.measured <= 105.0, datapath.line()
    print(datapath.line())
    # The same aggregate against a limit twice as high must fail a bound above 50 %.
    doubled = datapath_verdict(family[DATAPATH], every_host.cluster.bytes_per_s, len(cluster.hosts), 2 * limit)
    assert doubled.measured == pytest.approx(datapath.measured / 2)
    assert not family[DATAPATH].evaluate(every_host.cluster.bytes_per_s, limit=2 * limit, hosts=4, min_efficiency_pct=60).passed


def test_the_one_capped_host_is_named_slow(cluster: Cluster, family: FamilySpec) -> None:
    cluster.cap({**dict.fromkeys(cluster.hosts, CAP_BYTES_PER_S), "h3": SLOW_CAP_BYTES_PER_S})
    results = cluster.constant_steps()
    verdict = slow_host_verdict(family[SLOW_HOST], results)
    assert not verdict.passed, verdict.line()
    print(verdict.line())
    assert verdict.measured == pytest.approx(75.0, abs=3.0)
    assert "host h3 delivers" in verdict.detail and "out of bounds: h3" in verdict.detail
    assert not any(f"host {h} delivers" in verdict.detail for h in ("h1", "h2", "h4"))


def test_lifted_caps_are_gone(cluster: Cluster) -> None:
    """Lifting the caps really lifts them: every step runs far beyond what the caps allowed.

    Which host is slowest without caps is this machine's loop devices and CPU that minute (they swing 2-3x
    and a fresh-clone make check saw h4 at 49.7 % of the median): no ground truth, so the slow-host verdict
    is not asserted here; equal caps naming no host is asserted in the first test."""
    cluster.cap(dict.fromkeys(cluster.hosts))
    results = cluster.constant_steps()
    assert min(r.cluster.bytes_per_s for r in results) > 4 * CAP_BYTES_PER_S
