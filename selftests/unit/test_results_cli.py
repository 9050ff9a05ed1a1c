"""`python -m iogate export`: the PoC spreadsheet from the results store."""

from pathlib import Path

import openpyxl
import pytest

from iogate.results.cli import main, point_row
from iogate.results.store import ResultsStore, RunPoint, StoreError
from iogate.verdict import Unit, Verdict


def test_export_splits_families_and_shows_verdicts(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "r.sqlite")
    metrics = {"read": {"iops": 1000.0, "bw_bytes_per_s": 4096000.0, "mean_ns": 500000.0, "p99_ns": 2000000.0}}
    failed = Verdict("latency_bound", False, 2.0, 1.0, Unit.MS)
    for test in ("tests/test_sweep.py::test_sweep[local-rd70-4k-t8]", "tests/test_vm_tiles.py::test_tiles[local-1]"):
        store.add(RunPoint.from_verdicts(run_id="r1", lab="local", array="a", test_id=f"{test}::p", params={"bs": "4k"},
                                         metrics=metrics, verdicts=[failed]))
    assert main(["--store", str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "out")]) == 0
    sweep_csv = (tmp_path / "out" / "r1" / "sweep.csv").read_text()
    assert "read.iops" in sweep_csv and "1000.0" in sweep_csv and "FAIL" in sweep_csv
    assert "not passed: failed latency_bound" in sweep_csv
    book = openpyxl.load_workbook(tmp_path / "out" / "r1" / "r1.xlsx")
    assert book.sheetnames == ["sweep", "vm_tiles"]


def test_export_of_missing_store_names_it(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="nothing.sqlite does not exist"):
        main(["--store", str(tmp_path / "nothing.sqlite")])


def test_a_latency_without_samples_exports_as_no_data_not_zero() -> None:
    point = RunPoint(run_id="r1", lab="l", array="a", test_id="tests/test_baseline.py::t::p", params={},
                     metrics={"read": {"iops": 1000.0, "bw_bytes_per_s": 4096000.0, "mean_ns": None, "p99_ns": None}})
    row = point_row(point)
    assert row["read.p99_ms"] == "no data" and row["read.mean_ms"] == "no data" and row["read.iops"] == 1000.0


def test_the_export_says_why_a_point_did_not_pass() -> None:
    passing = Verdict("iops_min", True, 1200.0, 1000.0, Unit.IOPS)
    good = RunPoint.from_verdicts(run_id="r1", lab="l", array="a", test_id="tests/test_baseline.py::t::p", params={},
                                  metrics={}, verdicts=[passing])
    busy = RunPoint.from_verdicts(run_id="r1", lab="l", array="a", test_id="tests/test_baseline.py::t::p", params={},
                                  metrics={}, verdicts=[passing], measurement_invalid="generator saturated: host h1 95 %")
    assert point_row(good)["outcome"] == "passed"
    assert point_row(busy)["outcome"] == "not passed: measurement invalid: generator saturated: host h1 95 %"
