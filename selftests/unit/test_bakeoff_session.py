"""The bake-off of one session's labs (`iogate bakeoff --session allure-results`, and the session's own end).

A results store holds one run `s1` of two labs as plugins/results.py stores them (test ids with the lab first,
a run context per lab), every figure and verdict given here by hand:

    baseline iops_min (IOPS)            local 1000 PASS   local-btrfs 800 PASS   -> 80.0 % of local, best local
    baseline p99_latency_max (ms)       local 12.5 PASS   local-btrfs 62.5 FAIL  -> 500.0 %, best local (lower)
    snapshot snapshot_read_drop_max (%) local 4.0 PASS    local-btrfs 10.0, its point invalid -> INVALID, no %, no best
    sweep speed_read_at_latency (IOPS)  local 900 PASS    local-btrfs never ran the sweep -> missing, no best
    baseline point: read IOPS           local 700         local-btrfs 560        -> 80.0 %, best local

Every check cell of the CSV is then checked against the stored verdict rows read with plain SQL (not through
the code under test): the figure is the stored `measured` (4 decimals), the verdict the stored `passed` unless
the point is stored invalid, and a row a lab lacks is "missing".
"""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from iogate.judging.validity import point_invalid_reason
from iogate.metrics.types import RunResult, Series
from iogate.results.bakeoff_cli import main as bakeoff_main
from iogate.results.bakeoff_guard import context_key
from iogate.results.bakeoff_series import save_series
from iogate.results.bakeoff_session import BAKEOFF_NAME, run_of_results, session_bakeoff
from iogate.results.store import ResultsStore, RunContext, RunPoint
from iogate.verdict import Unit, Verdict

RUN = "20261128-120000-local+local-btrfs-4242"
LABS = {"local": "loop-array", "local-btrfs": "loop-array-btrfs"}
CONTEXT = RunContext(spec="criteria/local.yaml", spec_sha256="bb22", profile="smoke", engine="fio", engine_version="fio-3.33",
                     environment={"host kernel": "6.1.0", "array.model": "Linux loop devices on xfs (reflink) pool"})


def _params(bs: str = "4k") -> dict[str, Any]:
    return {"protocols": ["block"], "hosts": ["localhost"], "jobs": 2, "rw": "randrw", "read_pct": 70, "random_pct": 100,
            "bs": bs, "iodepth": 8, "numjobs": 1, "runtime_s": 20, "ramp_s": 3}


def _add(store: ResultsStore, lab: str, test: str, point: str, read_iops: float, verdicts: list[Verdict],
         invalid: str | None = None) -> None:
    metrics = {"read": {"iops": read_iops, "bw_bytes_per_s": read_iops * 4096, "mean_ns": 2_000_000.0, "p99_ns": 9_000_000.0}}
    store.add(RunPoint.from_verdicts(run_id=RUN, lab=lab, array=LABS[lab], test_id=f"{test}[{lab}]::{point}",
                                     params=_params(), metrics=metrics, verdicts=verdicts, started_at=1.0,
                                     measurement_invalid=invalid))


def fill(store: ResultsStore, *, btrfs_context: RunContext | None = None) -> None:
    baseline = "tests/test_baseline.py::test_baseline"
    _add(store, "local", baseline, "baseline", 700.0, [Verdict("iops_min", True, 1000.0, 900.0, Unit.IOPS),
                                                       Verdict("p99_latency_max", True, 12.5, 50.0, Unit.MS)])
    _add(store, "local-btrfs", baseline, "baseline", 560.0, [Verdict("iops_min", True, 800.0, 700.0, Unit.IOPS),
                                                             Verdict("p99_latency_max", False, 62.5, 50.0, Unit.MS)])
    snapshot = "tests/test_snapshot_impact.py::test_snapshot_impact"
    _add(store, "local", snapshot, "snap", 650.0, [Verdict("snapshot_read_drop_max", True, 4.0, 30.0, Unit.PCT)])
    _add(store, "local-btrfs", snapshot, "snap", 600.0, [Verdict("snapshot_read_drop_max", True, 10.0, 30.0, Unit.PCT)],
         invalid="generator saturated: host localhost was 97.0 % CPU busy over run point snap")
    _add(store, "local", "tests/test_sweep.py::test_sweep_saturation", "curve", 900.0,
         [Verdict("speed_read_at_latency", True, 900.0, 500.0, Unit.IOPS, detail="900 IOPS @ mean 2 ms (point t8; limit 5 ms)")])
    store.set_run_context(context_key(RUN, "local"), CONTEXT)
    btrfs = btrfs_context or RunContext(**{**CONTEXT.__dict__, "environment": {
        "host kernel": "6.1.0", "array.model": "Linux loop devices on btrfs (reflink) pool"}})
    store.set_run_context(context_key(RUN, "local-btrfs"), btrfs)


