"""The local bake-off end to end: the local lab on an XFS pool against the same lab on a btrfs pool, one session.

`pytest tests --lab labs/local.yaml --lab labs/local-btrfs.yaml --profile smoke` (the baseline and the snapshot
impact tests: checks, curve points and an event) with real fio, loop devices and both pools; then:
- every test id names its lab first, and both labs ran every selected test;
- the session wrote exports/<run>/bakeoff.{csv,xlsx,html} and the Allure result "Bake-off";
- every check cell of the XLSX is the stored verdict row of the same run and lab (plain SQL, not the bake-off
  code): its figure, PASS/FAIL, INVALID where the point is stored invalid;
- the snapshot point's IOPS over time is overlaid with its event marked (the page's chart);
- the Allure report built from the results shows the matrix on the "Bake-off" page in headless Chromium, cell
  for cell the XLSX's, and its screenshot is kept (tmp_path/bakeoff-allure.png, and beside the exports).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from iogate.report import build_report
from iogate.results.bakeoff_session import BAKEOFF_NAME, run_of_results
from selftests.integration.report_browser import headless_chromium, missing_browser_commands, wait_for
from selftests.integration.test_report_chromium import _serving, _test_result_id

ROOT = Path(__file__).resolve().parents[2]
SELECT = "test_baseline or test_snapshot_impact"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(os.geteuid() != 0 or shutil.which("fio") is None or shutil.which("mkfs.btrfs") is None,
                       reason="needs root, fio and btrfs-progs (the local lab on both pools)"),
]

_MATRIX_IN_ATTACHMENT = """
  return [...document.querySelectorAll('iframe')]
    .map(f => f.contentDocument ? [...f.contentDocument.querySelectorAll('table')] : [])
    .map(tables => tables.length ? tables[tables.length - 1] : null).filter(t => t)
    .map(t => [...t.rows].map(r => [...r.cells].map(c => c.textContent.trim())))
    .find(rows => rows.length >= 2 && rows[0].includes('check')) || null;
"""
_EXPAND = """
  document.querySelectorAll('[data-testid=test-result-attachment-header]').forEach(h => h.querySelector('button').click());
