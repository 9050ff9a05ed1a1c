"""fio client/server on the netns lab: per-host and cluster results, merged percentiles, failures.

One small copy of labs/netns.yaml (3 hosts) is brought up for the module; the
array is the local driver, so each namespace's fio server writes a loop device
of this run, checked by identity over SSH before the run starts.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from iogate.arrays.base import Volume
from iogate.engines.fio.client_server import ClientServerEngine, stop_server_jobs
from iogate.engines.fio.jobfile import FioSettings
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import GuardRefused, HostError
from iogate.hosts.connectors.base import Connection
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, HostLiveness, Lab
from iogate.labs import netns
from iogate.metrics.types import Dir
from iogate.run import Run
from selftests.netns_cluster import netns_cluster

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and loop devices need root"),
]


@dataclass
class Cluster:
    lab: Lab
    hosts: list[netns.NsHost]
    run: Run
    engine: ClientServerEngine
    initiators: dict[str, Initiator]
    targets: dict[str, Connection]

    def plan(self, name: str, workload: WorkloadSpec, hosts: list[str] | None = None) -> RunPlan:
        names = hosts or list(self.targets)
        return RunPlan(name, tuple(JobSpec(f"{name}-{h}", workload, self.targets[h]) for h in names))

    def server_pids(self, host: str) -> list[int]:
        return netns.marker_pids(netns.fio_marker(netns.lab_run_dir(self.lab) / "netns" / host))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with netns_cluster(tmp_path_factory.mktemp("cs") / "work", "cs", count=3, subnet_base=86) as made:
        engine = ClientServerEngine(made.run, made.initiators, made.guard, liveness=HostLiveness(interval_s=1.0), stop_timeout_s=10)
        yield Cluster(made.lab, made.hosts, made.run, engine, made.initiators, made.targets)


def test_per_host_results_are_tagged_with_lab_names_and_add_up(cluster: Cluster) -> None:
    workload = WorkloadSpec("mixed", read_pct=70, random_pct=100, bs=4 << 10, iodepth=4, runtime_s=3)
    result = cluster.engine.run_cluster(cluster.plan("mixed", workload))
    assert sorted(result.hosts) == ["h1", "h2", "h3"]
    for name, host in result.hosts.items():
        assert host.client == next(h.ns_addr for h in cluster.hosts if h.name == name)
        assert [job.host for job in host.jobs] == [name] and host.jobs[0].name == f"mixed-{name}"
        assert host.total(Dir.READ).ios > 0 and host.total(Dir.WRITE).ios > 0
        assert {s.host for s in host.series.samples} == {name} and host.series.hist
        assert 0 < host.cpu_busy_pct <= 100 and host.cpu_pct_per_kiops is not None and host.cpu_pct_per_kiops > 0
        assert 2500 <= host.end_ms - host.start_ms <= 3500
    for direction in (Dir.READ, Dir.WRITE):
        total = result.total(direction)
        assert total.ios == sum(h.total(direction).ios for h in result.hosts.values())
        assert math.isclose(total.iops, sum(h.total(direction).iops for h in result.hosts.values()))
        assert sum(total.clat.bins.values()) == total.clat.samples == total.ios
    assert set(result.result.cpu_busy_pct) == {"h1", "h2", "h3"}
    assert Path(result.result.artifacts["fio client json+"]).is_file()
    # The plain RunResult (Engine protocol) carries the same cluster.
    assert result.result.total(Dir.READ).ios == result.total(Dir.READ).ios


def _raw_clat_ns(log: Path) -> list[int]:
    """Every read's clat (ns) from a write_lat_log written without log_avg_msec."""
    values = []
    for line in log.read_text().splitlines():
        fields = [f.strip() for f in line.split(",")]
        if fields[2] == "0":
            values.append(int(fields[1]))
    return values


def _raw_percentile(values: list[int], pct: float) -> float:
    """fio's definition: the smallest latency with at least pct % of samples at or below it."""
    ordered = sorted(values)
    return float(ordered[max(math.ceil(pct / 100 * len(ordered)) - 1, 0)])


def test_cluster_percentiles_from_merged_bins_match_raw_latency_logs(cluster: Cluster) -> None:
    # Per-IO latency logs (fio's own setting log_avg_msec=0) at a capped rate keep the logs small.
    workload = WorkloadSpec("raw", read_pct=100, random_pct=100, bs=4 << 10, iodepth=2, runtime_s=3, rate_iops=2000)
    per_io = ClientServerEngine(cluster.run, cluster.initiators, cluster.engine.guard, liveness=HostLiveness(interval_s=1.0),
                                stop_timeout_s=10,
                                settings=FioSettings(log_avg_msec=0))
    result = per_io.run_cluster(cluster.plan("raw", workload))
    point_dir = Path(result.result.artifacts["fio client json+"]).parent
    raw: list[int] = []
    for host in result.hosts:
        per_host = _raw_clat_ns(point_dir / host / "logs" / f"raw-{host}_clat.1.log")
        assert len(per_host) == result.hosts[host].total(Dir.READ).ios
        raw += per_host
    total = result.total(Dir.READ)
    assert len(raw) == sum(total.clat.bins.values()) > 10_000
    for pct in (50.0, 90.0, 99.0, 99.9):
        merged = result.percentile_ns(Dir.READ, pct)
        exact = _raw_percentile(raw, pct)
        assert abs(merged - exact) <= 0.01 * exact, f"p{pct}: merged bins {merged} ns vs raw logs {exact} ns"
    # Averaging the hosts' own p99 is not the cluster p99 in general; the merged value is what we keep.
    assert result.percentile_ns(Dir.READ, 99.0) == pytest.approx(_raw_percentile(raw, 99.0), rel=0.01)


