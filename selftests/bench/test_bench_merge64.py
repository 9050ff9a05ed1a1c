"""Controller cost of a 64-host fio client/server run: parse json+, split per host, merge bins.

The per-host json+ entries are synthesised from one real fio json+ job (run
here for a second on a file) with each host's bin counts scaled differently,
and shifted by a few bins, so the merged histogram is not a copy of one host's. Budget: 2 s for parsing
and merging all 64 hosts (what the controller does after every run point);
peak Python memory is measured with tracemalloc and reported.

Run with `pytest selftests/bench -s`; pytest-benchmark prints the table.
"""

from __future__ import annotations

import copy
import json
import subprocess
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from iogate.engines.fio.client_server import cluster_directions, stream_client_entries, stream_host_jobs
from iogate.metrics.histogram import PLAT_NR, Histogram, index_to_value_ns, value_to_index
from iogate.metrics.types import Dir

HOSTS = 64
MERGE_BUDGET_S = 2.0
PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)


@pytest.fixture(scope="module")
def real_job(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real json+ job entry with read and write latency bins."""
    work = tmp_path_factory.mktemp("merge64")
    done = subprocess.run(
        ["fio", "--name=real", f"--filename={work / 'data'}", "--size=64m", "--rw=randrw", "--bs=4k", "--ioengine=psync",
         "--runtime=2", "--time_based", "--output-format=json+"],
        capture_output=True, text=True, check=True, timeout=60,
    )
    return json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0]


def shifted(bins: dict[str, int], shift: int, scale: int) -> dict[str, int]:
    """Bins moved up by `shift` fio bins and scaled: each host a slightly different distribution."""
    out: dict[str, int] = {}
    for key, count in bins.items():
        index = min(value_to_index(int(key)) + shift, PLAT_NR - 1)
        name = str(index_to_value_ns(index))
        out[name] = out.get(name, 0) + count * scale
    return out


def synthesise(job: dict[str, Any], hosts: int = HOSTS) -> tuple[str, dict[str, str]]:
    """A fio client json+ document with one entry per host (+ the bin-less aggregate)."""
    entries = []
    host_by_client = {}
    for n in range(hosts):
        client = f"10.{100 + n // 250}.{n % 250}.2"
        host_by_client[client] = f"h{n + 1}"
        entry = copy.deepcopy(job)
        scale = 1 + n % 7
        for direction in ("read", "write"):
            for latency in ("clat_ns", "lat_ns"):
                bins = entry[direction][latency].get("bins", {})
                entry[direction][latency]["bins"] = shifted(bins, shift=n % 8, scale=scale)
                entry[direction][latency]["N"] = sum(entry[direction][latency]["bins"].values())
            entry[direction]["total_ios"] = entry[direction]["clat_ns"]["N"]
        entry.update(hostname=client, port=8765)
        entries.append(entry)
    aggregate = {k: v for k, v in job.items() if k in ("jobname", "groupid", "error", "read", "write", "trim", "sync")}
    entries.append({**copy.deepcopy(aggregate), "jobname": "All clients", "hostname": "10.100.0.2", "port": 8765})
    return json.dumps({"fio version": "fio-3.33", "client_stats": entries}, indent=2), host_by_client


def merge_all(path: Path, host_by_client: dict[str, str]) -> dict[str, float]:
    """What run_cluster does with the client's output file: entries streamed, reduced to bins, merged."""
    shares = stream_host_jobs(stream_client_entries(path, "synthetic json+"), host_by_client)
    totals = cluster_directions({share.host: share.jobs for share in shares})
    figures = {}
    for direction in (Dir.READ, Dir.WRITE):
        hist = Histogram.from_json_bins(totals[direction].clat.bins)
        figures.update({f"{direction}_p{p:g}_ns": hist.percentile_ns(p) for p in PERCENTILES})
        figures[f"{direction}_ios"] = totals[direction].ios
    return figures


def test_bench_merge_64_hosts(benchmark, real_job: dict[str, Any], tmp_path: Path) -> None:
    text, host_by_client = synthesise(real_job)
    path = tmp_path / "client.out"
    path.write_text(text)
    figures = benchmark.pedantic(merge_all, args=(path, host_by_client), rounds=5, iterations=1)
    expected_ios = sum(real_job["read"]["clat_ns"]["N"] * (1 + n % 7) for n in range(HOSTS))
    assert figures["read_ios"] == expected_ios
    assert figures["read_p50_ns"] <= figures["read_p99_ns"] <= figures["read_p99.99_ns"]

    tracemalloc.start()
    merge_all(path, host_by_client)
    _, peak_bytes = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"\nmerge of {HOSTS} hosts' json+ ({len(text) / 1e6:.1f} MB): mean {benchmark.stats['mean'] * 1000:.0f} ms, "
          f"max {benchmark.stats['max'] * 1000:.0f} ms, peak Python memory {peak_bytes / 2**20:.1f} MiB")
    assert benchmark.stats["mean"] < MERGE_BUDGET_S
