"""iogate bakeoff: three arrays' runs in a real SQLite store, every expected figure worked by hand.

The runs (alpha the reference):
- sweep, check speed_read_at_latency (IOPS): alpha 60000 PASS, beta 45000 FAIL, gamma 66000 PASS
  -> % of alpha: 100.0, 75.0, 110.0; best gamma (higher IOPS is better).
- sweep curve point qd1, read IOPS: alpha 20000, beta 10000, gamma 30000 -> 100.0, 50.0, 150.0; best gamma.
  read p99: alpha 2 ms, beta none stored ("no data"), gamma 1 ms -> best gamma (lower is better).
- snapshot_impact, check snapshot_read_drop_max (%, a maximum of 5): alpha 2.0, beta 4.0, gamma 1.0 but
  gamma's point is measurement-invalid -> INVALID, no %, never the best: best alpha (2.0 < 4.0); beta 200.0.
- baseline, check iops_min (IOPS): alpha 1000, gamma 1500, beta never ran it -> beta "missing", best gamma.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from iogate.__main__ import main as iogate_main
from iogate.results.bakeoff import build_bakeoff
from iogate.results.bakeoff_charts import knee_charts, knee_curves
from iogate.results.bakeoff_cli import main as bakeoff_main
from iogate.results.bakeoff_guard import UnfairComparison
from iogate.results.bakeoff_output import attach_to_allure, flat_rows, html_page, write_all
from iogate.results.store import ResultsStore, RunContext, RunPoint, StoreError
from iogate.verdict import Unit, Verdict

SWEEP = "tests/test_sweep.py::test_sweep[local]"
SNAPSHOT = "tests/test_snapshot_impact.py::test_snapshot_impact[local]"
BASELINE = "tests/test_baseline.py::test_baseline[local]"
CONTEXT = RunContext(spec="criteria/poc.yaml", spec_sha256="aa11", profile="smoke", engine="fio", engine_version="fio-3.36",
                     environment={"host_kernel": "6.8.0"})


def _params(iodepth: int, bs: str = "4k", hosts: tuple[str, ...] = ("h1",)) -> dict[str, Any]:
    return {"protocols": ["iscsi"], "hosts": list(hosts), "jobs": 1, "rw": "rd100", "random_pct": 100, "bs": bs,
            "iodepth": iodepth, "numjobs": 1, "runtime_s": 30, "ramp_s": 5}


def _read(iops: float, p99_ms: float | None) -> dict[str, dict[str, float | None]]:
    return {"read": {"iops": iops, "bw_bytes_per_s": iops * 4096, "mean_ns": 500_000.0,
                     "p99_ns": None if p99_ms is None else p99_ms * 1e6}}


def _add(store: ResultsStore, run: str, array: str, test: str, point: str, params: dict[str, Any], metrics: Any,
         verdicts: list[Verdict], invalid: str | None = None) -> None:
    store.add(RunPoint.from_verdicts(run_id=run, lab=f"lab-{array}", array=array, test_id=f"{test}::{point}", params=params,
                                     metrics=metrics, verdicts=verdicts, started_at=1.0, measurement_invalid=invalid))


def _at_latency(iops: float, passed: bool) -> Verdict:
    return Verdict("speed_read_at_latency", passed, iops, 50000.0, Unit.IOPS,
                   detail=f"{iops:.6g} IOPS @ mean 0.4 ms (point qd8; limit 0.5 ms)")


def _fill(store: ResultsStore, *, gamma_kernel: str = "6.1.0") -> None:
    sweep = {"r-a": ("alpha", 60000.0, True, 20000.0, 2.0), "r-b": ("beta", 45000.0, False, 10000.0, None),
             "r-c": ("gamma", 66000.0, True, 30000.0, 1.0)}
    for run, (array, at_latency, passed, qd1_iops, p99_ms) in sweep.items():
        verdicts = [_at_latency(at_latency, passed)]
        _add(store, run, array, SWEEP, "qd1", _params(1), _read(qd1_iops, p99_ms), verdicts)
        _add(store, run, array, SWEEP, "qd8", _params(8), _read(3 * qd1_iops, p99_ms), verdicts)
        drop = {"r-a": 2.0, "r-b": 4.0, "r-c": 1.0}[run]
        _add(store, run, array, SNAPSHOT, "during", _params(8), _read(qd1_iops, p99_ms),
             [Verdict("snapshot_read_drop_max", True, drop, 5.0, Unit.PCT)],
             invalid="generator saturated: host h1 95 %" if run == "r-c" else None)
        if run != "r-b":
            _add(store, run, array, BASELINE, "p", _params(4), _read(qd1_iops, p99_ms),
                 [Verdict("iops_min", True, {"r-a": 1000.0, "r-c": 1500.0}[run], 900.0, Unit.IOPS)])
        kernel = gamma_kernel if run == "r-c" else "6.8.0"
        store.set_run_context(run, RunContext(**{**CONTEXT.__dict__, "environment": {"host_kernel": kernel}}))


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    filled = ResultsStore(tmp_path / "results.sqlite")
    _fill(filled)
    return filled


def _row(rows: list[dict[str, Any]], check: str) -> dict[str, Any]:
    (found,) = [r for r in rows if r["check"] == check]
    return found


def test_percent_of_reference_and_best_array(store: ResultsStore) -> None:
    rows = flat_rows(build_bakeoff(store, ["r-a", "r-b", "r-c"]))
    at_latency = _row(rows, "speed_read_at_latency")
    assert [at_latency[k] for k in ("alpha", "beta", "gamma")] == [60000.0, 45000.0, 66000.0]
    assert [at_latency[f"{k} % of alpha"] for k in ("alpha", "beta", "gamma")] == [100.0, 75.0, 110.0]
    assert at_latency["best"] == "gamma"
    qd1 = _row(rows, "qd1 read IOPS")
    assert [qd1[f"{k} % of alpha"] for k in ("alpha", "beta", "gamma")] == [100.0, 50.0, 150.0]
    assert qd1["best"] == "gamma" and qd1["protocol"] == "iscsi"
    p99 = _row(rows, "qd1 read p99 latency")
    assert (p99["alpha"], p99["beta"], p99["gamma"], p99["best"]) == (2.0, "no data", 1.0, "gamma")
    assert p99["beta verdict"] == "no data" and p99["beta % of alpha"] == ""


def test_another_reference_is_its_100(store: ResultsStore) -> None:
    rows = flat_rows(build_bakeoff(store, ["r-a", "r-b", "r-c"], reference="r-b"))
    at_latency = _row(rows, "speed_read_at_latency")
    # 60000 / 45000 = 133.33.. -> 133.3; 66000 / 45000 = 146.66.. -> 146.7
    assert [at_latency[f"{k} % of beta"] for k in ("alpha", "beta", "gamma")] == [133.3, 100.0, 146.7]


def test_iops_at_latency_then_event_impacts_come_first(store: ResultsStore) -> None:
    rows = flat_rows(build_bakeoff(store, ["r-a", "r-b", "r-c"]))
    assert [r["check"] for r in rows[:3]] == ["speed_read_at_latency", "snapshot_read_drop_max", "iops_min"]
    assert all(r["kind"] == "curve point" for r in rows[3:])


def test_failed_and_invalid_verdicts_are_never_a_pass(store: ResultsStore) -> None:
    rows = flat_rows(build_bakeoff(store, ["r-a", "r-b", "r-c"]))
    assert _row(rows, "speed_read_at_latency")["beta verdict"] == "FAIL"
    drop = _row(rows, "snapshot_read_drop_max")
    assert (drop["alpha verdict"], drop["beta verdict"], drop["gamma verdict"]) == ("PASS", "PASS", "INVALID")
    # gamma's 1.0 % drop is the lowest figure, but invalid: no %, never the best; lower is better (a maximum bound).
    assert drop["gamma % of alpha"] == "" and drop["beta % of alpha"] == 200.0
    assert drop["best"] == "alpha" and drop["better"] == "lower"


def test_a_row_a_run_lacks_is_missing_never_zero(store: ResultsStore) -> None:
    rows = flat_rows(build_bakeoff(store, ["r-a", "r-b", "r-c"]))
    baseline = _row(rows, "iops_min")
    assert (baseline["beta"], baseline["beta verdict"], baseline["beta % of alpha"]) == ("missing", "missing", "")
    assert baseline["gamma % of alpha"] == 150.0 and baseline["best"] == "gamma"


def test_one_valid_figure_has_no_best(store: ResultsStore) -> None:
    rows = flat_rows(build_bakeoff(store, ["r-b", "r-c"]))  # beta never ran the baseline test: gamma alone
    assert _row(rows, "iops_min")["best"] == ""


def test_benign_differences_are_listed(store: ResultsStore) -> None:
    bakeoff = build_bakeoff(store, ["r-a", "r-b", "r-c"])
    assert "host_kernel: alpha 6.8.0; beta 6.8.0; gamma 6.1.0" in bakeoff.differences
    assert ("1 run point(s) not run by every array, e.g. tests/test_baseline.py::test_baseline[local]::p (run by alpha): "
            "shown as missing for the others") in bakeoff.differences
    assert "host_kernel" in html_page(bakeoff).split("the matrix")[0]  # at the top, before the matrix


def test_other_hosts_are_benign(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "r.sqlite")
    for run, array, host in (("r1", "alpha", "h1"), ("r2", "beta", "h9")):
        _add(store, run, array, SWEEP, "qd1", _params(1, hosts=(host,)), _read(1.0, 1.0), [_at_latency(1.0, True)])
        store.set_run_context(run, CONTEXT)
    assert build_bakeoff(store, ["r1", "r2"]).differences == (
        f"hosts differs at 1 run point(s), e.g. {SWEEP}::qd1: alpha h1; beta h9",)


def test_a_workload_difference_refuses_with_one_line(store: ResultsStore) -> None:
    _add(store, "r-d", "delta", SWEEP, "qd1", _params(1, bs="8k"), _read(1.0, 1.0), [_at_latency(1.0, True)])
    store.set_run_context("r-d", CONTEXT)
    with pytest.raises(UnfairComparison) as refused:
        build_bakeoff(store, ["r-a", "r-d"])
    assert str(refused.value) == f"refused: a different workload at {SWEEP}::qd1: bs 4k in alpha, 8k in delta"


@pytest.mark.parametrize(("field", "other", "line"), [
    ("spec", "criteria/nightly.yaml", "refused: different spec: alpha criteria/poc.yaml; epsilon criteria/nightly.yaml"),
    ("spec_sha256", "bb22", "refused: different spec_sha256: alpha aa11; epsilon bb22"),
    ("profile", "full", "refused: different profile: alpha smoke; epsilon full"),
    ("engine_version", "fio-3.16", "refused: different engine_version: alpha fio-3.36; epsilon fio-3.16"),
])
def test_a_different_judge_refuses(store: ResultsStore, field: str, other: str, line: str) -> None:
    _add(store, "r-e", "epsilon", SWEEP, "qd1", _params(1), _read(1.0, 1.0), [_at_latency(1.0, True)])
    store.set_run_context("r-e", RunContext(**{**CONTEXT.__dict__, field: other}))
    with pytest.raises(UnfairComparison) as refused:
        build_bakeoff(store, ["r-a", "r-e"])
    assert str(refused.value) == line


def test_a_run_without_recorded_context_is_refused(store: ResultsStore) -> None:
    _add(store, "r-old", "old", SWEEP, "qd1", _params(1), _read(1.0, 1.0), [_at_latency(1.0, True)])
    with pytest.raises(UnfairComparison, match=r"^refused: run r-old \(old\) has no recorded run context"):
        build_bakeoff(store, ["r-a", "r-old"])


def test_unknown_run_and_bad_reference_are_named(store: ResultsStore) -> None:
    with pytest.raises(StoreError, match="no points for run r-zz"):
        build_bakeoff(store, ["r-a", "r-zz"])
    with pytest.raises(StoreError, match="reference r-c is none of the runs, labs or columns compared"):
        build_bakeoff(store, ["r-a", "r-b"], reference="r-c")
    with pytest.raises(UnfairComparison, match="at least two arrays"):
        build_bakeoff(store, ["r-a"])


def test_repeated_array_names_take_the_lab(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "r.sqlite")
    for run, lab in (("r1", "local"), ("r2", "local-btrfs")):
        store.add(RunPoint.from_verdicts(run_id=run, lab=lab, array="local", test_id=f"{SWEEP}::qd1", params=_params(1),
                                         metrics=_read(1.0, 1.0), verdicts=[_at_latency(1.0, True)]))
        store.set_run_context(run, CONTEXT)
    assert build_bakeoff(store, ["r1", "r2"]).labels == ["local (local)", "local (local-btrfs)"]


class _Cells(HTMLParser):
    """The text of every row of the page's last table (the matrix)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _same(text: str) -> Any:
    """A cell as a comparable value: a number whatever its spelling (60000, 60000.0), else its text."""
    try:
        return float(text)
    except ValueError:
        return text


