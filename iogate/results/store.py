"""SQLite store of every run point, so later runs can compare against earlier ones.

One row per run point (one test id + parameter set in one run): lab, array, the
parameters, the metrics per direction (IOPS, bandwidth, mean and p99 completion
latency), the verdicts, the start time and the suite version that measured it.
Parameters are stored as canonical JSON (sorted keys) so "same parameters" is a
string comparison in SQL.

Each row also records whether the point *passed* (`passed`: at least one
verdict, every verdict passed, none marked measurement-invalid, and the point
itself not measurement-invalid) and why its figures are invalid, if they are
(`measurement_invalid`: e.g. a saturated generator). Only a passed point can be
a regression baseline (iogate/results/compare.py). A store written before
schema 2 has no such record: its rows keep `passed` NULL, "not known to have
passed", and are never a baseline.

Schema 3 adds one `run_context` row per run: the spec (path and SHA-256), the
profile, the engine and its version that judged and drove it, and the
environment beside it (host kernel, generator version ...). A bake-off
(iogate/results/bakeoff.py) compares only runs whose context says they are
comparable; a run stored without one (older stores, or a session that did not
record it) has no context and is never taken as comparable.

Schema 4 records each point's planned and actual measured duration and, when
a live judge stopped it early (iogate/judging/live.py), why: `stop_kind`
(full, fail_fast, steady, never_steady) and `stop_detail`. Older rows keep
NULL there: "not recorded", never "ran its full time".

Schema 5 records what the array's own counters said of each point's latency
(`array_latency_json`, iogate.arrays.counters.stored_latency): the driver, and
per side the array-side mean latency in us or why there is none; or, for a
driver without counters, {"none": "n/a: <driver> has no latency counters"}.
Older rows keep NULL: "not recorded", never "the array has none".
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
from iogate.metrics.types import Dir, RunResult, RunStop
from iogate.verdict import Verdict

DEFAULT_STORE_PATH = Path(".iogate/results.sqlite")
SCHEMA_VERSION = 5
# Schema 1 rows carry no outcome: they stay NULL here ("not known to have passed"), never 1.
_SCHEMA_2_COLUMNS = {"passed": "INTEGER", "measurement_invalid": "TEXT"}
# Schema 4: planned and actual measured seconds, and why a point stopped early (NULL in older rows).
_SCHEMA_4_COLUMNS = {"planned_s": "REAL", "actual_s": "REAL", "stop_kind": "TEXT", "stop_detail": "TEXT"}
# Schema 5: the array's own counters of the point's latency (NULL in older rows: not recorded).
_SCHEMA_5_COLUMNS = {"array_latency_json": "TEXT"}

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
CREATE TABLE IF NOT EXISTS run_context (
    run_id TEXT PRIMARY KEY,
    spec TEXT,
    spec_sha256 TEXT,
    profile TEXT,
    engine TEXT,
    engine_version TEXT,
    environment_json TEXT NOT NULL DEFAULT '{}'
);
"""
# Before schema 2 a row said nothing of its outcome; why such a row is never a baseline.
NO_OUTCOME_RECORDED = "stored before the results store recorded whether a point passed (schema 1)"


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
    # Why this point's figures measured something other than the array (a saturated generator ...); None: valid.
    measurement_invalid: str | None = None
    outcome_recorded: bool = True  # False: a schema 1 row, whose outcome the store never recorded
    planned_s: float | None = None  # measured seconds planned (schema 4; None: not recorded)
    actual_s: float | None = None  # measured seconds run
    stop_kind: str | None = None  # RunStop.kind: full, fail_fast, steady, never_steady
    stop_detail: str | None = None
    array_latency: Mapping[str, Any] | None = None  # schema 5: iogate.arrays.counters.stored_latency; None: not recorded

    @classmethod
    def from_verdicts(cls, *, run_id: str, lab: str, array: str, test_id: str, params: Mapping[str, Any], metrics: Metrics,
                      verdicts: Iterable[Verdict], started_at: float | None = None,
                      measurement_invalid: str | None = None, stop: RunStop | None = None,
                      array_latency: Mapping[str, Any] | None = None) -> RunPoint:
        return cls(run_id=run_id, lab=lab, array=array, test_id=test_id, params=dict(params), metrics=metrics,
                   verdicts=tuple(v.row() for v in verdicts), started_at=time.time() if started_at is None else started_at,
                   measurement_invalid=measurement_invalid,
                   planned_s=stop.planned_s if stop else None, actual_s=stop.at_s if stop else None,
                   stop_kind=stop.kind if stop else None, stop_detail=stop.sentence() if stop else None,
                   array_latency=array_latency)

    @property
    def passed(self) -> bool:
        """Judged, every verdict passed and nothing invalid: the only kind of point a later run compares with."""
        return self.why_not_passed() is None

    def why_not_passed(self) -> str | None:
        """None for a passed point; else what keeps it from being one, as a reviewer reads it."""
        if not self.outcome_recorded:
            return NO_OUTCOME_RECORDED
        if self.measurement_invalid:
            return f"measurement invalid: {self.measurement_invalid}"
        if not self.verdicts:
            return "judged by no verdict"
        invalid = [str(v.get("criterion", "?")) for v in self.verdicts if v.get("measurement_invalid")]
        if invalid:
            return f"measurement invalid: {', '.join(invalid)}"
        failed = [str(v.get("criterion", "?")) for v in self.verdicts if v.get("passed") is not True]
        if failed:
            return f"failed {', '.join(failed)}"
        return None