def test_a_stop_request_ends_every_host_early_and_keeps_their_results(cluster: Cluster) -> None:
    """LoadControl on the cluster engine: a long run (cap 120 s) stopped after ~3 s still returns
    every host's results and per-second series (SIGINT to the client stops the servers' jobs)."""
    from iogate.engines.base import LoadControl

    control = LoadControl()
    workload = WorkloadSpec("stopped", read_pct=100, random_pct=100, bs=4 << 10, iodepth=2, runtime_s=120, ramp_s=1,
                            until_stopped=True)

    def stop_soon() -> None:
        assert control.wait_measuring(30) is not None
        time.sleep(3)
        control.request_stop()

    stopper = threading.Thread(target=stop_soon)
    stopper.start()
    began = time.monotonic()
    result = cluster.engine.run_cluster(cluster.plan("stopped", workload), control)
    stopper.join()
    assert time.monotonic() - began < 60, "the run went on towards its 120 s cap: it was not stopped"
    assert sorted(result.hosts) == ["h1", "h2", "h3"]
    for host in result.hosts.values():
        assert host.total(Dir.READ).ios > 0 and host.series.samples
        assert 1000 <= host.end_ms - host.start_ms <= 15000


def test_guard_refuses_a_device_this_run_did_not_provision(cluster: Cluster) -> None:
    # The real device of h2's volume, but presented as a volume this run never provisioned.
    volume = Volume(name="stranger", size_bytes=64 << 20, identity=DeviceIdentity(backing_file="/var/tmp/not-ours.img"))
    device = cluster.targets["h2"].device or ""
    stranger = Connection(protocol="block", host="h1", volume=volume, filename=device, device=device)
    plan = RunPlan("refused", (JobSpec("refused-h1", WorkloadSpec("w", runtime_s=1), stranger),))
    with pytest.raises(GuardRefused, match="host h1"):
        cluster.engine.run_cluster(plan)


# -- live: a client/server point stops too (its feed: each host's block counters, iogate/engines/fio/cs_live.py) --
# Before the failure cases below: they kill h2's fio server and h3's sshd for the rest of the module.
def _live_judge():  # type: ignore[no-untyped-def]
    """The early-stop truth tests' spec: tiles.targets_held at 75 % of target in every 5 s interval."""
    from iogate.judging.judge import SpecJudge
    from selftests.integration.test_early_stop_truth import SPEC, load_spec_text

    return SpecJudge(load_spec_text(SPEC))


def test_a_target_no_host_can_hold_fail_fasts_the_cluster_point_with_the_full_runs_verdict(cluster: Cluster) -> None:
    """Each host's VM asks 10 million IOPS of a loop device in a namespace on a 2-core machine (it does tens of
    thousands at most): the first 5 s interval already misses the 75 % floor, so the live judge stops a 60 s point
    within its first intervals (well before half of it), and the targets verdict fails naming the VMs."""
    from iogate.engines.stopping import run_watched
    from iogate.judging.live import point_watch
    from iogate.judging.monotonic import LiveContext
    from iogate.metrics.resample import judged_series

    judge = _live_judge()
    runtime_s, target, bucket_ms = 60.0, 10_000_000, 5000
    workload = WorkloadSpec("vm", read_pct=100, random_pct=100, bs=4 << 10, iodepth=4, runtime_s=runtime_s, ramp_s=1,
                            rate_iops=target)
    plan = cluster.plan("livemiss", workload, ["h1", "h2"])
    targets = {job.name: float(target) for job in plan.jobs}
    watch = point_watch(judge.family("tiles"), runtime_s, context=LiveContext(targets, bucket_ms), hosts={"h1", "h2"})
    result = run_watched(cluster.engine, plan, watch)
    assert result.stop is not None and result.stop.kind == "fail_fast", result.stop
    assert result.stop.at_s < runtime_s / 2, result.stop.sentence()
    verdicts = judge.targets("tiles", result, judged_series(result, bucket_ms), targets, {"all": set(targets)}, min_intervals=1)
    held = next(v for v in verdicts if v.criterion == "targets_held")
    assert not held.passed and "livemiss-h1" in held.detail + str(held.evidence), held.detail


