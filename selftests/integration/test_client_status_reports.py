"""A cluster whose fio servers send status reports is refused, never summed (real fio, 2 netns hosts).

fio 3.33's client keeps each status report of a server (`--status-interval`, here given per
--client after each job file, as a server started with it would send them) as one more
client_stats entry, printed at the end with the final ones. Read as clones they would add
up to several times the run's I/Os; the engine refuses the run naming each host instead.
The same engine without the reports returns the run's results (one entry per job).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from iogate.engines.fio.client_server import ClientServerEngine, _ClusterSteer, _Watch
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import EngineError
from iogate.hosts.initiator import Initiator
from iogate.lab import HostLiveness
from iogate.metrics.types import Dir
from selftests.netns_cluster import NetnsCluster, netns_cluster

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and loop devices need root"),
]

RATE, RUNTIME_S = 200, 3  # 600 reads a host, far below the lab's 500 IOPS cap


class _Reporting(ClientServerEngine):
    """The engine with `--status-interval=1` after each host's job file: fio sends it to that server."""

    def _drive(self, argv: list[str], point_dir: Path, host_by_client: Mapping[str, str], initiators: Mapping[str, Initiator],
               limit_s: float, steer: _ClusterSteer | None = None, watch: _Watch | None = None) -> Path:
        reporting = [arg for a in argv for arg in ([a, "--status-interval=1"] if a.endswith("job.fio") else [a])]
        return super()._drive(reporting, point_dir, host_by_client, initiators, limit_s, steer, watch)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    with netns_cluster(tmp_path_factory.mktemp("csreports") / "work", "csr", count=2, subnet_base=71) as made:
        yield made


def _plan(made: NetnsCluster, name: str) -> RunPlan:
    workload = WorkloadSpec(name, read_pct=100, random_pct=100, bs=4 << 10, iodepth=2, runtime_s=RUNTIME_S, ramp_s=1, rate_iops=RATE)
    return RunPlan(name, tuple(JobSpec(f"{name}-{host}", workload, target) for host, target in made.targets.items()))


def test_status_reports_are_refused_naming_the_host_and_a_plain_run_counts_once(cluster: NetnsCluster) -> None:
    options = {"liveness": HostLiveness(interval_s=1.0), "stop_timeout_s": 10}
    with pytest.raises(EngineError) as refused:
        _Reporting(cluster.run, cluster.initiators, cluster.guard, **options).run_cluster(_plan(cluster, "reports"))
    assert "host h1:" in str(refused.value) and "reports-h1" in str(refused.value) and "status reports" in str(refused.value)

    plain = ClientServerEngine(cluster.run, cluster.initiators, cluster.guard, **options).run_cluster(_plan(cluster, "plain"))
    for host in ("h1", "h2"):
        reads = plain.hosts[host].total(Dir.READ).ios
        # fio's poisson rate process: within 10 % of rate x runtime, never the several-fold sum of reports.
        assert 0.9 * RATE * RUNTIME_S <= reads <= 1.1 * RATE * RUNTIME_S, (host, reads)
