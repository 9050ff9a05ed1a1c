"""The controller's cost per live host: N netns hosts, one fio client/server load, CPU and RSS measured.

    python -m iogate.bench.controller [--hosts 16 64 100] [--runtime 20] [--workdir /var/tmp/iogate-bench]

For each N: a generated copy of labs/netns-100.yaml (its first N hosts, namespaces
iog<pid>cb-hN, subnet 10.96.N: no self-test uses it) is brought up; every host's
fio server runs one null-engine job (no device: the load generator's cost, not a
disk's) at 1000 IOPS with the 1 s iops, clat and clat_hist logs every IOGate run
writes; the controller drives them through ClientServerEngine's own client loop
(the fio client, its output pumps and the SSH liveness watchdog), then parses
every host's json+ and logs as run_cluster does. Measured: the controller's CPU
(this process and its children: the fio client and the ssh probes) over the run,
the fio client's peak RSS, this process's RSS growth; per live host. Then the
lab is torn down and checked empty. Needs root. Prints one line per N:
`controller per live host at N hosts: CPU = x % of a core, RSS = y MB (...)`.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import threading
import time
from pathlib import Path

from iogate.engines.fio import parse
from iogate.engines.fio.client_server import ClientServerEngine, _host_logs, stream_client_entries, stream_host_jobs
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import HostLiveness, load_lab
from iogate.labs import netns
from iogate.run import Run

REPO = Path(__file__).resolve().parents[2]
SUBNET = 96

JOB = """[global]
ioengine=null
size=1g
rw=randread
bs=4k
rate_iops=1000
time_based=1
runtime={runtime}
log_avg_msec=1000
log_hist_msec=1000
log_unix_epoch=1
per_job_logs=1
[load-{host}]
write_iops_log={logs}/load-{host}
write_lat_log={logs}/load-{host}
write_hist_log={logs}/load-{host}
"""


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _watch_client_rss(marker: str, stop: threading.Event, peak: list[int]) -> None:
    """Peak RSS (VmHWM, kB) of the fio client process whose command line holds `marker`."""
    while not stop.wait(0.5):
        for pid in netns.marker_pids(marker):
            peak[0] = max(peak[0], _status_kb(pid, "VmHWM"))


def cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(count: int, runtime_s: int, workdir: Path, liveness: HostLiveness) -> str:
    lab = netns.variant(load_lab(REPO / "labs" / "netns-100.yaml"), workdir=workdir, tag=f"{os.getpid() % 10000}cb",
                        count=count, subnet_base=SUBNET)
    started = time.monotonic()
    _, hosts = netns.up(lab)
    up_s = time.monotonic() - started
    try:
        run = Run.start(workdir, "controller-bench")
        initiators = {h.name: Initiator.from_config(h) for h in lab.hosts}
        engine = ClientServerEngine(run, initiators, Guard(), liveness=liveness)
        point_dir = run.path("points", "bench", "client.json").parent
        point_dir.mkdir(parents=True, exist_ok=True)
        host_by_client = {h.ns_addr: h.name for h in hosts}
        argv = ["fio", "--output-format=json+"]
        for host in hosts:
            logs = point_dir / host.name / "logs"
            logs.mkdir(parents=True)
            job = point_dir / host.name / "job.fio"
            job.write_text(JOB.format(runtime=runtime_s, host=host.name, logs=logs))
            argv += [f"--client={host.ns_addr}", str(job)]
        rss_before_kb = _status_kb(os.getpid(), "VmHWM")
        stop, client_peak = threading.Event(), [0]
        watcher = threading.Thread(target=_watch_client_rss, args=(str(point_dir / hosts[0].name / "job.fio"), stop, client_peak))
        watcher.start()
        cpu_before, wall_before = cpu_s(), time.monotonic()
        try:
            output = engine._drive(argv, point_dir, host_by_client, initiators, runtime_s + 120)
        finally:
            stop.set()
            watcher.join()
        drive_cpu_s, drive_wall_s = cpu_s() - cpu_before, time.monotonic() - wall_before
        mark = time.monotonic()
        jobs = {share.host: share.jobs for share in stream_host_jobs(stream_client_entries(output), host_by_client)}
        samples = 0
        for host in hosts:
            host_samples, _ = parse.parse_logs(_host_logs(point_dir / host.name / "logs", host.ns_addr), host.name)
            samples += len(host_samples)
        parse_s = time.monotonic() - mark
        rss_growth_mb = (_status_kb(os.getpid(), "VmHWM") - rss_before_kb) / 1024
        missing = sorted(set(host_by_client.values()) - set(jobs))
        if missing or samples < count * (runtime_s - 2):
            raise SystemExit(f"{count} hosts: results missing (hosts {missing}, {samples} samples)")
    finally:
        mark = time.monotonic()
        netns.down(lab)
        down_s = time.monotonic() - mark
    left = netns.leftovers(hosts, netns.lab_run_dir(lab))
    if left:
        raise SystemExit(f"{count} hosts: left behind: {left}")
    core_pct = 100 * drive_cpu_s / drive_wall_s
    client_mb = client_peak[0] / 1024
    return (f"controller per live host at {count} hosts: CPU = {core_pct / count:.2f} % of a core, "
            f"RSS = {(client_mb + max(rss_growth_mb, 0)) / count:.2f} MB "
            f"(whole controller over the {drive_wall_s:.0f} s run: {core_pct:.0f} % of a core, fio client peak RSS {client_mb:.0f} MB, "
            f"Python RSS growth {rss_growth_mb:.0f} MB; json+ and logs parsed in {parse_s:.1f} s; "
            f"lab up {up_s:.1f} s, down {down_s:.1f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, nargs="+", default=[16, 64, 100])
    parser.add_argument("--runtime", type=int, default=20, help="seconds of load per measurement")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a fresh directory under /var/tmp")
    # The lab's hosts share the controller's 2 cores here: under 64 loaded namespaces an ssh probe took
    # over 10 s, so the default host_liveness (10 s probe, 20 s deadline) lost every host (measured).
    parser.add_argument("--probe-timeout", type=float, default=30.0, help="host_liveness probe_timeout_s (s)")
    parser.add_argument("--deadline", type=float, default=60.0, help="host_liveness deadline_s (s)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("controller bench: skipped (network namespaces need root)")
        return 0
    for count in args.hosts:
        workdir = args.workdir or Path(tempfile.mkdtemp(prefix="iogate-controller-bench-", dir="/var/tmp"))
        liveness = HostLiveness(probe_timeout_s=args.probe_timeout, deadline_s=args.deadline)
        print(measure(count, args.runtime, workdir / f"n{count}", liveness), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
