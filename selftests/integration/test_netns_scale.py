"""A generated netns lab of 16 hosts (labs/netns-100.yaml's count form, its first 16) under one fio
client/server load: every host's figures come back and add up to the cluster's, and nothing is left.

Subnet 10.95.N (no other self-test uses it: grep subnet_base in selftests/), namespaces iog<pid>sc16-hN.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from iogate.engines.fio.client_server import ClientServerEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.lab import HostLiveness
from iogate.labs import netns
from iogate.metrics.types import Dir
from selftests.netns_cluster import netns_cluster

HOSTS = 16
SUBNET = 95

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and loop devices need root"),
]


def test_sixteen_generated_hosts_run_one_load_and_leave_nothing(tmp_path: Path) -> None:
    namespaces: list[str] = []
    with netns_cluster(tmp_path / "work", "sc16", count=HOSTS, subnet_base=SUBNET, lab_file="labs/netns-100.yaml") as cluster:
        namespaces = [h.namespace for h in cluster.hosts]
        assert len(cluster.hosts) == HOSTS and cluster.hosts[15].ns_addr == f"10.{SUBNET}.16.2"
        engine = ClientServerEngine(cluster.run, cluster.initiators, cluster.guard, liveness=HostLiveness(interval_s=2.0),
                                    stop_timeout_s=20)
        # A capped rate: the figures each host must report are known (about 100 IOPS for 3 s), whatever the machine.
        workload = WorkloadSpec("scale", read_pct=100, random_pct=100, bs=4 << 10, iodepth=1, runtime_s=3, rate_iops=100)
        plan = RunPlan("scale", tuple(JobSpec(f"scale-{h}", workload, cluster.targets[h]) for h in cluster.targets))
        result = engine.run_cluster(plan)

        assert sorted(result.hosts) == sorted(f"h{n}" for n in range(1, HOSTS + 1))
        for name, host in result.hosts.items():
            reads = host.total(Dir.READ).ios
            assert 150 <= reads <= 450, f"host {name}: {reads} reads in 3 s at 100 IOPS"
            assert {s.host for s in host.series.samples} == {name} and host.series.hist, f"host {name}: no per-second series"
        total = result.total(Dir.READ)
        assert total.ios == sum(h.total(Dir.READ).ios for h in result.hosts.values())
        assert sum(total.clat.bins.values()) == total.ios
        assert {s.host for s in result.result.series.samples} == set(result.hosts)
        assert set(result.result.cpu_busy_pct) == set(result.hosts)
    assert namespaces and not set(namespaces) & set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                                                   check=True).stdout.split())
    assert not [pid for h in netns.plan_hosts(cluster.lab, netns.lab_run_dir(cluster.lab))
                for pid in netns.marker_pids(str(netns.lab_run_dir(cluster.lab) / "netns" / h.name))]
