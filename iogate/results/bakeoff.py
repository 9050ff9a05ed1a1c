"""The bake-off matrix: several arrays' runs of one spec, side by side, from the results store.

One row per family, test, protocol and check (a stored verdict), and one per
sweep curve point and metric (IOPS, mean and p99 latency per direction); one
column group per array (run): its measured figure, its verdict, and the figure
as % of the reference array's (reference = 100, the seeds' form: Dell's "%
of iSCSI-1500", NetApp's "FC = 100"); then the best array of the row. The "N
IOPS @ L ms" rows come first, then the event impacts, the other checks, the
curve points.

Fail closed: a failed verdict is FAIL and an invalid measurement INVALID,
never shown as a pass; a row a run lacks is "missing" and a figure with no
data "no data", never 0. Only a valid figure (PASS, FAIL or measured) is given
a % and can be the best; the best needs two such figures and a known
direction (higher or lower is better).

Where the stored points carry what the array's own counters said of their
latency (results store schema 5), each curve point's mean latency row of a
direction is followed by three rows per array: the array-side mean latency
(ms), the host + fabric share (host-side mean completion latency minus the
array-side, in ms) and that share as % of the host-side mean. An array whose
driver has no counters shows "n/a: <driver> has no latency counters" there; a
point stored without the record, or a side the array reported no latency for,
"no data" with why: never a blank that reads as zero.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iogate.results.bakeoff_guard import Contender, check_fair, comparable_id, context_key
from iogate.results.store import ResultsStore, RunPoint, StoreError
from iogate.units import NS_PER_MS

PASS, FAIL, INVALID, MEASURED, MISSING, NO_DATA = "PASS", "FAIL", "INVALID", "measured", "missing", "no data"
VALID = (PASS, FAIL, MEASURED)  # statuses whose figure is compared
HIGHER, LOWER = "higher", "lower"
# Which way is better, by a verdict's unit; "%" (a drop or an efficiency) and "rounds" are read from the bound.
BETTER_BY_UNIT = {"IOPS": HIGHER, "MB/s": HIGHER, "% intervals": HIGHER, "ms": LOWER, "% points": LOWER, "errors": LOWER}
EVENT_FAMILIES = ("snapshot_impact", "mirror_impact", "dedupe_during_load")  # tests/test_<family>.py
_IOPS_AT_LATENCY = re.compile(r"IOPS @ ")  # criteria/iops_at_latency.py detail: "780000 IOPS @ mean 0.5 ms ..."
# Curve point rows: (name, stored key, divisor to the shown unit, unit, better).
CURVE_METRICS = (("IOPS", "iops", 1.0, "IOPS", HIGHER), ("mean latency", "mean_ns", NS_PER_MS, "ms", LOWER),
                 ("p99 latency", "p99_ns", NS_PER_MS, "ms", LOWER))
CHECK, CURVE, ARRAY_SIDE = "check", "curve point", "array vs host latency"
NOT_AVAILABLE = "n/a"  # a status starting so: the array's driver has no such counters (its detail says which)
# The rows after a point's "mean latency" row where the array's counters are stored (results store schema 5).
ARRAY_LATENCY, HOST_FABRIC_MS, HOST_FABRIC_PCT = "array-side mean latency", "host + fabric latency", "host + fabric share"
NOT_RECORDED = "the array's counters were not recorded for this point (stored before schema 5)"


@dataclass(frozen=True)
class Cell:
    """One array's figure in one row."""

    status: str  # PASS FAIL INVALID measured missing "no data"
    value: float | None = None  # None unless the status has a figure
    bound: float | None = None
    detail: str = ""


@dataclass
class Row:
    family: str
    test: str
    protocol: str
    kind: str  # CHECK or CURVE
    check: str  # the verdict's check name, or "<point> <direction> <metric>"
    window: str
    unit: str
    cells: dict[str, Cell] = field(default_factory=dict)  # by column label
    group: int = 2  # sort order: 0 IOPS @ latency, 1 event impacts, 2 other checks, 3 curve points


