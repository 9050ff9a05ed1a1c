"""`python -m iogate export`: a run's points from the results store as CSV and XLSX.

One row per run point: test, its outcome (passed, or why not: a failed verdict,
an invalid measurement), parameters, per-direction IOPS / MB/s / mean and p99
latency, and each verdict's pass/fail with measured vs bound. Sheets (and
CSV files) are split by test family (the test file), the spreadsheet a PoC
hands over.
"""

from __future__ import annotations

import argparse
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iogate.results.export import to_csv, to_xlsx
from iogate.results.store import DEFAULT_STORE_PATH, ResultsStore, RunPoint, StoreError
from iogate.units import BYTES_PER_MB, NS_PER_MS


def _scaled(value: float | None, divisor: float, digits: int) -> float | str:
    """A stored figure in report units; "no data" where the store holds none (never a 0)."""
    return "no data" if value is None else round(value / divisor, digits)


def point_row(point: RunPoint) -> dict[str, Any]:
    why_not = point.why_not_passed()
    row: dict[str, Any] = {"test": point.test_id.split("::", 1)[-1],
                           # Whether a later run may take this point as its regression baseline, and why not.
                           "outcome": "passed" if why_not is None else f"not passed: {why_not}",
                           **{f"param.{k}": v for k, v in point.params.items()}}
    for direction, metrics in point.metrics.items():
        row[f"{direction}.iops"] = _scaled(metrics.get("iops"), 1, 1)
        row[f"{direction}.MB_per_s"] = _scaled(metrics.get("bw_bytes_per_s"), BYTES_PER_MB, 2)
        row[f"{direction}.mean_ms"] = _scaled(metrics.get("mean_ns"), NS_PER_MS, 4)
        row[f"{direction}.p99_ms"] = _scaled(metrics.get("p99_ns"), NS_PER_MS, 4)
    for verdict in point.verdicts:
        name = verdict.get("criterion", "?")
        row[f"verdict.{name}"] = "PASS" if verdict.get("passed") else "FAIL"
        row[f"verdict.{name}.measured"] = verdict.get("measured")
        row[f"verdict.{name}.bound"] = verdict.get("bound")
    return row


def family_of(point: RunPoint) -> str:
    return Path(point.test_id.split("::", 1)[0]).stem.removeprefix("test_") or "tests"


def last_run_id(store_path: Path) -> str:
    try:
        with sqlite3.connect(store_path) as db:
            row = db.execute("SELECT run_id FROM run_points ORDER BY started_at DESC, id DESC LIMIT 1").fetchone()
    except sqlite3.Error as exc:
        raise StoreError(f"results store {store_path}: {exc}") from exc
    if row is None:
        raise StoreError(f"results store {store_path} holds no run yet")
    return str(row[0])


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m iogate export", description=__doc__)
    parser.add_argument("--store", default=str(DEFAULT_STORE_PATH), help="results SQLite (default .iogate/results.sqlite)")
    parser.add_argument("--run", default=None, help="run id (default: the newest run in the store)")
    parser.add_argument("--out", default="exports", help="output directory")
    args = parser.parse_args(list(argv))
    store_path = Path(args.store)
    if not store_path.exists():
        raise StoreError(f"results store {store_path} does not exist (run the suite first)")
    run_id = args.run or last_run_id(store_path)
    points = ResultsStore(store_path).points(run_id)
    if not points:
        raise StoreError(f"results store {store_path}: no points for run {run_id}")
    tables: dict[str, list[dict[str, Any]]] = {}
    for point in points:
        tables.setdefault(family_of(point), []).append(point_row(point))
    out = Path(args.out) / run_id
    out.mkdir(parents=True, exist_ok=True)
    for family, rows in tables.items():
        print(f"{to_csv(rows, out / f'{family}.csv')}: {len(rows)} row(s)")
    print(f"{to_xlsx(tables, out / f'{run_id}.xlsx')}: sheets {', '.join(tables)}")
    return 0
