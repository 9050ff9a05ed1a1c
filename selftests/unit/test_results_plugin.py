"""--baseline through IOGate's own plugins: what a nightly sees, run after run, on one results store.

A throwaway test records one run point of N read IOPS (no fio: the RunResult is built in the test, N from
the environment) and judges it with a passing verdict; pytest runs it in a subprocess with
plugins/options, results and verdicts, as conftest.py registers them, once per "night". The store then
holds what plugins/results.py wrote, and the next night is judged against it. Figures worked by hand.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.judging.spec import load_spec
from iogate.lab import DEFAULT_LAB
from plugins.options import check_baseline_request

ROOT = Path(__file__).resolve().parents[2]

TEST_FILE = '''
import os

from fixtures.stash import record
from iogate.metrics.types import Dir, Direction, JobResult, RunResult, Series
from iogate.verdict import Unit, Verdict


def test_point(request, run, judge):
    iops = float(os.environ["NIGHT_IOPS"])
    busy = float(os.environ.get("NIGHT_CPU_BUSY_PCT", "20"))
    reads = Direction(Dir.READ, ios=int(iops) * 10, io_bytes=int(iops) * 10 * 4096, runtime_ms=10_000, iops=iops,
                      bw_bytes_per_s=iops * 4096)
    job = JobResult("j", "localhost", {Dir.READ: reads, Dir.WRITE: Direction(Dir.WRITE), Dir.TRIM: Direction(Dir.TRIM)})
    started_ms = int(os.environ["NIGHT_START_MS"])
    result = RunResult("point", (job,), Series(), started_ms, started_ms + 10_000, cpu_busy_pct={"localhost": busy})
    record(request.node, "point", {"bs": "4k"}, result)
    judge(Verdict("iops_min", iops >= 500, iops, 500, Unit.IOPS))
'''

SPEC = """\
version: 1
families:
  baseline:
    checks:
      iops_min: {criterion: throughput_min, metric: iops, minimum: 500}
  regression:
    checks:
      iops_vs_stored_baseline: {criterion: relative_to_baseline, metric: iops, mode: not_below, tolerance_pct: 10}
