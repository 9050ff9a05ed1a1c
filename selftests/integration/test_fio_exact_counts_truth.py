"""Ground truth: real fio 3.33 at a fractional rate (7.68 IOPS, the 80 % tile's VM rate): the
per-interval I/O counts IOGate reads from the logs total fio's own json total_ios, pro rata to
the intervals the grid expects, within one interval's worth of I/Os; and the clat_hist log's
stamps sit on the same epoch clock as the iops log's, inside the job's measured span.

Expected values are fio's own json; the code under test only reads the logs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from iogate.engines.fio import parse
from iogate.engines.fio.jobfile import GLOBAL_OPTIONS
from iogate.metrics.types import Dir, Series

pytestmark = pytest.mark.integration

FIO = shutil.which("fio")
RATE_BYTES_PER_S = 31_457  # 7.68 x 4 KiB: fio's iops log truncates every second's count
RUNTIME_S = 12


@pytest.mark.skipif(FIO is None, reason="needs fio")
def test_interval_counts_total_fio_json_within_one_interval(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    options = {**GLOBAL_OPTIONS, "direct": "0"}  # tmp_path may not support O_DIRECT; the rate caps the I/O anyway
    command = [FIO or "fio", *(f"--{k}={v}" for k, v in options.items()), "--name=vm", f"--filename={tmp_path / 'data'}",
               "--size=16m", "--bs=4k", "--ioengine=psync", "--rw=randwrite", f"--rate={RATE_BYTES_PER_S}",
               "--time_based=1", f"--runtime={RUNTIME_S}", "--ramp_time=1", "--log_hist_coarseness=0",
               *(f"--write_{kind}_log={logs / 'vm'}" for kind in ("iops", "lat", "hist")),
               "--output-format=json", f"--output={tmp_path / 'out.json'}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    job = doc["jobs"][0]
    assert job["error"] == 0 and job["write"]["total_ios"] > 0
    files = {p.name: p.read_text() for p in logs.iterdir()}
    samples, hist = parse.parse_logs(files, "h")
    spans = parse.job_spans(doc, "h")
    assert hist and samples
    # One clock: every iops and hist line is stamped inside the job's measured span (epoch ms).
    start_ms, end_ms = doc["timestamp_ms"] - job["job_runtime"], doc["timestamp_ms"]
    assert all(start_ms - 1000 <= line.t_ms <= end_ms for line in (*samples, *hist))

    intervals = Series(tuple(samples), tuple(hist), spans=tuple(spans)).totals()
    counted = sum(iops for _, iops, _ in intervals)  # 1 s intervals: IOPS = I/Os
    json_iops = job["write"]["total_ios"] * 1000 / job["job_runtime"]
    assert counted == pytest.approx(json_iops * len(intervals), abs=json_iops), (counted, len(intervals), json_iops)
    assert all(s.dir == Dir.WRITE for s in samples)
