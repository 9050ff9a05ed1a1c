"""The bake-off's array-side latency beside the host-side: crafted store rows, every expected figure worked by hand.

Three runs of one sweep point qd1 (read only), alpha the reference:
- alpha (driver local): host-side mean 0.5 ms; its counters: read 200 us -> array-side 0.2 ms,
  host + fabric 0.5 - 0.2 = 0.3 ms, 0.3 / 0.5 = 60.0 % of the host-side mean.
- beta (driver pure): host-side mean 0.8 ms; read 600 us -> 0.6 ms, 0.8 - 0.6 = 0.2 ms, 0.2 / 0.8 = 25.0 %.
- gamma (driver vast, no METRICS): "n/a: vast has no latency counters" in all three rows, figure and verdict.
Best (lower is better): array-side alpha (0.2 < 0.6); host + fabric ms and % beta (0.2 < 0.3, 25 < 60).
% of alpha: array-side beta 0.6 / 0.2 = 300.0; host + fabric ms 0.2 / 0.3 = 66.7; share 25 / 60 = 41.7.

stored_latency over two volumes: v1 read 100 us at 300 IOPS, v2 read 500 us at 100 IOPS ->
(100 * 300 + 500 * 100) / 400 = 200 us over 400 IOPS.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from iogate.arrays.base import ArraySample
from iogate.arrays.counters import ArrayCounters, VolumeCounters, stored_latency
from iogate.results.bakeoff import build_bakeoff
from iogate.results.bakeoff_cli import main as bakeoff_main
from iogate.results.bakeoff_output import flat_rows
from iogate.results.store import ResultsStore, RunContext, RunPoint
from iogate.verdict import Unit, Verdict

SWEEP = "tests/test_sweep.py::test_sweep[local]"
CONTEXT = RunContext(spec="criteria/poc.yaml", spec_sha256="aa11", profile="smoke", engine="fio", engine_version="fio-3.36")
PARAMS = {"protocols": ["iscsi"], "hosts": ["h1"], "jobs": 1, "rw": "rd100", "random_pct": 100, "bs": "4k", "iodepth": 1,
          "numjobs": 1, "runtime_s": 30, "ramp_s": 5}
N_A = "n/a: vast has no latency counters"


def _add(store: ResultsStore, run: str, array: str, host_mean_ms: float, latency: dict[str, Any] | None,
         invalid: str | None = None) -> None:
    metrics = {"read": {"iops": 10000.0, "bw_bytes_per_s": 4096e4, "mean_ns": host_mean_ms * 1e6, "p99_ns": 2e6}}
    store.add(RunPoint.from_verdicts(run_id=run, lab=f"lab-{array}", array=array, test_id=f"{SWEEP}::qd1", params=PARAMS,
                                     metrics=metrics, verdicts=[Verdict("iops_min", True, 10000.0, 900.0, Unit.IOPS)],
                                     started_at=1.0, measurement_invalid=invalid, array_latency=latency))
    store.set_run_context(run, CONTEXT)


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    filled = ResultsStore(tmp_path / "results.sqlite")
    _add(filled, "r-a", "alpha", 0.5, {"driver": "local", "volumes": 1, "read": {"latency_us": 200.0, "iops": 10000.0},
                                       "write": {"latency_us": None, "why": "the array reported no write latency"}})
    _add(filled, "r-b", "beta", 0.8, {"driver": "pure", "volumes": 1, "read": {"latency_us": 600.0, "iops": 10000.0}})
    _add(filled, "r-c", "gamma", 0.7, {"driver": "vast", "none": N_A})
    return filled


def _row(rows: list[dict[str, Any]], check: str) -> dict[str, Any]:
    (found,) = [r for r in rows if r["check"] == check]
    return found


def test_array_side_host_side_and_the_host_plus_fabric_share_per_array(store: ResultsStore) -> None:
    rows = flat_rows(build_bakeoff(store, ["r-a", "r-b", "r-c"]))
    checks = [r["check"] for r in rows if r["check"].startswith("qd1 read")]
    # The three rows follow the host-side mean latency row of their point and direction.
    assert checks == ["qd1 read IOPS", "qd1 read mean latency", "qd1 read array-side mean latency",
                      "qd1 read host + fabric latency", "qd1 read host + fabric share", "qd1 read p99 latency"]
    host = _row(rows, "qd1 read mean latency")
    assert [host[k] for k in ("alpha", "beta", "gamma")] == [0.5, 0.8, 0.7]
    array = _row(rows, "qd1 read array-side mean latency")
    assert [array[k] for k in ("alpha", "beta")] == [0.2, 0.6] and array["unit"] == "ms"
    assert array["beta % of alpha"] == 300.0 and array["best"] == "alpha"
    share_ms = _row(rows, "qd1 read host + fabric latency")
    assert [share_ms[k] for k in ("alpha", "beta")] == [pytest.approx(0.3), pytest.approx(0.2)]
    assert share_ms["beta % of alpha"] == 66.7 and share_ms["best"] == "beta"
    share_pct = _row(rows, "qd1 read host + fabric share")
    assert [share_pct[k] for k in ("alpha", "beta")] == [pytest.approx(60.0), pytest.approx(25.0)]
    assert share_pct["unit"] == "%" and share_pct["beta % of alpha"] == 41.7 and share_pct["best"] == "beta"
    for row in (array, share_ms, share_pct):  # never a blank that reads as 0
        assert row["gamma"] == N_A and row["gamma verdict"] == N_A and row["gamma % of alpha"] == ""
        assert row["alpha verdict"] == row["beta verdict"] == "measured"


def test_an_invalid_point_and_a_point_stored_without_the_record(store: ResultsStore) -> None:
    _add(store, "r-d", "delta", 1.0, {"driver": "ontap", "volumes": 1, "read": {"latency_us": 400.0, "iops": 1.0}},
         invalid="generator saturated: host h1 95 %")
    _add(store, "r-e", "epsilon", 1.0, None)  # schema 4 row: not recorded
    rows = flat_rows(build_bakeoff(store, ["r-a", "r-d", "r-e"]))
    array, share = _row(rows, "qd1 read array-side mean latency"), _row(rows, "qd1 read host + fabric latency")
    assert (array["delta"], array["delta verdict"], array["delta % of alpha"]) == (0.4, "INVALID", "")
    assert (share["delta"], share["delta verdict"]) == (0.6, "INVALID")
    assert (array["epsilon"], array["epsilon verdict"]) == ("no data", "no data")
    assert "not recorded" in array["epsilon detail"]
    assert array["best"] == ""  # one valid figure: no best


def test_runs_that_never_stored_counters_get_no_such_rows(tmp_path: Path) -> None:
    plain = ResultsStore(tmp_path / "plain.sqlite")
    _add(plain, "r-a", "alpha", 0.5, None)
    _add(plain, "r-b", "beta", 0.8, None)
    checks = [r["check"] for r in flat_rows(build_bakeoff(plain, ["r-a", "r-b"]))]
    assert not [c for c in checks if "array-side" in c or "host + fabric" in c], checks


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.rows[-1].append("")

    def handle_data(self, data: str) -> None:
        if self.rows and self.rows[-1]:
            self.rows[-1][-1] += data


def test_csv_and_html_carry_the_array_side_columns(store: ResultsStore, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert bakeoff_main(["--store", str(store.path), "--runs", "r-a", "r-b", "r-c", "--out", str(out)]) == 0
    with (out / "bakeoff.csv").open(newline="") as handle:
        from_csv = list(csv.DictReader(handle))
    parser = _Cells()
    parser.feed((out / "bakeoff.html").read_text())
    header_at = max(i for i, row in enumerate(parser.rows) if "check" in row and "gamma verdict" in row)
    header = parser.rows[header_at]
    from_html = [dict(zip(header, row, strict=True)) for row in parser.rows[header_at + 1:] if len(row) == len(header)]
    for rows in (from_csv, from_html):
        array, share = _row(rows, "qd1 read array-side mean latency"), _row(rows, "qd1 read host + fabric share")
        assert (array["alpha"], array["beta"], array["gamma"]) == ("0.2", "0.6", N_A)
        assert (share["alpha"], share["beta"], share["gamma verdict"]) == ("60.0", "25.0", N_A)


def _sample(at: datetime, latency_us: float, iops: float) -> ArraySample:
    return ArraySample(at, 1.0, read_iops=iops, write_iops=0.0, read_latency_us=latency_us, write_latency_us=None)


def test_stored_latency_weights_volumes_by_their_iops_and_refuses_a_partial_set() -> None:
    at = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
    v1 = VolumeCounters("v1", samples=(_sample(at, 100.0, 300.0),))
    v2 = VolumeCounters("v2", samples=(_sample(at, 500.0, 100.0),))
    counters = ArrayCounters("qd1", "pure", at - timedelta(seconds=1), at, (v1, v2), {"read": 400.0, "write": 0.0, "total": 400.0})
    stored = stored_latency("pure", counters)
    assert stored["read"] == {"latency_us": 200.0, "iops": 400.0}
    assert stored["write"]["latency_us"] is None and "no write latency" in stored["write"]["why"]
    broken = ArrayCounters("qd1", "pure", at - timedelta(seconds=1), at, (v1, VolumeCounters("v2", error="volume_metrics(v2): boom")),
                           {"read": 400.0, "write": 0.0, "total": 400.0})
    partial = stored_latency("pure", broken)
    assert partial["read"]["latency_us"] is None and "v2: error: volume_metrics(v2): boom" in partial["read"]["why"]
    assert stored_latency("vast", None) == {"driver": "vast", "none": N_A}