def test_csv_xlsx_and_html_carry_the_same_figures(store: ResultsStore, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert bakeoff_main(["--store", str(store.path), "--runs", "r-a", "r-b", "r-c", "--out", str(out)]) == 0
    with (out / "bakeoff.csv").open(newline="") as handle:
        from_csv = [[_same(c) for c in row] for row in csv.reader(handle)]
    sheet = openpyxl.load_workbook(out / "bakeoff.xlsx")["bakeoff"]
    from_xlsx = [[_same("" if c is None else str(c)) for c in row] for row in sheet.iter_rows(values_only=True)]
    parser = _Cells()
    parser.feed((out / "bakeoff.html").read_text())
    from_html = [[_same(c) for c in row] for row in parser.tables[-1] if row]
    assert from_csv == from_xlsx == from_html
    header = from_csv[0]
    at_latency = next(r for r in from_csv if r[header.index("check")] == "speed_read_at_latency")
    assert at_latency[header.index("beta")] == 45000.0 and at_latency[header.index("beta verdict")] == "FAIL"
    assert openpyxl.load_workbook(out / "bakeoff.xlsx").sheetnames == ["bakeoff", "runs", "differences"]


def test_every_cell_matches_the_stored_verdict_rows(store: ResultsStore) -> None:
    """Each verdict cell is the stored row's figure and pass/fail, read straight from SQLite (not through the store code)."""
    rows = flat_rows(build_bakeoff(store, ["r-a", "r-b", "r-c"]))
    labels = {"r-a": "alpha", "r-b": "beta", "r-c": "gamma"}
    with sqlite3.connect(store.path) as db:
        stored = db.execute("SELECT run_id, verdicts_json, measurement_invalid FROM run_points").fetchall()
    for run_id, verdicts_json, invalid in stored:
        for verdict in json.loads(verdicts_json):
            row = _row(rows, verdict["criterion"])
            expected = "INVALID" if invalid else ("PASS" if verdict["passed"] else "FAIL")
            assert (row[labels[run_id]], row[f"{labels[run_id]} verdict"]) == (verdict["measured"], expected)


def test_the_command_refuses_in_one_line(store: ResultsStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _add(store, "r-e", "epsilon", SWEEP, "qd1", _params(1), _read(1.0, 1.0), [_at_latency(1.0, True)])
    store.set_run_context("r-e", RunContext(**{**CONTEXT.__dict__, "profile": "full"}))
    assert iogate_main(["bakeoff", "--store", str(store.path), "--runs", "r-a", "r-e", "--out", str(tmp_path / "o")]) == 1
    assert capsys.readouterr().err == "iogate bakeoff: refused: different profile: alpha smoke; epsilon full\n"
    assert not (tmp_path / "o").exists()


def test_write_all_names_three_files(store: ResultsStore, tmp_path: Path) -> None:
    paths = write_all(build_bakeoff(store, ["r-a", "r-b"]), tmp_path)
    assert [p.name for p in paths] == ["bakeoff.csv", "bakeoff.xlsx", "bakeoff.html"]


def test_knee_curves_overlay_every_array_and_leave_out_invalid_points(store: ResultsStore, tmp_path: Path) -> None:
    curves = knee_curves(build_bakeoff(store, ["r-a", "r-b", "r-c"]))
    # Only the sweep has two points; mean latency 500000 ns = 0.5 ms everywhere; qd8 runs 3 x qd1's IOPS.
    assert curves == {"test_sweep[local] read": {"alpha": [(20000.0, 0.5), (60000.0, 0.5)],
                                                  "beta": [(10000.0, 0.5), (30000.0, 0.5)],
                                                  "gamma": [(30000.0, 0.5), (90000.0, 0.5)]}}
    other = ResultsStore(tmp_path / "invalid.sqlite")
    for run, array in (("r1", "alpha"), ("r2", "beta")):
        _add(other, run, array, SWEEP, "qd1", _params(1), _read(100.0, 1.0), [_at_latency(1.0, True)])
        _add(other, run, array, SWEEP, "qd8", _params(8), _read(300.0, 1.0), [_at_latency(1.0, True)],
             invalid="generator saturated" if run == "r2" else None)
        other.set_run_context(run, CONTEXT)
    assert knee_curves(build_bakeoff(other, ["r1", "r2"]))["test_sweep[local] read"] == {
        "alpha": [(100.0, 0.5), (300.0, 0.5)], "beta": [(100.0, 0.5)]}


def test_the_page_embeds_the_knee_chart(store: ResultsStore, tmp_path: Path) -> None:
    write_all(build_bakeoff(store, ["r-a", "r-b"]), tmp_path)
    page = (tmp_path / "bakeoff.html").read_text()
    assert page.count("<img ") == 1 and "knee: test_sweep[local] read" in page
    png = knee_charts(build_bakeoff(store, ["r-a", "r-b"]))["test_sweep[local] read"]
    assert png.startswith(b"\x89PNG")


def test_two_labs_ids_meet_in_one_row_without_the_lab_name(tmp_path: Path) -> None:
    """plugins/parametrize.py ids carry the lab: test_sweep[local-block] and test_sweep[local-btrfs-block] are one row."""
    store = ResultsStore(tmp_path / "r.sqlite")
    for run, lab, iops in (("r1", "local", 100.0), ("r2", "local-btrfs", 80.0)):
        store.add(RunPoint.from_verdicts(run_id=run, lab=lab, array="local", params=_params(1), metrics=_read(iops, 1.0),
                                         test_id=f"tests/test_sweep.py::test_sweep[{lab}-block]::qd1",
                                         verdicts=[_at_latency(iops, True)]))
        store.set_run_context(run, CONTEXT)
    bakeoff = build_bakeoff(store, ["r1", "r2"])
    rows = flat_rows(bakeoff)
    at_latency = _row(rows, "speed_read_at_latency")
    assert at_latency["test"] == "test_sweep[block]"
    assert (at_latency["local (local)"], at_latency["local (local-btrfs)"]) == (100.0, 80.0)
    assert at_latency["local (local-btrfs) % of local (local)"] == 80.0
    assert bakeoff.differences == ()  # the same run points everywhere: nothing run by one lab only


def test_a_verdict_without_a_figure_keeps_its_judgement_and_shows_no_data(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "r.sqlite")
    for run, array, passed in (("r1", "alpha", True), ("r2", "beta", False)):
        _add(store, run, array, BASELINE, "p", _params(1), _read(1.0, 1.0),
             [Verdict("regression_iops", passed, float("nan"), 10.0, Unit.PCT_POINTS, detail="no baseline")])
        store.set_run_context(run, CONTEXT)
    row = _row(flat_rows(build_bakeoff(store, ["r1", "r2"])), "regression_iops")
    assert (row["alpha"], row["alpha verdict"], row["beta"], row["beta verdict"]) == ("no data", "PASS", "no data", "FAIL")
    assert (row["beta % of alpha"], row["best"]) == ("", "")


def test_another_protocol_set_is_listed_and_its_rows_missing(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "r.sqlite")
    runs = (("r1", "alpha", ("iscsi", "nvme-tcp")), ("r2", "beta", ("iscsi",)))
    for run, array, protocols in runs:
        for protocol in protocols:
            params = {**_params(1), "protocols": [protocol]}
            _add(store, run, array, f"tests/test_sweep.py::test_sweep[{protocol}]", "qd1", params, _read(1.0, 1.0),
                 [_at_latency(1.0, True)])
        store.set_run_context(run, CONTEXT)
    bakeoff = build_bakeoff(store, ["r1", "r2"])
    assert bakeoff.differences[0] == "protocols run: alpha iscsi,nvme-tcp; beta iscsi"
    nvme = [r for r in flat_rows(bakeoff) if r["protocol"] == "nvme-tcp" and r["kind"] == "check"]
    assert [(r["alpha verdict"], r["beta"], r["beta verdict"]) for r in nvme] == [("PASS", "missing", "missing")]


def test_the_allure_attachment_is_the_page(store: ResultsStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import allure

    attached: list[tuple[str, str, object]] = []
    monkeypatch.setattr(allure, "attach", lambda body, name, attachment_type: attached.append((body, name, attachment_type)))
    bakeoff = build_bakeoff(store, ["r-a", "r-b"])
    attach_to_allure(bakeoff)
    assert attached == [(html_page(bakeoff), "bake-off", allure.attachment_type.HTML)]


def test_the_detail_says_n_iops_at_l_ms_and_why_invalid(store: ResultsStore) -> None:
    rows = flat_rows(build_bakeoff(store, ["r-a", "r-b", "r-c"]))
    assert _row(rows, "speed_read_at_latency")["beta detail"] == "45000 IOPS @ mean 0.4 ms (point qd8; limit 0.5 ms)"
    assert _row(rows, "snapshot_read_drop_max")["gamma detail"] == "measurement invalid: generator saturated: host h1 95 %"
    assert _row(rows, "iops_min")["beta detail"] == "this run has no such row"


def test_one_session_over_two_labs_is_two_columns(tmp_path: Path) -> None:
    """A multi-lab session stores one run id with each lab's points: its labs are the columns."""
    store = ResultsStore(tmp_path / "r.sqlite")
    for lab, iops in (("local", 100.0), ("local-btrfs", 120.0)):
        store.add(RunPoint.from_verdicts(run_id="s1", lab=lab, array="local", params=_params(1), metrics=_read(iops, 1.0),
                                         test_id=f"tests/test_sweep.py::test_sweep[{lab}-block]::qd1",
                                         verdicts=[_at_latency(iops, True)]))
    store.set_run_context("s1", CONTEXT)
    bakeoff = build_bakeoff(store, ["s1"], reference="local-btrfs")
    assert bakeoff.labels == ["local (local)", "local (local-btrfs)"] and bakeoff.reference == "local (local-btrfs)"
    row = _row(flat_rows(bakeoff), "speed_read_at_latency")
    # 100 / 120 = 83.33.. -> 83.3
    assert (row["local (local) % of local (local-btrfs)"], row["best"]) == (83.3, "local (local-btrfs)")