def test_a_steady_cluster_point_stops_after_min_s(cluster: Cluster) -> None:
    """Two hosts' VMs paced at 200 IOPS each (far below what a loop device does): IOPS hold from the first second, so
    `stop: steady` (min_s 8, 2 s rounds; a wide latency rule, since an unthrottled loop device's per-second service
    time swings on shared cores) stops the 60 s point at or after min_s and well before its end."""
    from iogate.engines.stopping import run_watched
    from iogate.judging.live import point_watch
    from iogate.judging.steady_stop import SteadyStop

    judge = _live_judge()
    runtime_s = 60.0
    rule = SteadyStop(mode="steady", min_s=8, round_s=2, window_rounds=3, max_range_pct=100, max_slope_pct=50)
    workload = WorkloadSpec("vm", read_pct=100, random_pct=100, bs=4 << 10, iodepth=1, runtime_s=runtime_s, ramp_s=1,
                            rate_iops=200)
    plan = cluster.plan("livesteady", workload, ["h1", "h2"])
    result = run_watched(cluster.engine, plan, point_watch(judge.family("baseline"), runtime_s, steady=rule, hosts={"h1", "h2"}))
    assert result.stop is not None and result.stop.kind == "steady", result.stop
    assert rule.min_s <= result.stop.at_s <= runtime_s / 2, result.stop.sentence()
    assert result.errors == 0 and result.total_iops > 0


def _kill_once_running(pids_of: Callable[[], list[int]], server_pids: Callable[[], list[int]]) -> threading.Thread:
    """SIGKILL pids_of() once the host's fio server runs this test's jobs: a process of it that was not
    there before (a fixed delay raced a slow client's connect under load; "more than the listener"
    matched the previous test's job still ending, and the kill came before this run's jobs began)."""
    before = set(server_pids())

    def kill() -> None:
        deadline = time.monotonic() + 60
        while not set(server_pids()) - before and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # a second of I/O on every host before the death
        # Listed again after each round: a process forked between a listing and its kill survives it.
        for _ in range(50):
            pids = pids_of()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):  # ended since the listing
                    os.kill(pid, 9)
            time.sleep(0.1)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def _no_jobs_left(cluster: Cluster, hosts: list[str]) -> None:
    for host in hosts:
        ns_host = next(h for h in cluster.hosts if h.name == host)
        assert stop_server_jobs(cluster.initiators[host], ns_host.ns_addr, timeout_s=0) == [], f"{host} still runs fio jobs"
    assert not [e for e in cluster.run.ledger.open_entries("process")], "the fio client is still journalled open"
    assert netns.marker_pids(str(cluster.run.run_dir / "points")) == [], "a fio client process is left"


def test_fio_server_dying_mid_run_names_the_host_and_stops_the_rest(cluster: Cluster) -> None:
    workload = WorkloadSpec("long", read_pct=100, bs=4 << 10, iodepth=2, runtime_s=120)  # a cap far beyond the 4 s kill
    killer = _kill_once_running(lambda: cluster.server_pids("h2"), lambda: cluster.server_pids("h2"))
    started = time.monotonic()
    # Which of fio's client messages comes depends on where the kill lands in the client's handshake with
    # the forked server ("disconnected" after it, "failed to connect" during it): both name h2's server.
    with pytest.raises(HostError, match=r"host h2: fio server: (client: host=\S+ disconnected|fio: failed to connect to \S+)") as failure:
        cluster.engine.run_cluster(cluster.plan("long", workload))
    killer.join()
    assert "h1" not in str(failure.value).split("(run stopped")[0]
    assert time.monotonic() - started < 60, "the run went on towards its 120 s cap after the host died"
    _no_jobs_left(cluster, ["h1", "h3"])
    assert cluster.server_pids("h1") and cluster.server_pids("h3"), "the healthy hosts' servers keep listening"


def test_sshd_dying_mid_run_names_the_host(cluster: Cluster) -> None:
    workload = WorkloadSpec("long-ssh", read_pct=100, bs=4 << 10, iodepth=2, runtime_s=120)
    sshd = netns.sshd_marker(netns.lab_run_dir(cluster.lab) / "netns" / "h3")
    killer = _kill_once_running(lambda: netns.marker_pids(sshd), lambda: cluster.server_pids("h3"))
    started = time.monotonic()
    with pytest.raises(HostError, match=r"host h3: stopped answering") as failure:
        cluster.engine.run_cluster(cluster.plan("long-ssh", workload, hosts=["h1", "h3"]))
    killer.join()
    assert "host h1:" not in str(failure.value)
    assert time.monotonic() - started < 60, "the run went on towards its 120 s cap after sshd died"
    _no_jobs_left(cluster, ["h1"])
    # h3 cannot be asked over SSH any more; on this machine its server is seen directly: only the listener is left.
    deadline = time.monotonic() + 10
    while len(cluster.server_pids("h3")) > 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(cluster.server_pids("h3")) == 1
