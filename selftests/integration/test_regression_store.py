"""Nightly regression: a run degraded by QoS fails against the stored baseline.

Every run here is throttled (cgroup v1 blkio caps): loop-device speed on this
machine swings 2-3x between identical runs, so an unthrottled "same" run is not
ground truth for "no regression"; a capped one is. The spec below judges the
drift on IOPS (exact under caps) and keeps p99 loose: blk-throttle releases I/O
in time slices, so latency under a cap is bursty, not a lever.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.lab import DEFAULT_LAB

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


BASELINE_QOS = "{read_iops: 2000, write_iops: 2000}"
DEGRADED_QOS = "{read_iops: 300, write_iops: 300}"


SPEC = """\
version: 1
families:
  baseline:
    checks:
      iops_min: {criterion: throughput_min, metric: iops, minimum: 100}
      no_errors: {criterion: no_io_errors}
  regression:
    checks:
      iops_vs_stored_baseline: {criterion: relative_to_baseline, metric: iops, mode: not_below, tolerance_pct: 20}
      p99_vs_stored_baseline: {criterion: relative_to_baseline, metric: p99_latency_ms, mode: not_above, tolerance_pct: 1000}
"""


def lab_copy(tmp_path: Path, name: str, qos: str) -> Path:
    text = DEFAULT_LAB.read_text().replace("/var/tmp/iogate", str(tmp_path / "work")).replace("size: 1GiB", "size: 128MiB")
    text = re.sub(r"\n  qos:[^\n]*(\n    [^\n]*)*", "", text)  # the lab's own caps give way to the test's
    text = text.replace("  size: 128MiB", f"  size: 128MiB\n  qos: {qos}")
    path = tmp_path / name
    path.write_text(text)
    return path


def run_suite(lab: Path, db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    spec = lab.parent / "spec.yaml"
    spec.write_text(SPEC)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_baseline.py", "--lab", str(lab), "--results-db", str(db), "--criteria", str(spec),
         "--runtime", "3", "--ramp", "0", "-q", "-s", "-p", "no:cacheprovider", *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )


def test_degraded_volume_fails_with_regression_verdict(tmp_path: Path) -> None:
    db = tmp_path / "results.sqlite"
    first = run_suite(lab_copy(tmp_path, "lab.yaml", BASELINE_QOS), db)
    assert first.returncode == 0, first.stdout[-3000:]

    same = run_suite(lab_copy(tmp_path, "lab.yaml", BASELINE_QOS), db, "--baseline", "last")
    assert same.returncode == 0, same.stdout[-3000:]
    assert "iops_vs_stored_baseline PASS" in same.stdout and "p99_vs_stored_baseline PASS" in same.stdout

    degraded = run_suite(lab_copy(tmp_path, "degraded.yaml", DEGRADED_QOS), db, "--baseline", "last")
    assert degraded.returncode == 1, degraded.stdout[-3000:]
    assert "iops_vs_stored_baseline FAIL" in degraded.stdout and "verdict failed:" in degraded.stdout
    # Capped at 300 of 2000 IOPS: 15 % of the baseline, 85 points below it (bound 20).
    assert re.search(r"iops_vs_stored_baseline FAIL: measured 8\d.* % points, bound 20 % points.*failing: (read|write)", degraded.stdout)
