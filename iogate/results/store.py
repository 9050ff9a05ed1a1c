"""SQLite store of every run point, so later runs can compare against earlier ones.

One row per run point (one test id + parameter set in one run): lab, array, the
parameters, the metrics per direction (IOPS, bandwidth, mean and p99 completion
latency), the verdicts, the start time and the suite version that measured it.
Parameters are stored as canonical JSON (sorted keys) so "same parameters" is a
string comparison in SQL.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import iogate
from iogate.errors import IOGateError
from iogate.lab.secrets import redact  # verdict details may quote an error or hook output
from iogate.metrics.types import Dir, RunResult
from iogate.verdict import Verdict

DEFAULT_STORE_PATH = Path(".iogate/results.sqlite")
SCHEMA_VERSION = 1

# metrics_json layout: {"read": {"iops": .., "bw_bytes_per_s": .., "mean_ns": .., "p99_ns": ..}, "write": {...}}
# mean_ns / p99_ns are null (None) for a direction that did I/O but has no latency samples: never a stored 0.
DirectionMetrics = dict[str, float | None]
Metrics = dict[str, DirectionMetrics]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS run_points (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    lab TEXT NOT NULL,
    array_name TEXT NOT NULL,
    test_id TEXT NOT NULL,
    params_json TEXT NOT NULL,
    metrics_json TEXT NOT NULL,
    verdicts_json TEXT NOT NULL,
    started_at REAL NOT NULL,
    suite_version TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_points_by_test ON run_points (test_id, params_json, started_at);
CREATE INDEX IF NOT EXISTS run_points_by_run ON run_points (run_id);
"""


class StoreError(IOGateError):
    """The results database could not be opened, read or written."""


def canonical_params(params: Mapping[str, Any]) -> str:
    """Parameters as the JSON text two equal parameter sets share."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)


def metrics_from_run(result: RunResult) -> Metrics:
    """IOPS, bandwidth, mean and p99 completion latency of every active direction of a run.

    A direction with I/O but no latency samples stores None for its latencies:
    a stored 0 would read as "0 ms" and pass every later comparison."""
    metrics: Metrics = {}
    for direction in Dir:
        total = result.total(direction)
        if not total.active:
            continue
        hist = total.clat.histogram
        p99 = hist.percentile_ns(99.0) if hist is not None and hist.total else None
        metrics[str(direction)] = {
            "iops": total.iops,
            "bw_bytes_per_s": total.bw_bytes_per_s,
            "mean_ns": total.clat.mean_ns if total.clat.samples else None,
            # From merged histogram bins, never an average of per-job percentiles; None when there are none,
            # and None for vdbench's open-ended top bucket (no finite p99: a stored inf breaks JSON and deltas).
            "p99_ns": p99 if p99 is not None and math.isfinite(p99) else None,
        }
    return metrics


@dataclass(frozen=True)
class RunPoint:
    run_id: str
    lab: str
    array: str
    test_id: str
    params: Mapping[str, Any]
    metrics: Metrics
    verdicts: tuple[dict[str, Any], ...] = ()
    started_at: float = field(default_factory=time.time)  # epoch seconds
    suite_version: str = iogate.__version__
    id: int | None = None  # assigned by the store

    @classmethod
    def from_verdicts(cls, *, run_id: str, lab: str, array: str, test_id: str, params: Mapping[str, Any], metrics: Metrics,
                      verdicts: Iterable[Verdict], started_at: float | None = None) -> RunPoint:
        return cls(run_id=run_id, lab=lab, array=array, test_id=test_id, params=dict(params), metrics=metrics,
                   verdicts=tuple(v.row() for v in verdicts), started_at=time.time() if started_at is None else started_at)

    @property
    def passed(self) -> bool:
        return all(v.get("passed") for v in self.verdicts)


class ResultsStore:
    """The run-point table in one SQLite file (parent directory created)."""

    def __init__(self, path: Path | str = DEFAULT_STORE_PATH):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.executescript(_SCHEMA)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"results store {self.path}: cannot open: {exc}") from exc

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # One short connection per call: pytest-xdist workers may write concurrently; sqlite serialises them.
        db = sqlite3.connect(self.path, timeout=30)
        db.row_factory = sqlite3.Row
        try:
            with db:
                yield db
        finally:
            db.close()

    def add(self, point: RunPoint) -> RunPoint:
        """Store a run point; returns it with its row id."""
        row = (point.run_id, point.lab, point.array, point.test_id, canonical_params(point.params),
               json.dumps(point.metrics, sort_keys=True), redact(json.dumps(list(point.verdicts), default=str)),
               point.started_at, point.suite_version)
        try:
            with self._connect() as db:
                cursor = db.execute(
                    "INSERT INTO run_points (run_id, lab, array_name, test_id, params_json, metrics_json, verdicts_json,"
                    " started_at, suite_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        except sqlite3.Error as exc:
            raise StoreError(f"results store {self.path}: cannot add {point.test_id} of run {point.run_id}: {exc}") from exc
        return RunPoint(**{**point.__dict__, "id": cursor.lastrowid})

    def history(self, test_id: str, params: Mapping[str, Any], *, exclude_run: str | None = None,
                limit: int | None = None) -> list[RunPoint]:
        """Earlier points of the same test and parameters, newest first."""
        sql = "SELECT * FROM run_points WHERE test_id = ? AND params_json = ?"
        args: list[Any] = [test_id, canonical_params(params)]
        if exclude_run is not None:
            sql += " AND run_id != ?"
            args.append(exclude_run)
        sql += " ORDER BY started_at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return self._select(sql, args)

    def points(self, run_id: str) -> list[RunPoint]:
        """All points of one run, in the order they were stored."""
        return self._select("SELECT * FROM run_points WHERE run_id = ? ORDER BY id", [run_id])

    def _select(self, sql: str, args: list[Any]) -> list[RunPoint]:
        try:
            with self._connect() as db:
                rows = db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"results store {self.path}: query failed: {exc}") from exc
        return [
            RunPoint(run_id=r["run_id"], lab=r["lab"], array=r["array_name"], test_id=r["test_id"],
                     params=json.loads(r["params_json"]), metrics=json.loads(r["metrics_json"]),
                     verdicts=tuple(json.loads(r["verdicts_json"])), started_at=r["started_at"],
                     suite_version=r["suite_version"], id=r["id"])
            for r in rows
        ]