"""
DAY_MS = 86_400_000
T0_MS = 1_800_000_000_000  # 2027-01-15 08:00:00 UTC (worked out in test_results_history.py)


@pytest.fixture
def nights(tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "test_night.py").write_text(TEST_FILE)
    (tmp_path / "spec.yaml").write_text(SPEC)
    lab = DEFAULT_LAB.read_text().replace("/var/tmp/iogate", str(tmp_path / "work"))
    (tmp_path / "lab.yaml").write_text(lab)
    db = tmp_path / "results.sqlite"

    def night(day: int, iops: float, *baseline: str, cpu_busy_pct: float = 20.0) -> subprocess.CompletedProcess[str]:
        plugins = [arg for name in ("plugins.options", "plugins.results", "plugins.verdicts", "fixtures.lab")
                   for arg in ("-p", name)]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "NIGHT_IOPS": str(iops), "NIGHT_CPU_BUSY_PCT": str(cpu_busy_pct),
               "NIGHT_START_MS": str(T0_MS + day * DAY_MS)}
        return subprocess.run(
            [sys.executable, "-m", "pytest", str(tmp_path / "test_night.py"), "--rootdir", str(tmp_path), "-c", "/dev/null",
             *plugins, "--lab", str(tmp_path / "lab.yaml"), "--criteria", str(tmp_path / "spec.yaml"),
             "--results-db", str(db), *baseline, "-s", "-p", "no:cacheprovider"],
            cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)

    night.db = db  # type: ignore[attr-defined]
    return night


def stored(db: Path) -> list[tuple[float, int, str | None]]:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT json_extract(metrics_json, '$.read.iops'), passed, measurement_invalid "
                                  "FROM run_points ORDER BY id").fetchall()


def run_ids(db: Path) -> list[str]:
    with sqlite3.connect(db) as connection:
        return [row[0] for row in connection.execute("SELECT run_id FROM run_points ORDER BY id")]


def test_a_drifting_nightly_fails_against_its_good_run_and_a_first_run_says_so(nights) -> None:  # type: ignore[no-untyped-def]
    # An empty store and no --baseline none: no data, FAIL, never a pass by default.
    unasked = nights(0, 1000.0, "--baseline", "last")
    assert unasked.returncode == 1, unasked.stdout[-3000:]
    assert "iops_vs_stored_baseline FAIL: measured nan % points" in unasked.stdout
    assert "no passing stored run to compare with: looked for the newest earlier run of test " in unasked.stdout
    good = nights(1, 1000.0, "--baseline", "none")
    assert good.returncode == 0, good.stdout[-3000:]
    assert "iogate: regression: no baseline by request (--baseline none)" in good.stdout
    assert "iops_vs_stored_baseline PASS" in good.stdout and "no baseline by request (--baseline none)" in good.stdout
    for day, iops, points_below in ((2, 600.0, 40), (3, 580.0, 42)):  # 600 / 1000 = 60, 580 / 1000 = 58
        degraded = nights(day, iops, "--baseline", "last")
        assert degraded.returncode == 1, degraded.stdout[-3000:]
        assert f"iops_vs_stored_baseline FAIL: measured {points_below} % points, bound 10 % points" in degraded.stdout
    # 560 / 1000 = 56: 44 points below the good run of day 1 (2027-01-16), not 3.4 below day 3's 580
    # (96.6) nor 6.7 below the median of days 1-3 (600: 93.3).
    for how in ("last", "median:3"):
        tonight = nights(4, 560.0, "--baseline", how)
        assert tonight.returncode == 1, tonight.stdout[-3000:]
        assert "iops_vs_stored_baseline FAIL: measured 44 % points, bound 10 % points" in tonight.stdout
        assert f"run {run_ids(nights.db)[1]} of 2027-01-16 08:00:00 UTC" in tonight.stdout and "read = 56.0" in tonight.stdout
    unjudged = nights(5, 1000.0)
    assert unjudged.returncode == 0, unjudged.stdout[-3000:]
    assert "iogate: regression: not judged (no --baseline; the spec has 1 regression check(s))" in unjudged.stdout
    assert [(iops, passed) for iops, passed, _ in stored(nights.db)] == [
        (1000.0, 0), (1000.0, 1), (600.0, 0), (580.0, 0), (560.0, 0), (560.0, 0), (1000.0, 1)]


def test_a_pass_on_a_saturated_generator_is_stored_invalid_and_is_no_baseline(nights) -> None:  # type: ignore[no-untyped-def]
    assert nights(0, 1000.0, "--baseline", "none").returncode == 0
    busy = nights(1, 2000.0, "--baseline", "last", cpu_busy_pct=95.0)  # 200: not below, every verdict passed ...
    assert busy.returncode == 1, busy.stdout[-3000:]  # ... on a saturated generator: no pass (invalid, Allure broken)
    assert "measurement invalid: iops_min PASS: measured 2000 IOPS" in busy.stdout
    # Against day 0's 1000 (not day 1's 2000, which would read 50, 50 points below): 100, 0 points.
    again = nights(2, 1000.0, "--baseline", "last")
    assert again.returncode == 0, again.stdout[-3000:]
    assert "iops_vs_stored_baseline PASS: measured 0 % points" in again.stdout
    assert "measurement invalid: generator saturated: host localhost was 95.0 % CPU busy" in again.stdout
    assert [(iops, passed, bool(invalid)) for iops, passed, invalid in stored(nights.db)] == [
        (1000.0, 1, False), (2000.0, 0, True), (1000.0, 1, False)]


@pytest.mark.parametrize("baseline, message", [
    ("median:0", "median:K needs a whole number K >= 1"),
    ("r-nowhere", "holds no run 'r-nowhere'"),
])
def test_a_malformed_baseline_stops_the_session(nights, baseline: str, message: str) -> None:  # type: ignore[no-untyped-def]
    done = nights(0, 1000.0, "--baseline", baseline)
    assert done.returncode == 4 and message in done.stderr, done.stderr[-2000:]


def test_a_baseline_request_needs_regression_checks_and_a_stored_run(tmp_path: Path) -> None:
    (tmp_path / "with.yaml").write_text(SPEC)
    (tmp_path / "without.yaml").write_text(SPEC.split("  regression:")[0])
    with_regression, without = load_spec(tmp_path / "with.yaml"), load_spec(tmp_path / "without.yaml")
    db = tmp_path / "results.sqlite"
    for how in ("none", "last", "median:3"):
        check_baseline_request(how, with_regression, db)
        with pytest.raises(ValueError, match=f"--baseline {how}: spec .*without.yaml has no check in family regression"):
            check_baseline_request(how, without, db)
    with pytest.raises(ValueError, match="median:K needs a whole number K >= 1"):
        check_baseline_request("median:x", with_regression, db)
    with pytest.raises(ValueError, match="holds no run 'r1'"):
        check_baseline_request("r1", with_regression, db)
