"""The SQLite results store: what goes in comes back, matched by test id and exact parameters."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import iogate
from iogate.metrics.histogram import Histogram, index_to_value_ns, value_to_index
from iogate.metrics.latency import LatencyHistogram
from iogate.metrics.types import Dir, Direction, JobResult, LatencyStats, RunResult, Series
from iogate.results.store import NO_OUTCOME_RECORDED, ResultsStore, RunPoint, StoreError, canonical_params, metrics_from_run
from iogate.verdict import Unit, Verdict

PARAMS = {"bs": "8k", "rw": "randrw", "rwmixread": 70, "threads": 8}
METRICS = {"read": {"iops": 7000.0, "bw_bytes_per_s": 57_344_000.0, "mean_ns": 300_000.0, "p99_ns": 900_000.0}}


def point(run_id: str, started_at: float, params: dict | None = None, iops: float = 7000.0) -> RunPoint:
    metrics = {"read": {**METRICS["read"], "iops": iops}}
    return RunPoint(run_id=run_id, lab="labs/local.yaml", array="local", test_id="tests/test_sweep.py::test_point",
                    params=params if params is not None else PARAMS, metrics=metrics, started_at=started_at)


def test_a_point_round_trips_with_its_verdicts_and_the_suite_version(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "state" / "results.sqlite")
    verdict = Verdict("latency_bound", passed=False, measured=3.2, bound=2.0, unit=Unit.MS)
    stored = store.add(RunPoint.from_verdicts(run_id="r1", lab="labs/local.yaml", array="local", test_id="t", params=PARAMS,
                                              metrics=METRICS, verdicts=[verdict], started_at=1000.0))
    assert stored.id is not None
    (back,) = store.points("r1")
    assert back.params == PARAMS and back.metrics == METRICS
    assert back.verdicts[0]["criterion"] == "latency_bound" and back.verdicts[0]["passed"] is False
    assert back.passed is False
    assert back.suite_version == iogate.__version__
    assert back.started_at == 1000.0


def test_history_matches_exact_parameters_newest_first(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    store.add(point("r1", 100.0))
    store.add(point("r2", 300.0))
    store.add(point("r3", 200.0))
    store.add(point("other", 400.0, params={**PARAMS, "threads": 16}))
    # Key order must not matter: parameters are compared canonically.
    reordered = dict(reversed(list(PARAMS.items())))
    assert [p.run_id for p in store.history("tests/test_sweep.py::test_point", reordered)] == ["r2", "r3", "r1"]
    assert [p.run_id for p in store.history("tests/test_sweep.py::test_point", PARAMS, exclude_run="r2", limit=1)] == ["r3"]
    assert store.history("tests/test_sweep.py::other", PARAMS) == []


def test_canonical_params_ignore_key_order_but_not_values() -> None:
    assert canonical_params({"a": 1, "b": 2}) == canonical_params({"b": 2, "a": 1})
    assert canonical_params({"a": 1}) != canonical_params({"a": "1"})


def test_a_store_that_cannot_be_written_names_its_file(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    with pytest.raises(StoreError, match="not-a-dir"):
        ResultsStore(blocker / "results.sqlite")


def test_schema_is_plain_sqlite(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    store.add(point("r1", 1.0))
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT run_id, lab, array_name, suite_version FROM run_points").fetchall() == [
            ("r1", "labs/local.yaml", "local", iogate.__version__)]


def _direction(direction: Dir, ios: int, latencies_ns: list[int]) -> Direction:
    bins = Histogram()
    for value in latencies_ns:
        bins.add(Histogram.from_counts({value_to_index(value): 1}))
    return Direction(dir=direction, ios=ios, io_bytes=ios * 4096, runtime_ms=1000, iops=float(ios),
                     bw_bytes_per_s=ios * 4096.0,
                     clat=LatencyStats(mean_ns=sum(latencies_ns) / len(latencies_ns), samples=len(latencies_ns),
                                       histogram=LatencyHistogram.from_fio(bins)))


def test_metrics_from_run_merge_jobs_and_take_p99_from_merged_bins() -> None:
    # Job a: 99 fast IOs, job b: 1 slow IO. Merged p99 is the fast bin; averaging per-job p99s would not be.
    idle = {Dir.WRITE: Direction(Dir.WRITE), Dir.TRIM: Direction(Dir.TRIM)}  # parsers fill every direction
    job_a = JobResult("a", "h", {Dir.READ: _direction(Dir.READ, 99, [100_000] * 99), **idle})
    job_b = JobResult("b", "h", {Dir.READ: _direction(Dir.READ, 1, [5_000_000]), **idle})
    run = RunResult("p", (job_a, job_b), Series(), start_ms=0, end_ms=1000)
    metrics = metrics_from_run(run)
    assert set(metrics) == {"read"}, "inactive directions are left out"
    assert metrics["read"]["iops"] == 100.0
    assert metrics["read"]["p99_ns"] == float(index_to_value_ns(value_to_index(100_000)))
    assert metrics["read"]["mean_ns"] == pytest.approx((99 * 100_000 + 5_000_000) / 100)


def test_a_direction_with_io_but_no_latency_bins_stores_none_not_zero(tmp_path: Path) -> None:
    idle = {Dir.WRITE: Direction(Dir.WRITE), Dir.TRIM: Direction(Dir.TRIM)}
    no_bins = Direction(dir=Dir.READ, ios=1000, io_bytes=1000 * 4096, runtime_ms=1000, iops=1000.0, bw_bytes_per_s=4096e3,
                        clat=LatencyStats())
    run = RunResult("p", (JobResult("a", "h", {Dir.READ: no_bins, **idle}),), Series(), start_ms=0, end_ms=1000)
    metrics = metrics_from_run(run)
    assert metrics["read"]["iops"] == 1000.0
    assert metrics["read"]["p99_ns"] is None and metrics["read"]["mean_ns"] is None
    store = ResultsStore(tmp_path / "r.sqlite")
    store.add(RunPoint(run_id="r1", lab="l", array="a", test_id="t", params={}, metrics=metrics))
    assert store.points("r1")[0].metrics["read"]["p99_ns"] is None  # SQLite JSON null, read back as None


SCHEMA_1 = """
CREATE TABLE run_points (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, lab TEXT NOT NULL, array_name TEXT NOT NULL,
    test_id TEXT NOT NULL, params_json TEXT NOT NULL, metrics_json TEXT NOT NULL, verdicts_json TEXT NOT NULL,
    started_at REAL NOT NULL, suite_version TEXT NOT NULL
);
PRAGMA user_version = 1;
"""


def test_the_store_records_whether_a_point_passed_and_why_it_is_invalid(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    passing = Verdict("iops_min", True, 1200.0, 1000.0, Unit.IOPS)
    failing = Verdict("latency_bound", False, 3.2, 2.0, Unit.MS)
    for run_id, verdicts, invalid in (("good", [passing], None), ("failed", [passing, failing], None),
                                      ("busy", [passing], "generator saturated: host h1 was 95.0 % CPU busy"),
                                      ("unjudged", [], None)):
        store.add(RunPoint.from_verdicts(run_id=run_id, lab="l", array="a", test_id="t", params=PARAMS, metrics=METRICS,
                                         verdicts=verdicts, started_at=1.0, measurement_invalid=invalid))
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT run_id, passed, measurement_invalid FROM run_points ORDER BY id").fetchall() == [
            ("good", 1, None), ("failed", 0, None), ("busy", 0, "generator saturated: host h1 was 95.0 % CPU busy"),
            ("unjudged", 0, None)]
    assert [p.run_id for p in store.history("t", PARAMS, passed_only=True)] == ["good"]
    why = {p.run_id: p.why_not_passed() for p in store.history("t", PARAMS)}
    assert why == {"good": None, "failed": "failed latency_bound",
                   "busy": "measurement invalid: generator saturated: host h1 was 95.0 % CPU busy",
                   "unjudged": "judged by no verdict"}


def test_an_old_store_is_migrated_and_its_rows_are_never_a_pass(tmp_path: Path) -> None:
    """A schema 1 row says nothing of invalid measurements: even with every verdict passed it is not a passed point."""
    path = tmp_path / "old.sqlite"
    passed_row = '[{"criterion": "iops_min", "passed": true}]'
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA_1)
        db.execute("INSERT INTO run_points (run_id, lab, array_name, test_id, params_json, metrics_json, verdicts_json,"
                   " started_at, suite_version) VALUES ('old', 'l', 'a', 't', ?, '{}', ?, 1.0, '0.1')",
                   (canonical_params(PARAMS), passed_row))
    store = ResultsStore(path)
    ResultsStore(path)  # opening a migrated store again changes nothing
    (old,) = store.points("old")
    assert old.verdicts == ({"criterion": "iops_min", "passed": True},)
    assert old.array_latency is None  # schema 5: not recorded, never "the array has no counters"
    assert not old.passed and old.why_not_passed() == NO_OUTCOME_RECORDED
    assert store.history("t", PARAMS, passed_only=True) == []
    store.add(RunPoint.from_verdicts(run_id="new", lab="l", array="a", test_id="t", params=PARAMS, metrics=METRICS,
                                     verdicts=[Verdict("iops_min", True, 2.0, 1.0, Unit.IOPS)], started_at=2.0))
    assert [p.run_id for p in store.history("t", PARAMS, passed_only=True)] == ["new"]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (5,)
        assert db.execute("SELECT run_id, passed FROM run_points ORDER BY id").fetchall() == [("old", None), ("new", 1)]
    with pytest.raises(StoreError, match="never written"):
        store.add(old)  # a row read from an old store is not written back as if its outcome were known


def test_schema_5_keeps_the_arrays_latency_counters_and_none_stays_not_recorded(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    said = {"driver": "pure", "volumes": 2, "read": {"latency_us": 250.0, "iops": 1000.0},
            "write": {"latency_us": None, "why": "the array reported no write latency for this window"}}
    for run, latency in (("with", said), ("without", None)):
        store.add(RunPoint.from_verdicts(run_id=run, lab="l", array="a", test_id="t", params=PARAMS, metrics=METRICS,
                                         verdicts=[], started_at=1.0, array_latency=latency))
    assert store.points("with")[0].array_latency == said
    assert store.points("without")[0].array_latency is None
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT run_id, array_latency_json IS NULL FROM run_points ORDER BY id").fetchall() == [
            ("with", 0), ("without", 1)]