"""


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("bakeoff")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CI": "1"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "tests"), "-k", SELECT, "-p", "no:xdist", "-p", "no:cacheprovider",
         "--rootdir", str(ROOT), "-c", str(ROOT / "pytest.ini"), "--lab", str(ROOT / "labs" / "local.yaml"),
         "--lab", str(ROOT / "labs" / "local-btrfs.yaml"), "--profile", "smoke", "--results-db", str(work / "results.sqlite"),
         "--alluredir", str(work / "allure-results"), "-rA"],
        cwd=work, env=env, capture_output=True, text=True, timeout=1700)
    (work / "session.log").write_text(done.stdout + done.stderr)
    assert done.returncode in (0, 1), done.stdout[-4000:] + done.stderr[-4000:]  # verdicts may fail; nothing may break
    run = run_of_results(work / "allure-results")
    return {"work": work, "run": run, "out": work / "exports" / run, "stdout": done.stdout,
            "wall_s": time.monotonic() - started}


def test_both_labs_ran_every_test_named_lab_first(session: dict[str, Any]) -> None:
    ran = [line.split(" ", 1)[1].split(" ")[0].split("tests/", 1)[-1] for line in session["stdout"].splitlines()
           if line.startswith(("PASSED ", "FAILED ", "ERROR ", "SKIPPED "))]  # ids relative to the cwd: from tests/ on
    local = sorted(t.replace("[local-btrfs", "[LAB").replace("[local", "[LAB") for t in ran if "[local-btrfs" not in t)
    btrfs = sorted(t.replace("[local-btrfs", "[LAB") for t in ran if "[local-btrfs" in t)
    assert local and local == btrfs, ran
    assert "test_baseline.py::test_baseline[local]" in ran and "test_baseline.py::test_baseline[local-btrfs]" in ran


def _stored(session: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(array, test without lab, check) -> the stored verdict row, read with plain SQL."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    with sqlite3.connect(session["work"] / "results.sqlite") as db:
        for lab, array, test_id, verdicts, invalid in db.execute(
                "SELECT lab, array_name, test_id, verdicts_json, measurement_invalid FROM run_points WHERE run_id = ?",
                [session["run"]]):
            node = test_id.rsplit("::", 1)[0].replace(f"[{lab}-", "[").replace(f"[{lab}]", "")
            for verdict in json.loads(verdicts):
                key = (array, node.split("::", 1)[-1], str(verdict["criterion"]))
                rows.setdefault(key, {**verdict, "invalid": invalid})
    return rows


def test_every_xlsx_cell_is_the_stored_verdict_row(session: dict[str, Any]) -> None:
    out = session["out"]
    assert (out / "bakeoff.csv").exists() and (out / "bakeoff.html").exists()
    sheet = openpyxl.load_workbook(out / "bakeoff.xlsx")["bakeoff"]
    header, *rows = [list(r) for r in sheet.iter_rows(values_only=True)]
    arrays = ["loop-array", "loop-array-btrfs"]
    assert all(a in header for a in arrays), header
    stored = _stored(session)
    checked = 0
    for values in rows:
        row = dict(zip(header, values, strict=True))
        if row["kind"] != "check":
            continue
        for array in arrays:
            truth = stored.get((array, str(row["test"]), str(row["check"])))
            if truth is None:
                assert row[f"{array} verdict"] == "missing", row
                continue
            want = "INVALID" if truth["invalid"] or truth.get("measurement_invalid") else \
                "PASS" if truth["passed"] is True else "FAIL"
            assert row[f"{array} verdict"] == want, row
            measured = truth["measured"]
            if isinstance(measured, (int, float)) and measured == measured:
                assert row[array] == round(float(measured), 4), row
            checked += 1
    assert checked >= 4, f"only {checked} cells checked"
    session["checked"] = checked


def test_the_local_arrays_latency_counters_stand_beside_the_hosts(session: dict[str, Any]) -> None:
    """Both labs' driver (local) has counters: every array-side row has a figure or says why not, never a blank,
    and where both figures are measured the host + fabric latency is the host-side mean minus the array-side."""
    sheet = openpyxl.load_workbook(session["out"] / "bakeoff.xlsx")["bakeoff"]
    header, *rows = [list(r) for r in sheet.iter_rows(values_only=True)]
    matrix = [dict(zip(header, values, strict=True)) for values in rows]
    side = [r for r in matrix if r["kind"] == "array vs host latency"]
    assert side, "no array-side latency rows: the local array's counters did not reach the store"
    measured = 0
    for row in side:
        for array in ("loop-array", "loop-array-btrfs"):
            assert row[array] not in (None, ""), row
        if row["check"].endswith("host + fabric latency"):
            host = next(r for r in matrix if r["test"] == row["test"] and r["check"] == row["check"].replace(
                "host + fabric latency", "mean latency"))
            array_side = next(r for r in side if r["test"] == row["test"] and r["check"] == row["check"].replace(
                "host + fabric latency", "array-side mean latency"))
            for array in ("loop-array", "loop-array-btrfs"):
                if row[f"{array} verdict"] == "measured":
                    assert row[array] == pytest.approx(host[array] - array_side[array], abs=2e-4), (row, host, array_side)
                    measured += 1
    assert measured >= 1, side


def test_iops_over_time_overlay_marks_the_snapshot(session: dict[str, Any]) -> None:
    page = (session["out"] / "bakeoff.html").read_text()
    assert "IOPS over time: test_snapshot_impact" in page
    events = [json.loads(p.read_text())["events"] for p in (session["out"] / "series").glob("*/*.json")]
    assert any(events), "no kept series names an event"


def test_the_allure_bakeoff_page_shows_the_matrix_in_chromium(session: dict[str, Any], tmp_path: Path) -> None:
    if shutil.which("allure") is None or missing_browser_commands():
        pytest.skip("needs the Allure 3 CLI, chromium and chromedriver (make setup)")
    results = session["work"] / "allure-results"
    index = build_report(results, tmp_path / "allure-report", tmp_path / "history.jsonl")
    report = index.parent
    bakeoff_id = _test_result_id(report, BAKEOFF_NAME)
    sheet = openpyxl.load_workbook(session["out"] / "bakeoff.xlsx")["bakeoff"]
    header = [str(c) for c in next(sheet.iter_rows(values_only=True))]
    with _serving(report) as base_url, headless_chromium(window=(1600, 1200)) as browser:
        browser.get(f"{base_url}/index.html#/{bakeoff_id}/attachments")
        wait_for(browser, "document.querySelectorAll('[data-testid=test-result-attachment-header]').length >= 1")
        browser.execute_script(_EXPAND)
        shown = wait_for(browser, _MATRIX_IN_ATTACHMENT.replace("return ", "", 1).strip().rstrip(";"), timeout_s=30)
        time.sleep(1)
        browser.save_screenshot(str(tmp_path / "bakeoff-allure.png"))
    assert shown[0] == header
    assert len(shown) == sheet.max_row
    shutil.copy(tmp_path / "bakeoff-allure.png", session["out"] / "bakeoff-allure.png")
    assert (tmp_path / "bakeoff-allure.png").stat().st_size > 10_000
    print(f"two-lab bake-off: run {session['run']}, session {session['wall_s']:.0f} s, {sheet.max_row - 1} matrix rows, "
          f"screenshot {session['out'] / 'bakeoff-allure.png'}")
