"""Multi-host vdbench (hd=) over the netns lab: one master namespace, slaves in two host namespaces.

Ground truth is the array's exact cap (cgroup v1 blkio throttle), different per
host: each host's job runs flat out (queue depth 32: over 100 ms of I/O waits at
the throttle, so a briefly starved JVM does not drain it) on its own volume and must
measure that volume's cap within 2 %, which also proves the slaves ran in the
volume's cgroup (the rsh daemon was moved there). A fixed vdbench rate is no
ground truth here: on a loaded 2-core machine starved JVMs miss it. The jobs
must be reported on their own hosts, and after teardown no namespace, daemon or
JVM of the master is left (nor of the lab: netns_cluster checks that).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.engines.vdbench import health, netns_master
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.lab import QoS
from iogate.run.resources import marker_pids
from selftests.netns_cluster import NetnsCluster, netns_cluster
from selftests.vdbench_home import require_vdbench

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CAPS = {"h1": 300, "h2": 200}  # read IOPS per host's volume
WORKLOAD = WorkloadSpec("mh", read_pct=100, random_pct=100, bs=4 << 10, iodepth=32, runtime_s=8, ramp_s=1)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    require_vdbench()
    with netns_cluster(tmp_path_factory.mktemp("vdbmh") / "work", "vm", count=2, subnet_base=84) as made:
        yield made


def test_two_hosts_each_run_their_job_at_the_rate(cluster: NetnsCluster) -> None:
    home = require_vdbench()
    for host, volume in cluster.volumes.items():
        cluster.array.set_qos(volume, QoS(read_iops=CAPS[host]))
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
    print("per-job IOPS:", {name: round(j["read"].iops, 1) for name, j in by_job.items()}, "caps:", CAPS)
    assert {name: job.host for name, job in by_job.items()} == {f"vm-{h}": h for h in cluster.targets}
    for job in by_job.values():
        cap = CAPS[job.host]
        assert abs(job["read"].iops - cap) <= 0.02 * cap, (job.name, job["read"].iops, cap)
    assert set(result.cpu_busy_pct) == set(cluster.targets)
    assert result.errors == 0
    assert any(f"deleted namespace {net.namespace}" in line for line in lines), lines
    assert not Path(f"/run/netns/{net.namespace}").exists()
    assert all(marker_pids(netns_master.rsh_marker(net, h)) == [] for h in cluster.targets)
