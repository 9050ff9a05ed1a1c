"""A generated netns lab of 16 hosts (labs/netns-100.yaml's count form, its first 16) under one fio
client/server load: every host's figures come back and add up to the cluster's, and nothing is left.
And 6 hosts through client stepping (each alone, then 2, 4, 6 together) at a known rate per host.

Subnets 10.95.N and 10.79.N (no other self-test uses them: grep subnet_base in selftests/), namespaces
iog<pid>sc16-hN and iog<pid>st6-hN.
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
from iogate.procedures import scaling
from iogate.report.stepping_chart import stepping_png
from selftests.netns_cluster import netns_cluster

HOSTS = 16
SUBNET = 95
STEP_HOSTS = 6
STEP_SUBNET = 79

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


def test_six_hosts_step_alone_then_2_4_6_and_scale_linearly(tmp_path: Path) -> None:
    namespaces: list[str] = []
    with netns_cluster(tmp_path / "work", "st6", count=STEP_HOSTS, subnet_base=STEP_SUBNET, lab_file="labs/netns-100.yaml") as cluster:
        namespaces = [h.namespace for h in cluster.hosts]
        engine = ClientServerEngine(cluster.run, cluster.initiators, cluster.guard, liveness=HostLiveness(interval_s=2.0),
                                    stop_timeout_s=20)
        # fio's own rate cap per host: each host alone does 100 IOPS, k hosts k x 100, whatever the machine.
        workload = WorkloadSpec("step", read_pct=100, random_pct=100, bs=4 << 10, iodepth=1, runtime_s=3, rate_iops=100)
        hosts = [h.name for h in cluster.lab.hosts]
        steps = scaling.plan_steps(hosts, scaling.incremental_every(len(hosts), "smoke"))
        assert [s.name for s in steps] == [f"alone-h{n}" for n in range(1, 7)] + ["hosts-2", "hosts-4", "hosts-6"]
        targets = {host: [cluster.targets[host]] for host in hosts}
        results = [scaling.StepResult.from_run(step, engine.run_cluster(scaling.step_plan(step, workload, targets)).result)
                   for step in steps]

        alone = scaling.constant_figures(results, "iops")
        assert set(alone) == set(hosts) and all(60 <= v <= 140 for v in alone.values()), alone
        assert not scaling.slow_hosts(alone, 30.0)
        for row in scaling.step_rows(results):
            if row["mode"] == "incremental":
                assert 0.6 * 100 * row["hosts"] <= row["cluster_iops"] <= 1.4 * 100 * row["hosts"], row
        assert stepping_png(results, metric="iops", title="6 hosts").startswith(b"\x89PNG")
    assert namespaces and not set(namespaces) & set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                                                   check=True).stdout.split())
