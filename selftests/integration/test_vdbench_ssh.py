"""vdbench on one remote host over SSH (VdbenchEngine._run_host's remote path), as on a real lab's hosts.

The host is a namespace of the netns lab reached through its sshd, but the engine
is given no master namespaces: to it the host is just a remote machine, so the
parmfile is copied there, vdbench runs there (master and slave over that host's
loopback), and its output directory is fetched back. Ground truth is the volume's
exact cap (cgroup v1 blkio throttle): a flat-out job (queue depth 32) measures it,
not the device's tens of thousands, only if vdbench's slave ran in the volume's
cgroup, which an SSH session on a namespace host joins through its sshd, not
through a sysfs it cannot see.
A vdbench that cannot start there is reported with the host's own words. The
point's working directory on the host is journalled and gone once the results are in.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.engines.vdbench import health
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import EngineError
from iogate.hosts.workdir import REMOTE_ROOT
from iogate.lab import QoS
from selftests.netns_cluster import NetnsCluster, netns_cluster
from selftests.vdbench_home import require_vdbench

pytestmark = [pytest.mark.integration]

CAP = 300  # read IOPS of the host's volume
WORKLOAD = WorkloadSpec("ssh", read_pct=100, random_pct=100, bs=4 << 10, iodepth=32, runtime_s=6, ramp_s=1)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    require_vdbench()
    # Subnet 10.88: apart from the netns lab (77), lab variants (78), the other self-tests and the master (89).
    with netns_cluster(tmp_path_factory.mktemp("vdbssh") / "work", "vs", count=1, subnet_base=88) as made:
        yield made


def _remote_engine(cluster: NetnsCluster, home: str) -> VdbenchEngine:
    initiator = cluster.initiators["h1"]
    assert not initiator.is_local and initiator.config.transport.startswith("ssh://")
    # No master_namespaces: the engine must treat h1 as a remote machine (no master, no hd=).
    # Shared 2-core machine: vdbench's whole-machine CPU notice says nothing about this run.
    return VdbenchEngine(cluster.run, cluster.initiators, cluster.guard, home, tolerated_warnings=(health.CPU_WARNING,))


def test_remote_host_over_ssh_measures_the_volumes_cap(cluster: NetnsCluster) -> None:
    home = require_vdbench()
    cluster.array.set_qos(cluster.volumes["h1"], QoS(read_iops=CAP))
    engine = _remote_engine(cluster, str(home))
    result = engine.run_plan(RunPlan("ssh", (JobSpec("vm-h1", WORKLOAD, cluster.targets["h1"]),)))
    assert engine.master is None  # the SSH path ran, not the master's

    out = Path(result.artifacts["vdbench output"])
    assert out.is_relative_to(cluster.run.run_dir) and (out / "flatfile.html").is_file()  # fetched from the host
    console = Path(result.artifacts["h1 vdbench console"]).read_text()
    assert health.DONE in console
    assert "-m localhost" in console  # the slave connected back to its master over the host's loopback

    job = result.jobs[0]
    print("IOPS:", round(job["read"].iops, 1), "cap:", CAP, "intervals:", len(result.series.samples))
    assert (job.name, job.host) == ("vm-h1", "h1")
    assert result.total_iops > 0 and result.errors == 0
    assert len(result.series.samples) >= 3  # per-second intervals after the ramp
    # The throttle lets no more through. vdbench counts each interval's I/Os per nominal second, so a
    # late statistics request moves ~0.1 s of I/O between neighbouring intervals; inside the window that
    # cancels, at its edges it is ~1.7 % of 6 s (runner.py MIN_RAMP_INTERVALS keeps the systematic one,
    # interval 2, out). Outside the cgroup the same job runs at tens of thousands.
    assert abs(job["read"].iops - CAP) <= 0.02 * CAP

    # The point's working directory on the host went once its output was fetched, and the ledger says so.
    work = f"{REMOTE_ROOT}/{cluster.run.run_id}/001-ssh/h1"
    assert cluster.initiators["h1"].run_unchecked("test -e %s", work).rc == 1
    journalled = [e for e in cluster.run.ledger.entries.values() if e.kind == "remote" and work in e.attrs["what"]]
    assert [(e.attrs["host"], e.state) for e in journalled] == [("h1", "released")]


def test_a_vdbench_that_cannot_start_on_the_host_is_reported_with_its_words(cluster: NetnsCluster) -> None:
    missing = "/nonexistent/iogate-vdbench"
    engine = _remote_engine(cluster, missing)
    plan = RunPlan("nohome", (JobSpec("vm-h1", WORKLOAD, cluster.targets["h1"]),))
    with pytest.raises(EngineError) as caught:
        engine.run_plan(plan)
    message = str(caught.value)
    assert "host h1" in message and "vdbench exited 127" in message, message
    assert f"failed to run command '{missing}/vdbench': No such file or directory" in message, message
    work = f"{REMOTE_ROOT}/{cluster.run.run_id}/001-nohome/h1"
    assert cluster.initiators["h1"].run_unchecked("test -e %s", work).rc == 1  # a failed point leaves none either
