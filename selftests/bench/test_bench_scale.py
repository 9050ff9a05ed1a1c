"""Issue 32's scale benchmarks (`make bench`): figures printed, never wall-clock bounds asserted.

- merge of 1000 hosts: the controller's work after a 1,000-host client/server point: the json+
  parsed, split per host and merged (the 64-host benchmark's synthesis, at 1,000), then every
  host's 1 s logs (a 30 s point: iops, clat, clat_hist) parsed one host at a time.
- 1 h x 100 hosts: selftests/bench/hour_path.py in its own process (its peak RSS is the path's):
  IOGATE_BENCH_HOUR_SECONDS shortens it (default 3600, ~1.5 min on the 2-core reference machine).
- controller per live host: iogate.bench.controller on 16, 64 and 100 live netns hosts (root only;
  IOGATE_BENCH_LIVE_HOSTS="16" to run fewer).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from iogate.bench.synthetic import host_logs, ios_at
from iogate.engines.fio.parse import parse_logs
from iogate.metrics.histogram import Histogram, value_to_index
from selftests.bench.test_bench_merge64 import merge_all, real_job, shifted, synthesise

__all__ = ["real_job"]  # the fio-made json+ job the merge synthesis scales (a fixture)

REPO = Path(__file__).resolve().parents[2]
HOSTS = 1000
POINT_S = 30
START_MS = 1_700_000_000_000


def test_bench_merge_1000_hosts_json_and_logs(real_job: dict[str, Any], tmp_path: Path, bench_figures: list[str]) -> None:
    text, host_by_client = synthesise(real_job, HOSTS)
    path = tmp_path / "client.out"
    path.write_text(text)
    size_mb = len(text) / 1e6
    del text
    walls, cpus = [], []
    for _ in range(3):  # the best of three: the machine is shared, the least disturbed run is the figure
        started, started_cpu = time.perf_counter(), time.process_time()
        figures = merge_all(path, host_by_client)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - started_cpu)
    tracemalloc.start()  # a fourth merge for memory: tracemalloc slows Python many times over
    merge_all(path, host_by_client)
    _, peak_bytes = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # Worked from the synthesis (host n's bins are the real job's times 1 + n % 7), not from the merge.
    assert figures["read_ios"] == sum(real_job["read"]["clat_ns"]["N"] * (1 + n % 7) for n in range(HOSTS))
    expected = Histogram.merged(
        Histogram({value_to_index(int(k)): c * (1 + n % 7) for k, c in shifted(real_job["read"]["clat_ns"]["bins"], n % 8, 1).items()})
        for n in range(HOSTS))
    assert figures["read_p99_ns"] == expected.percentile_ns(99) and figures["read_p99.99_ns"] == expected.percentile_ns(99.99)
    bench_figures.append(f"merge of {HOSTS} hosts = {min(walls):.1f} s (best of 3, {min(cpus):.2f} s CPU; json+ "
                         f"{size_mb:.1f} MB streamed from its file, peak Python memory {peak_bytes / 2**20:.0f} MiB)")

    parse_s, reads = 0.0, 0
    for n in range(1, HOSTS + 1):
        logs = host_logs(f"load-h{n}", n, START_MS, POINT_S)
        started = time.process_time()
        _, hist = parse_logs(logs, f"h{n}")
        parse_s += time.process_time() - started
        reads += sum(sum(h.counts.values()) for h in hist)
        del logs
    assert reads == sum(ios_at(n, s) for n in range(1, HOSTS + 1) for s in range(1, POINT_S + 1))
    bench_figures.append(f"1 s logs of {HOSTS} hosts ({POINT_S} s point) parsed = {parse_s:.1f} s CPU "
                         f"(a host-hour of 1 s logs: {parse_s * 3600 / POINT_S / HOSTS:.2f} s)")


def test_bench_one_hour_of_100_hosts_through_judge_and_report(bench_figures: list[str]) -> None:
    seconds = os.environ.get("IOGATE_BENCH_HOUR_SECONDS", "3600")
    done = subprocess.run([sys.executable, "-m", "selftests.bench.hour_path", "--hosts", "100", "--seconds", seconds],
                          cwd=REPO, capture_output=True, text=True, timeout=7200)
    print("\n" + done.stdout.strip())
    assert done.returncode == 0, done.stdout + done.stderr  # merged reads equal the synthesis', every verdict passed
    bench_figures.extend(line for line in done.stdout.splitlines() if " RSS = " in line or "parse logs = " in line)


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_bench_controller_per_live_host(bench_figures: list[str]) -> None:
    hosts = os.environ.get("IOGATE_BENCH_LIVE_HOSTS", "16 64 100").split()
    done = subprocess.run([sys.executable, "-m", "iogate.bench.controller", "--hosts", *hosts],
                          cwd=REPO, capture_output=True, text=True, timeout=3600)
    print("\n" + done.stdout.strip())
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("controller per live host at") == len(hosts)
    bench_figures.extend(line for line in done.stdout.splitlines() if line.startswith("controller per live host at"))
