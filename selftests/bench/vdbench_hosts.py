"""vdbench hd= at N netns hosts (issue 32): one master namespace, a slave JVM per host, each volume capped.

    python -m selftests.bench.vdbench_hosts 16      # root; generated lab subnet 10.98.N, master 10.97.N

Prints the hosts reported, the total read IOPS (cap: N x 200), and the JVMs' peak RSS (every java
process on the machine, sampled every 0.5 s). Measured here at 16 hosts: 16 reported, 3089 of 3200 IOPS,
peak 4.5 GB over 33 JVMs (136 MB each). Uncapped, vdbench's master fell behind on 2 cores ("reporting of
intervals 2-12 has been skipped") and the flatfile parser refused the run point (fail closed).
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path

from iogate.engines.vdbench import health, netns_master
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.lab import QoS
from selftests.netns_cluster import netns_cluster
from selftests.vdbench_home import require_vdbench

CAP_IOPS = 200  # per host's volume: uncapped, 16 JVMs on 2 cores left vdbench's reporting behind
WORKLOAD = WorkloadSpec("mh", read_pct=100, random_pct=100, bs=4 << 10, iodepth=4, runtime_s=10, ramp_s=1)


def java_rss_kb() -> tuple[int, int]:
    """(summed VmRSS in kB, count) of every java process on the machine."""
    total, count = 0, 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b"java" not in (proc / "cmdline").read_bytes().split(b"\0")[0]:
                continue
            for line in (proc / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
                    count += 1
        except OSError:
            continue
    return total, count


def main(count: int) -> int:
    peak = [0, 0]
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.5):
            kb, jvms = java_rss_kb()
            if kb > peak[0]:
                peak[:] = [kb, jvms]

    home = require_vdbench()
    work = Path(tempfile.mkdtemp(prefix="iogate-vdbench-hosts-", dir="/var/tmp"))
    started = time.monotonic()
    with netns_cluster(work / "work", "vd", count=count, subnet_base=98, lab_file="labs/netns-100.yaml") as cluster:
        up_s = time.monotonic() - started
        for volume in cluster.volumes.values():
            cluster.array.set_qos(volume, QoS(read_iops=CAP_IOPS))
        net = netns_master.bring_up(cluster.run, {h.name: h.namespace for h in cluster.hosts}, home, subnet_base=97)
        threading.Thread(target=watch, daemon=True).start()
        try:
            engine = VdbenchEngine(cluster.run, cluster.initiators, cluster.guard, str(home),
                                   tolerated_warnings=(health.CPU_WARNING,), master=net)
            plan = RunPlan("mh", tuple(JobSpec(f"vm-{h}", WORKLOAD, cluster.targets[h]) for h in sorted(cluster.targets)))
            mark = time.monotonic()
            result = engine.run_plan(plan)
            run_s = time.monotonic() - mark
        finally:
            stop.set()
            netns_master.tear_down(cluster.run, net)
    hosts = sorted({j.host for j in result.jobs})
    print(f"vdbench hd= at {count} hosts: {len(hosts)} hosts reported, read IOPS {sum(j['read'].iops for j in result.jobs):.0f} "
          f"(cap {count * CAP_IOPS}), errors {result.errors}; run {run_s:.0f} s (lab and volumes up {up_s:.0f} s); "
          f"peak JVM RSS {peak[0] / 1024:.0f} MB over {peak[1]} JVMs ({peak[0] / 1024 / max(peak[1], 1):.0f} MB each)")
    return 0 if len(hosts) == count and result.errors == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 16))
