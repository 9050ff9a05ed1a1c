"""Multi-host vdbench (hd=) over the netns lab: one master namespace, slaves in two host namespaces.

Ground truth is a fixed rate: iorate=2 x RATE split 50/50 by skew between two
jobs, one per host, with evenly spaced arrivals (rate_process=linear; poisson
arrivals would spread an 8 s count by about 3 %); each job must run at RATE within 2 % on its own host, the
per-host reports must name both hosts, and after teardown no namespace, daemon
or JVM of the master is left (nor of the lab: netns_cluster checks that).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.engines.vdbench import health, netns_master
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.resources import marker_pids
from selftests.netns_cluster import NetnsCluster, netns_cluster
from selftests.vdbench_home import require_vdbench

pytestmark = [pytest.mark.integration, pytest.mark.slow]

RATE = 150
WORKLOAD = WorkloadSpec("mh", read_pct=70, random_pct=100, bs="4k", iodepth=2, rate_iops=RATE, runtime_s=8, ramp_s=1,
                        extra={"rate_process": "linear"})


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    require_vdbench()
    with netns_cluster(tmp_path_factory.mktemp("vdbmh") / "work", "vm", count=2, subnet_base=84) as made:
        yield made


def test_two_hosts_each_run_their_job_at_the_rate(cluster: NetnsCluster) -> None:
    home = require_vdbench()
    net = netns_master.bring_up(cluster.run, {h.name: h.namespace for h in cluster.hosts}, home, subnet_base=85)
    try:
        # Shared 2-core machine: vdbench's whole-machine CPU notice says nothing about this run.
        engine = VdbenchEngine(cluster.run, cluster.initiators, cluster.guard, str(home),
                               tolerated_warnings=(health.CPU_WARNING,), master=net)
        plan = RunPlan("mh", tuple(JobSpec(f"vm-{h}", WORKLOAD, cluster.targets[h]) for h in sorted(cluster.targets)))
        result = engine.run_plan(plan)
    finally:
        lines = netns_master.tear_down(cluster.run, net)
    by_job = {j.name: j for j in result.jobs}
    print("per-job IOPS:", {name: round(j["read"].iops + j["write"].iops, 1) for name, j in by_job.items()})
    assert {name: job.host for name, job in by_job.items()} == {f"vm-{h}": h for h in cluster.targets}
    for job in by_job.values():
        iops = job["read"].iops + job["write"].iops
        assert abs(iops - RATE) <= 0.02 * RATE, (job.name, iops)
    assert set(result.cpu_busy_pct) == set(cluster.targets)
    assert result.errors == 0
    assert any(f"deleted namespace {net.namespace}" in line for line in lines), lines
    assert not Path(f"/run/netns/{net.namespace}").exists()
    assert all(marker_pids(netns_master.rsh_marker(net, h)) == [] for h in cluster.targets)
