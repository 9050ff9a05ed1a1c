"""Sweep and tile tables (lists of dict rows) to CSV and XLSX, for the spreadsheet people.

Columns are the union of the rows' keys in first-seen order, so a sweep table
keeps its natural column order; nested values (dicts, lists) are written as JSON.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.utils import get_column_letter

Row = Mapping[str, Any]
_SHEET_TITLE_MAX = 31  # Excel's limit
_SHEET_FORBIDDEN = str.maketrans({c: "_" for c in "[]:*?/\\"})


def columns(rows: Sequence[Row]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(str(key), None)
    return list(seen)


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value, default=str, sort_keys=True)
    return str(value)


def to_csv(rows: Sequence[Row], path: Path | str) -> Path:
    """One table to a CSV file (header row first); returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    header = columns(rows)
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in rows:
            writer.writerow(["" if row.get(c) is None else _cell(row.get(c)) for c in header])
    return target


def sheet_title(name: str) -> str:
    title = name.translate(_SHEET_FORBIDDEN)[:_SHEET_TITLE_MAX]
    return title or "sheet"


def to_xlsx(tables: Mapping[str, Sequence[Row]], path: Path | str) -> Path:
    """Each table to its own sheet (e.g. {"sweep": rows, "tiles": rows}); returns the path."""
    if not tables:
        raise ValueError(f"{path}: no tables to export")
    titles = [sheet_title(n) for n in tables]
    if len(set(titles)) != len(titles):
        raise ValueError(f"{path}: sheet names collide after Excel's 31-character/charset rules: {titles}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    workbook = Workbook()
    workbook.remove(workbook.active)
    for title, rows in zip(titles, tables.values(), strict=True):
        sheet = workbook.create_sheet(title)
        header = columns(rows)
        sheet.append(header)
        for row in rows:
            sheet.append([_cell(row.get(c)) for c in header])
        sheet.freeze_panes = "A2"  # header stays visible while scrolling a 96-point sweep
        for index, name in enumerate(header, start=1):
            widest = max([len(name)] + [len(str(_cell(r.get(name)) or "")) for r in rows[:200]])
            sheet.column_dimensions[get_column_letter(index)].width = min(max(widest + 2, 8), 60)
    workbook.save(target)
    return target