@pytest.fixture
def results(tmp_path: Path) -> Path:
    fill(ResultsStore(tmp_path / "results.sqlite"))
    allure = tmp_path / "allure-results"
    allure.mkdir()
    (allure / "environment.properties").write_text(f"profile=smoke\niogate.run={RUN}\nlabs=local, local-btrfs\n")
    return allure


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _row(rows: list[dict[str, str]], check: str) -> dict[str, str]:
    (found,) = [r for r in rows if r["check"] == check]
    return found


def test_the_session_bakeoff_by_hand(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "exports" / RUN
    written, lines = session_bakeoff(tmp_path / "results.sqlite", run_of_results(results), results, out)
    assert written, lines
    rows = _csv(out / "bakeoff.csv")
    a, b = "loop-array", "loop-array-btrfs"
    iops = _row(rows, "iops_min")
    assert (iops[a], iops[b], iops[f"{b} % of {a}"], iops["best"]) == ("1000.0", "800.0", "80.0", a)
    p99 = _row(rows, "p99_latency_max")
    assert (p99[f"{a} verdict"], p99[f"{b} verdict"], p99[f"{b} % of {a}"], p99["best"]) == ("PASS", "FAIL", "500.0", a)
    drop = _row(rows, "snapshot_read_drop_max")
    assert (drop[f"{b} verdict"], drop[f"{b} % of {a}"], drop["best"]) == ("INVALID", "", "")
    assert "generator saturated: host localhost was 97.0 %" in drop[f"{b} detail"]
    at_latency = _row(rows, "speed_read_at_latency")
    assert (at_latency[a], at_latency[b], at_latency[f"{b} verdict"], at_latency["best"]) == ("900.0", "missing", "missing", "")
    curve = _row(rows, "baseline read IOPS")
    assert (curve[a], curve[b], curve[f"{b} % of {a}"], curve["best"]) == ("700.0", "560.0", "80.0", a)
    # The "N IOPS @ L ms" rows first, then the event impacts.
    assert [r["check"] for r in rows[:2]] == ["speed_read_at_latency", "snapshot_read_drop_max"]
    # What differs without changing the workload heads the output: the array model (xfs vs btrfs pool).
    assert any(line.startswith("differs (workload unchanged): array.model: ") and "btrfs" in line for line in lines)
    assert (out / "bakeoff.xlsx").stat().st_size > 0 and (out / "bakeoff.html").stat().st_size > 0


def test_every_check_cell_is_the_stored_verdict_row(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "exports" / RUN
    assert session_bakeoff(tmp_path / "results.sqlite", RUN, results, out)[0]
    stored: dict[tuple[str, str], dict[str, Any]] = {}  # (array, check) -> {measured, passed, invalid}
    with sqlite3.connect(tmp_path / "results.sqlite") as db:
        for array, verdicts_json, invalid in db.execute(
                "SELECT array_name, verdicts_json, measurement_invalid FROM run_points WHERE run_id = ?", [RUN]):
            for verdict in json.loads(verdicts_json):
                stored[(array, verdict["criterion"])] = {"measured": verdict["measured"], "passed": verdict["passed"],
                                                         "invalid": invalid}
    checked = 0
    for row in _csv(out / "bakeoff.csv"):
        if row["kind"] != "check":
            continue
        for array in LABS.values():
            truth = stored.get((array, row["check"]))
            if truth is None:
                assert (row[array], row[f"{array} verdict"]) == ("missing", "missing")
            else:
                want = "INVALID" if truth["invalid"] else "PASS" if truth["passed"] is True else "FAIL"
                assert (float(row[array]), row[f"{array} verdict"]) == (round(truth["measured"], 4), want), row
            checked += 1
    assert checked == 8  # 4 check rows x 2 arrays


def test_the_allure_page_is_a_result_of_its_own(results: Path, tmp_path: Path) -> None:
    assert bakeoff_main(["--session", str(results), "--store", str(tmp_path / "results.sqlite"),
                         "--out", str(tmp_path / "out")]) == 0
    (result_file,) = [p for p in results.glob("*-result.json")]
    result = json.loads(result_file.read_text())
    assert result["name"] == BAKEOFF_NAME and result["status"] == "passed"
    assert {"name": "suite", "value": BAKEOFF_NAME} in result["labels"]
    (attachment,) = result["attachments"]
    page = (results / attachment["source"]).read_text()
    assert attachment["type"] == "text/html" and "loop-array-btrfs" in page and "iops_min" in page
    # 4 check rows + 3 points x (read IOPS, mean, p99) = 13; btrfs: p99 FAIL, its snapshot point's 4 rows INVALID.
    assert result["statusDetails"]["message"] == ("13 rows, reference loop-array = 100; loop-array: 0 FAIL, 0 INVALID; "
                                                  "loop-array-btrfs: 1 FAIL, 4 INVALID")


def test_runs_judged_by_different_specs_are_refused_naming_the_difference(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    fill(store, btrfs_context=RunContext(**{**CONTEXT.__dict__, "spec": "criteria/poc.yaml", "spec_sha256": "cc33"}))
    allure = tmp_path / "allure-results"
    written, lines = session_bakeoff(tmp_path / "results.sqlite", RUN, allure, tmp_path / "out")
    assert not written and not (tmp_path / "out").exists()
    assert lines == ["refused: different spec: loop-array criteria/local.yaml; loop-array-btrfs criteria/poc.yaml"]
    (result_file,) = list(allure.glob("*-result.json"))
    result = json.loads(result_file.read_text())
    assert result["status"] == "broken" and result["statusDetails"]["message"] == f"bake-off refused: {lines[0]}"


def test_a_workload_difference_refuses_in_one_line(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    fill(store)
    store.add(RunPoint.from_verdicts(run_id=RUN, lab="local", array="loop-array", test_id="tests/test_x.py::test_x[local]::p",
                                     params=_params("4k"), metrics={}, verdicts=[], started_at=1.0))
    store.add(RunPoint.from_verdicts(run_id=RUN, lab="local-btrfs", array="loop-array-btrfs",
                                     test_id="tests/test_x.py::test_x[local-btrfs]::p", params=_params("8k"), metrics={},
                                     verdicts=[], started_at=1.0))
    written, lines = session_bakeoff(tmp_path / "results.sqlite", RUN, None, tmp_path / "out")
    assert (written, lines) == (False, ["refused: a different workload at tests/test_x.py::test_x::p: "
                                        "bs 4k in loop-array, 8k in loop-array-btrfs"])


def _result(name: str, iops: list[float], busy: dict[str, float]) -> RunResult:
    from iogate.metrics.types import Dir, Sample

    samples = tuple(Sample(t_ms=1000 * (i + 1), job="j1", host="localhost", dir=Dir.READ, iops=v, clat_mean_ns=1e6)
                    for i, v in enumerate(iops))
    return RunResult(name=name, jobs=(), series=Series(samples=samples), start_ms=0, end_ms=1000 * len(iops),
                     cpu_busy_pct=busy)


def test_iops_over_time_overlays_with_event_markers(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "exports" / RUN
    for lab, level in (("local", 700.0), ("local-btrfs", 560.0)):
        save_series(out, f"tests/test_snapshot_impact.py::test_snapshot_impact[{lab}]::snap", lab,
                    _result("snap", [level] * 5, {}), events=[("snapshot create", 2000, 3000)])
    assert session_bakeoff(tmp_path / "results.sqlite", RUN, results, out)[0]
    page = (out / "bakeoff.html").read_text()
    assert "IOPS over time: test_snapshot_impact::snap" in page
    series = json.loads(next((out / "series" / "local-btrfs").glob("*.json")).read_text())
    assert series["test_id"] == "tests/test_snapshot_impact.py::test_snapshot_impact::snap"
    assert series["events"] == [["snapshot create", 2.0, 3.0]] and [v for _, v in series["iops"]] == [560.0] * 5


def test_the_excuse_is_the_saturated_points_only() -> None:
    """Point p1: h1 at 95 % -> invalid, naming h1 and p1; point p2 of the same test, h1 at 20 %: stands."""
    saturated = point_invalid_reason("p1", _result("p1", [1.0], {"h1": 95.0, "h2": 20.0}))
    assert saturated is not None and "host h1 was 95.0 % CPU busy over run point p1" in saturated and "h2" not in saturated
    assert point_invalid_reason("p2", _result("p2", [1.0], {"h1": 20.0})) is None
    assert point_invalid_reason("p3", _result("p3", [1.0], {"h1": 89.9})) is None  # below the 90 % limit


def test_no_percent_of_a_figure_at_or_below_zero() -> None:
    """Drops measured on the local labs: local -0.7259 %, btrfs 3.3702 % -> no % (it would read -464.3); 2.0 of 4.0 -> 50.0."""
    from iogate.results.bakeoff import CHECK, Cell, Row, relative_pct

    row = Row("snapshot_impact", "t", "block", CHECK, "snapshot_read_drop_max", "", "%",
              cells={"a": Cell("PASS", -0.7259), "b": Cell("PASS", 3.3702), "c": Cell("PASS", 2.0), "d": Cell("PASS", 0.0)})
    assert relative_pct(row, "b", "a") is None and relative_pct(row, "a", "b") is None and relative_pct(row, "c", "d") is None
    assert relative_pct(row, "d", "c") == 0.0
    row.cells["e"] = Cell("PASS", 4.0)
    assert relative_pct(row, "c", "e") == 50.0
