"""Sweep and tile tables to CSV and XLSX: read back with the csv module and openpyxl."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from openpyxl import load_workbook

from iogate.results.export import sheet_title, to_csv, to_xlsx

SWEEP = [
    {"protocol": "iscsi-1500", "bs": "4k", "read_pct": 70, "threads": 1, "iops": 12000.5, "p99_ms": 0.42},
    {"protocol": "iscsi-1500", "bs": "4k", "read_pct": 70, "threads": 2, "iops": 23000.0, "p99_ms": 0.51, "knee": True},
]
TILES = [{"tile": 1, "vm": "sql-light-01", "target_iops": 3, "actual_iops": 3.02, "verdict": {"passed": True}}]


def test_csv_has_the_union_of_columns_in_first_seen_order(tmp_path: Path) -> None:
    path = to_csv(SWEEP, tmp_path / "out" / "sweep.csv")
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["protocol", "bs", "read_pct", "threads", "iops", "p99_ms", "knee"]
    assert rows[1] == ["iscsi-1500", "4k", "70", "1", "12000.5", "0.42", ""]
    assert rows[2][-1] == "True"


def test_xlsx_has_one_sheet_per_table_with_typed_cells(tmp_path: Path) -> None:
    path = to_xlsx({"sweep": SWEEP, "tiles": TILES}, tmp_path / "run.xlsx")
    workbook = load_workbook(path)
    assert workbook.sheetnames == ["sweep", "tiles"]
    sweep = workbook["sweep"]
    assert [c.value for c in sweep[1]] == ["protocol", "bs", "read_pct", "threads", "iops", "p99_ms", "knee"]
    assert sweep["E2"].value == 12000.5 and isinstance(sweep["D3"].value, int)
    assert sweep.freeze_panes == "A2"
    tiles = workbook["tiles"]
    assert tiles["E2"].value == '{"passed": true}', "nested values are written as JSON text"


def test_sheet_names_obey_excel_rules(tmp_path: Path) -> None:
    assert sheet_title("sweep: iscsi/nvme [64 vols]") == "sweep_ iscsi_nvme _64 vols_"
    assert len(sheet_title("x" * 40)) == 31
    with pytest.raises(ValueError, match="collide"):
        to_xlsx({"a" * 31 + "1": SWEEP, "a" * 31 + "2": SWEEP}, tmp_path / "x.xlsx")
    with pytest.raises(ValueError, match="no tables"):
        to_xlsx({}, tmp_path / "y.xlsx")