@dataclass(frozen=True)
class Bakeoff:
    reference: str  # the reference column's label
    contenders: tuple[Contender, ...]
    differences: tuple[str, ...]  # what differs without changing the workload
    rows: tuple[Row, ...]

    @property
    def labels(self) -> list[str]:
        return [c.label for c in self.contenders]


def family_of(test_id: str) -> str:
    return Path(test_id.split("::", 1)[0]).stem.removeprefix("test_") or "tests"


def test_node(test_id: str) -> str:
    """The test (file::function[params]) of a stored point id file::function[params]::point."""
    return test_id.rsplit("::", 1)[0] if test_id.count("::") >= 2 else test_id


def _test_name(test_id: str) -> str:
    return test_node(test_id).split("::", 1)[-1]


def _protocols(points: Sequence[RunPoint]) -> str:
    found = sorted({str(p) for point in points for p in point.params.get("protocols", [])})
    return "+".join(found)


def _figure(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _verdict_cell(verdict: Mapping[str, Any], invalid: str | None) -> Cell:
    value, bound, detail = _figure(verdict.get("measured")), _figure(verdict.get("bound")), str(verdict.get("detail") or "")
    if invalid or verdict.get("measurement_invalid"):
        return Cell(INVALID, value, bound, f"measurement invalid: {invalid or verdict.get('measurement_invalid')}")
    # The stored judgement as it stands (a pass without a figure, e.g. "no baseline by request", stays a pass,
    # its figure "no data"); anything but a recorded True is a FAIL.
    return Cell(PASS if verdict.get("passed") is True else FAIL, value, bound, detail)


def _check_rows(label: str, points: Sequence[RunPoint], rows: dict[tuple[str, ...], Row]) -> None:
    tests: dict[str, list[RunPoint]] = {}
    for point in points:
        tests.setdefault(test_node(comparable_id(point)), []).append(point)
    for node, test_points in tests.items():
        invalid = "; ".join(sorted({p.measurement_invalid for p in test_points if p.measurement_invalid})) or None
        protocol = _protocols(test_points)
        # The plugin stores the test's verdicts on each of its points: one row per verdict, not per copy.
        for verdict in test_points[0].verdicts:
            check, window = str(verdict.get("criterion", "?")), str(verdict.get("window") or "")
            key = (family_of(node), _test_name(node), protocol, CHECK, check, window)
            row = rows.setdefault(key, Row(*key, unit=str(verdict.get("unit") or "")))
            cell = _verdict_cell(verdict, invalid)
            row.cells.setdefault(label, cell)
            if _IOPS_AT_LATENCY.search(str(verdict.get("detail") or "")) and row.unit == "IOPS":
                row.group = 0
            elif row.family in EVENT_FAMILIES:
                row.group = min(row.group, 1)


def _array_side_cells(point: RunPoint, direction: str, host_ns: float | None) -> dict[str, Cell]:
    """The three array-vs-host cells of one point and direction (see the module's doc), by row name."""
    said = point.array_latency
    if said is None:
        return dict.fromkeys((ARRAY_LATENCY, HOST_FABRIC_MS, HOST_FABRIC_PCT), Cell(NO_DATA, detail=NOT_RECORDED))
    if "none" in said:  # the driver has no METRICS: its status is the sentence itself
        status = str(said["none"])
        return dict.fromkeys((ARRAY_LATENCY, HOST_FABRIC_MS, HOST_FABRIC_PCT), Cell(status, detail=status))
    side = said.get(direction) or {}
    array_us = _figure(side.get("latency_us"))
    if array_us is None:
        why = str(side.get("why") or f"the array's counters ({said.get('driver', '?')}) have no {direction} side")
        return dict.fromkeys((ARRAY_LATENCY, HOST_FABRIC_MS, HOST_FABRIC_PCT), Cell(NO_DATA, detail=why))
    array_ms = array_us / 1000.0
    host_ms = None if host_ns is None else host_ns / NS_PER_MS
    if point.measurement_invalid:
        why = f"measurement invalid: {point.measurement_invalid}"
        share = None if host_ms is None else host_ms - array_ms
        return {ARRAY_LATENCY: Cell(INVALID, array_ms, detail=why), HOST_FABRIC_MS: Cell(INVALID, share, detail=why),
                HOST_FABRIC_PCT: Cell(INVALID, None if share is None or not host_ms else 100.0 * share / host_ms, detail=why)}
    of = f"{said.get('driver', '?')} counters: array-side {array_ms:.4g} ms"
    if host_ms is None or host_ms <= 0:
        no_host = Cell(NO_DATA, detail=f"{of}; no host-side mean latency stored")
        return {ARRAY_LATENCY: Cell(MEASURED, array_ms, detail=of), HOST_FABRIC_MS: no_host, HOST_FABRIC_PCT: no_host}
    share = host_ms - array_ms
    detail = f"{of}, host-side {host_ms:.4g} ms"
    return {ARRAY_LATENCY: Cell(MEASURED, array_ms, detail=detail), HOST_FABRIC_MS: Cell(MEASURED, share, detail=detail),
            HOST_FABRIC_PCT: Cell(MEASURED, 100.0 * share / host_ms, detail=detail)}


def _curve_rows(label: str, points: Sequence[RunPoint], rows: dict[tuple[str, ...], Row], array_side: bool = False) -> None:
    """`array_side`: some run compared stored its array's latency counters: add their rows after each mean latency."""
    for point in points:
        test_id = comparable_id(point)
        point_name = test_id.rsplit("::", 1)[-1] if test_id.count("::") >= 2 else ""
        for direction, metrics in point.metrics.items():
            for name, key, divisor, unit, _better in CURVE_METRICS:
                check = " ".join(filter(None, (point_name, direction, name)))
                row_key = (family_of(test_id), _test_name(test_id), _protocols([point]), CURVE, check, "")
                row = rows.setdefault(row_key, Row(*row_key, unit=unit, group=3))
                value = _figure(metrics.get(key))
                if point.measurement_invalid:
                    cell = Cell(INVALID, None if value is None else value / divisor,
                                detail=f"measurement invalid: {point.measurement_invalid}")
                elif value is None:
                    cell = Cell(NO_DATA, detail=f"no {name} stored")
                else:
                    cell = Cell(MEASURED, value / divisor)
                row.cells.setdefault(label, cell)
                if array_side and key == "mean_ns":
                    for name, side_cell in _array_side_cells(point, direction, value).items():
                        side_check = " ".join(filter(None, (point_name, direction, name)))
                        side_key = (row_key[0], row_key[1], row_key[2], ARRAY_SIDE, side_check, "")
                        unit_of = "%" if name == HOST_FABRIC_PCT else "ms"
                        rows.setdefault(side_key, Row(*side_key, unit=unit_of, group=3)).cells.setdefault(label, side_cell)


def better_of(row: Row) -> str | None:
    """Which way is better in this row: by its unit, else by how its verdicts read their bound; None: unknown."""
    if row.kind == ARRAY_SIDE:
        return LOWER  # less latency, and less of it added by the host and fabric
    if row.kind == CURVE:
        return next(better for name, _k, _d, _u, better in CURVE_METRICS if row.check.endswith(name))
    if row.unit in BETTER_BY_UNIT:
        return BETTER_BY_UNIT[row.unit]
    seen = set()
    for cell in row.cells.values():
        if cell.status not in (PASS, FAIL) or cell.value is None or cell.bound is None or cell.value == cell.bound:
            continue
        below = cell.value < cell.bound
        seen.add(LOWER if below == (cell.status == PASS) else HIGHER)  # passing below a bound: a maximum
    return seen.pop() if len(seen) == 1 else None


def cell_of(row: Row, label: str) -> Cell:
    return row.cells.get(label, Cell(MISSING, detail="this run has no such row"))


def relative_pct(row: Row, label: str, reference: str) -> float | None:
    """The figure as % of the reference array's (reference = 100); None where either has no valid figure, or
    either is at or below 0 (a drop of -0.7 % against 3.4 % would read -464 %: no comparison, just noise)."""
    mine, ref = cell_of(row, label), cell_of(row, reference)
    if mine.status not in VALID or ref.status not in VALID or mine.value is None or ref.value is None:
        return None
    if mine.value < 0 or ref.value <= 0:
        return None
    return 100.0 * mine.value / ref.value


def best_of(row: Row, labels: Sequence[str]) -> str:
    """The best array's label ("a = b" on a tie); "" when fewer than two valid figures or no known direction."""
    better = better_of(row)
    figures = {label: cell_of(row, label).value for label in labels
               if cell_of(row, label).status in VALID and cell_of(row, label).value is not None}
    if better is None or len(figures) < 2:
        return ""
    top = (max if better == HIGHER else min)(v for v in figures.values() if v is not None)
    return " = ".join(label for label, value in figures.items() if value == top)


def _labels(groups: Sequence[tuple[str, list[RunPoint]]]) -> list[str]:
    """Each column's name: its array; with its lab where arrays repeat; with its run id where both do."""
    arrays = [points[0].array for _, points in groups]
    labs = [f"{points[0].array} ({points[0].lab})" for _, points in groups]
    if len(set(arrays)) == len(arrays):
        return arrays
    if len(set(labs)) == len(labs):
        return labs
    return [f"{points[0].array} ({points[0].lab}, {run_id})" for run_id, points in groups]


def _by_lab(run_id: str, points: Sequence[RunPoint]) -> list[tuple[str, list[RunPoint]]]:
    """A run's points per lab, in stored order: a session over several labs is several columns."""
    labs: dict[str, list[RunPoint]] = {}
    for point in points:
        labs.setdefault(point.lab, []).append(point)
    return [(run_id, lab_points) for lab_points in labs.values()]


def _reference(contenders: Sequence[Contender], reference: str | None) -> Contender:
    """The column `reference` names (a run id: its first lab; a lab name; a column label); default the first."""
    if reference is None:
        return contenders[0]
    for matches in (lambda c: c.run_id == reference, lambda c: c.lab == reference, lambda c: c.label == reference):
        found = [c for c in contenders if matches(c)]
        if found:
            return found[0]
    raise StoreError(f"bake-off: reference {reference} is none of the runs, labs or columns compared "
                     f"({', '.join(c.label for c in contenders)})")


def build_bakeoff(store: ResultsStore, run_ids: Sequence[str], reference: str | None = None) -> Bakeoff:
    """The matrix of `run_ids` (one column per run and lab; the first the reference unless `reference` names
    another run, lab or column), after the guard."""
    if len(set(run_ids)) != len(run_ids):
        raise StoreError(f"bake-off: a run is named twice: {list(run_ids)}")
    groups = []
    for run_id in run_ids:
        points = store.points(run_id)
        if not points:
            raise StoreError(f"results store {store.path}: no points for run {run_id}")
        groups.extend(_by_lab(run_id, points))
    contenders = tuple(Contender(run_id, points[0].lab, label, tuple(points),
                                 store.run_context(context_key(run_id, points[0].lab)) or store.run_context(run_id))
                       for (run_id, points), label in zip(groups, _labels(groups), strict=True))
    chosen = _reference(contenders, reference)
    differences = check_fair(contenders)
    rows: dict[tuple[str, ...], Row] = {}
    ordered = sorted(contenders, key=lambda c: c is not chosen)  # the reference's row order first
    for contender in ordered:
        _check_rows(contender.label, contender.points, rows)
    array_side = any(p.array_latency is not None for c in contenders for p in c.points)
    for contender in ordered:
        _curve_rows(contender.label, contender.points, rows, array_side)
    ranked = sorted(rows.values(), key=lambda row: row.group)  # stable: first-seen order within a group
    return Bakeoff(chosen.label, contenders, tuple(differences), tuple(ranked))
