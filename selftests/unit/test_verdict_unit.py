"""Verdict.unit is a Unit (StrEnum): every place a verdict is written reads the same text a plain string wrote.

The references below are built from plain strings, as verdicts were before
units were typed; each output path (console line, verdicts JSONL, the Allure
verdict table, the results store, CSV) must be byte-identical to them.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import sqlite3
from pathlib import Path

import pytest

from iogate.judging import no_io_errors, steady_state
from iogate.report.table import table_csv
from iogate.results.export import to_csv
from iogate.results.store import ResultsStore, RunPoint
from iogate.verdict import Unit, Verdict
from plugins.verdicts import _append_rows, verdict_table_html

# The units the criteria and the regression verdict write, as the text reports have always shown.
TEXTS = {Unit.IOPS: "IOPS", Unit.MB_PER_S: "MB/s", Unit.MS: "ms", Unit.PCT: "%", Unit.PCT_POINTS: "% points",
         Unit.PCT_INTERVALS: "% intervals", Unit.ERRORS: "errors", Unit.ROUNDS: "rounds",
         Unit.BYTES: "bytes", Unit.CHECKS: "checks"}


def verdict(unit: Unit) -> Verdict:
    return Verdict("p99_latency_max", False, 61.2, 50.0, unit, window="event", intervals_considered=10, intervals_failing=2,
                   evidence=({"direction": "read", "latency_ms": 61.2},), detail="p99 read; over the bound: read")


def plain_row(unit_text: str) -> dict[str, object]:
    """Verdict.row() as it was with a str unit."""
    return {"criterion": "p99_latency_max", "passed": False, "measured": 61.2, "bound": 50.0, "unit": unit_text, "window": "event",
            "intervals_considered": 10, "intervals_failing": 2, "detail": "p99 read; over the bound: read",
            "description": "", "bound_source": ""}


def test_every_unit_is_its_text() -> None:
    assert set(TEXTS) == set(Unit)
    for unit, text in TEXTS.items():
        assert unit == text and str(unit) == text and f"{unit}" == text and json.dumps(unit) == json.dumps(text)


def test_a_unit_given_as_text_becomes_the_unit_and_an_unknown_one_is_refused() -> None:
    assert Verdict("x", True, 1, 1, "ms").unit is Unit.MS  # type: ignore[arg-type]
    assert dataclasses.replace(verdict(Unit.MS), window="measure").unit is Unit.MS
    with pytest.raises(ValueError, match=r"verdict x: unknown unit 'msec' \(units: IOPS, MB/s, ms, %"):
        Verdict("x", True, 1, 1, "msec")  # type: ignore[arg-type]


@pytest.mark.parametrize("unit", list(Unit), ids=[u.name for u in Unit])
def test_line_row_and_jsonl_are_byte_identical_to_plain_text(unit: Unit, tmp_path: Path) -> None:
    text = TEXTS[unit]
    v = verdict(unit)
    assert v.line() == (f"p99_latency_max FAIL: measured 61.2 {text}, bound 50 {text}, window event, 2/10 intervals failing: "
                        "p99 read; over the bound: read")
    assert v.row() == plain_row(text) and type(v.row()["unit"]) is str
    assert json.dumps(v.row()) == json.dumps(plain_row(text))
    jsonl = tmp_path / "verdicts.jsonl"
    _append_rows(str(jsonl), "tests/test_x.py::test_x", [v])
    reference = json.dumps({"test": "tests/test_x.py::test_x", **plain_row(text), "evidence": list(v.evidence),
                            "point": "", "host": "", "measurement_invalid": None}, default=str) + "\n"
    assert jsonl.read_text() == reference


@pytest.mark.parametrize("unit", list(Unit), ids=[u.name for u in Unit])
def test_allure_table_store_and_csv_hold_the_plain_text(unit: Unit, tmp_path: Path) -> None:
    text = TEXTS[unit]
    v = verdict(unit)
    assert f"<td>{text}</td>" in verdict_table_html([v])
    store = ResultsStore(tmp_path / "results.sqlite")
    store.add(RunPoint.from_verdicts(run_id="r1", lab="lab", array="array", test_id="t", params={}, metrics={}, verdicts=[v],
                                     started_at=1.0))
    with sqlite3.connect(tmp_path / "results.sqlite") as db:
        (stored,) = db.execute("SELECT verdicts_json FROM run_points").fetchone()
    assert stored == json.dumps([plain_row(text)], default=str)
    assert table_csv([v.row()]) == table_csv([plain_row(text)])
    written = to_csv([v.row()], tmp_path / "verdicts.csv").read_text(encoding="utf-8")
    assert written == to_csv([plain_row(text)], tmp_path / "plain.csv").read_text(encoding="utf-8")
    assert next(csv.DictReader(io.StringIO(written)))["unit"] == text


def test_the_criteria_write_units_of_the_enum() -> None:
    assert no_io_errors.evaluate([], no_io_errors.Params()).unit is Unit.ERRORS
    assert steady_state.evaluate([1.0, 1.0], steady_state.Params()).unit is Unit.ROUNDS