@dataclass(frozen=True)
class RunContext:
    """What judged and drove one run (schema 3): the fields a fair bake-off compares.

    `environment` holds what may differ without changing the workload, as text per name
    (e.g. {"host_kernel": "6.8.0-49", "fio_version": "fio-3.36"}); None in a field: not recorded."""

    spec: str | None = None  # the spec file's path as the run named it
    spec_sha256: str | None = None  # its content: the same path may hold another spec later
    profile: str | None = None
    engine: str | None = None
    engine_version: str | None = None
    environment: Mapping[str, str] = field(default_factory=dict)


class ResultsStore:
    """The run-point table in one SQLite file (parent directory created)."""

    def __init__(self, path: Path | str = DEFAULT_STORE_PATH):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._create_or_migrate()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"results store {self.path}: cannot open: {exc}") from exc

    def _create_or_migrate(self) -> None:
        """Create the table, or add schema 2's columns to an older one, under one write lock.

        BEGIN IMMEDIATE: two pytest-xdist workers opening the same old store must not both add a
        column (the second would fail "duplicate column"). Old rows keep NULL in `passed`."""
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    db.execute(statement)
                have = {row[1] for row in db.execute("PRAGMA table_info(run_points)")}
                for column, kind in {**_SCHEMA_2_COLUMNS, **_SCHEMA_4_COLUMNS, **_SCHEMA_5_COLUMNS}.items():
                    if column not in have:
                        db.execute(f"ALTER TABLE run_points ADD COLUMN {column} {kind}")
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        finally:
            db.close()

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
        if not point.outcome_recorded:
            raise StoreError(f"results store {self.path}: {point.test_id} of run {point.run_id}: a point without "
                             "a recorded outcome is read from old stores, never written")
        row = (point.run_id, point.lab, point.array, point.test_id, canonical_params(point.params),
               json.dumps(point.metrics, sort_keys=True), redact(json.dumps(list(point.verdicts), default=str)),
               point.started_at, point.suite_version, int(point.passed),
               None if point.measurement_invalid is None else redact(point.measurement_invalid),
               point.planned_s, point.actual_s, point.stop_kind, point.stop_detail,
               None if point.array_latency is None else redact(json.dumps(point.array_latency, sort_keys=True)))
        try:
            with self._connect() as db:
                cursor = db.execute(
                    "INSERT INTO run_points (run_id, lab, array_name, test_id, params_json, metrics_json, verdicts_json,"
                    " started_at, suite_version, passed, measurement_invalid, planned_s, actual_s, stop_kind, stop_detail,"
                    " array_latency_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        except sqlite3.Error as exc:
            raise StoreError(f"results store {self.path}: cannot add {point.test_id} of run {point.run_id}: {exc}") from exc
        return RunPoint(**{**point.__dict__, "id": cursor.lastrowid})

    def history(self, test_id: str, params: Mapping[str, Any], *, exclude_run: str | None = None,
                limit: int | None = None, passed_only: bool = False) -> list[RunPoint]:
        """Earlier points of the same test and parameters, newest first; `passed_only`: those that passed
        (RunPoint.passed, as recorded when stored: a schema 1 row never)."""
        sql = "SELECT * FROM run_points WHERE test_id = ? AND params_json = ?"
        args: list[Any] = [test_id, canonical_params(params)]
        if exclude_run is not None:
            sql += " AND run_id != ?"
            args.append(exclude_run)
        if passed_only:
            sql += " AND passed = 1"
        sql += " ORDER BY started_at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return self._select(sql, args)

    def has_run(self, run_id: str) -> bool:
        """Whether any point of `run_id` is stored."""
        return bool(self._select("SELECT * FROM run_points WHERE run_id = ? LIMIT 1", [run_id]))

    def points(self, run_id: str) -> list[RunPoint]:
        """All points of one run, in the order they were stored."""
        return self._select("SELECT * FROM run_points WHERE run_id = ? ORDER BY id", [run_id])

    def set_run_context(self, run_id: str, context: RunContext) -> None:
        """Record what judged and drove `run_id`: every pytest-xdist worker of a run may call this. A field
        not yet recorded (None) is filled by a later call; a field recorded with another value is an error,
        never an overwrite. The environment is the first call's."""
        fields = ("spec", "spec_sha256", "profile", "engine", "engine_version")
        values = [getattr(context, name) for name in fields]
        try:
            with self._connect() as db:
                db.execute("INSERT OR IGNORE INTO run_context (run_id, spec, spec_sha256, profile, engine, engine_version,"
                           " environment_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (run_id, *values, redact(json.dumps(dict(context.environment), sort_keys=True))))
                stored = db.execute(f"SELECT {', '.join(fields)} FROM run_context WHERE run_id = ?", [run_id]).fetchone()
                clashes = [f"{name} {stored[name]} (recorded), {value} (now)" for name, value in zip(fields, values, strict=True)
                           if value is not None and stored[name] is not None and stored[name] != value]
                if clashes:
                    raise StoreError(f"results store {self.path}: run {run_id} already records another context: "
                                     + "; ".join(clashes))
                db.execute(f"UPDATE run_context SET {', '.join(f'{n} = COALESCE({n}, ?)' for n in fields)} WHERE run_id = ?",
                           (*values, run_id))
        except sqlite3.Error as exc:
            raise StoreError(f"results store {self.path}: cannot record the context of run {run_id}: {exc}") from exc

    def run_context(self, run_id: str) -> RunContext | None:
        """What judged and drove `run_id`; None: the store holds no context for it (older store or session)."""
        try:
            with self._connect() as db:
                row = db.execute("SELECT * FROM run_context WHERE run_id = ?", [run_id]).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"results store {self.path}: query failed: {exc}") from exc
        if row is None:
            return None
        return RunContext(spec=row["spec"], spec_sha256=row["spec_sha256"], profile=row["profile"], engine=row["engine"],
                          engine_version=row["engine_version"], environment=json.loads(row["environment_json"]))

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
                     suite_version=r["suite_version"], id=r["id"], measurement_invalid=r["measurement_invalid"],
                     outcome_recorded=r["passed"] is not None, planned_s=r["planned_s"], actual_s=r["actual_s"],
                     stop_kind=r["stop_kind"], stop_detail=r["stop_detail"],
                     array_latency=None if r["array_latency_json"] is None else json.loads(r["array_latency_json"]))
            for r in rows
        ]
