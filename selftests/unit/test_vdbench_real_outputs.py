"""Every real vdbench output directory in ../shared/data/real-outputs/vdbench (written by other people,
5.04.01 to 5.04.07; SOURCES.md there names each repository and commit) is read right or refused by name.

Read right: every avg row of flatfile.html and of totals.html equals, to its printed precision, what
IOGate recomputes from the intervals (rate, MB/sec, resp), and histogram.html counts what the version
says it counts. Refused: only a directory committed mid-run, in one line saying it has no averages;
never a 5.04.07 one. The expected figures are read here with a plain split of vdbench's own files,
never through the parser under test. A fresh clone has no shared/: the module then skips.
"""

from __future__ import annotations

import functools
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from iogate.__main__ import main as iogate_main
from iogate.engines.vdbench.outdir import Output, parse_outdir
from iogate.errors import EngineError

REPO = Path(__file__).resolve().parents[2]
_CANDIDATES = [root / "shared" / "data" / "real-outputs" / "vdbench" for root in (REPO.parent, REPO.parent.parent)]
REAL = next((p for p in _CANDIDATES if p.is_dir()), _CANDIDATES[0])
DIRS = sorted(p.name for p in REAL.iterdir() if p.is_dir()) if REAL.is_dir() else []
pytestmark = pytest.mark.skipif(not DIRS, reason=f"real vdbench outputs not found at {REAL} (a fresh clone has no shared/)")

# Interval figures are printed with 4 decimals: a recomputed mean may differ from vdbench's unrounded one by that much.
FLAT_ROUNDING = 1e-4


def half_unit(printed: str) -> float:
    return 0.5 * 10 ** -len(printed.partition(".")[2])


def version_of(outdir: Path) -> str:
    match = re.search(r"Vdbench distribution: vdbench(\d{5})", (outdir / "logfile.html").read_text(errors="replace"))
    assert match, outdir
    return match.group(1)


def flat_avg_rows(outdir: Path) -> list[dict[str, str]]:
    """flatfile.html's avg rows as printed, by column name (rate/Rate, resp/Resp in lower case)."""
    header: list[str] | None = None
    rows = []
    for line in (outdir / "flatfile.html").read_text(errors="replace").splitlines():
        fields = line.split()
        if not fields or line.startswith(("*", "<")):
            continue
        if fields[0] == "tod":
            header = [{"Rate": "rate", "Resp": "resp"}.get(name, name) for name in fields]
        elif header and any(f.startswith("avg_") for f in fields):
            rows.append(dict(zip(header, fields, strict=True)))
    return rows


def totals_avg_rows(outdir: Path) -> list[dict[str, str]]:
    """totals.html's avg rows: rate, MB/s, resp by the positions vdbench's block or file-system table has."""
    text = (outdir / "totals.html").read_text(errors="replace")
    file_system = "ReqstdOps" in text
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[1].startswith("avg_"):
            if file_system:  # tod interval rate resp cpu sys read% read_rate read_resp write_rate write_resp mb_r mb_w mb_total
                rows.append({"rate": fields[2], "resp": fields[3], "mb": fields[13]})
            else:  # tod interval rate MB/s bytes read% resp ...
                rows.append({"rate": fields[2], "mb": fields[3], "resp": fields[6]})
    return rows


@functools.cache
def read_or_refusal(name: str) -> Output | EngineError:
    try:
        return parse_outdir(REAL / name)
    except EngineError as exc:
        return exc


@pytest.mark.parametrize("name", DIRS)
def test_read_right_or_refused_by_name(name: str) -> None:
    outdir = REAL / name
    got = read_or_refusal(name)
    if isinstance(got, EngineError):
        message = str(got)
        assert "\n" not in message, message
        assert version_of(outdir) != "50407", f"a 5.04.07 directory was refused: {message}"
        assert "committed mid-run" in message and "no averages" in message, message
        # Refused only if it truly ends mid-point: intervals after the last avg row, none of them averaged.
        lines = [line.split() for line in (outdir / "flatfile.html").read_text().splitlines() if line.strip()]
        assert not any(f.startswith("avg_") for f in lines[-1]), name
        return
    flat = flat_avg_rows(outdir)
    totals = totals_avg_rows(outdir)
    assert len(got.points) == len(flat) == len(totals), (name, len(got.points), len(flat), len(totals))
    if not got.points:
        # A run vdbench stopped on errors before its first average: the errors are the point's result.
        assert got.stopped and got.errors, name
        return
    for point, want, total in zip(got.points, flat, totals, strict=True):
        s = point.total.stats
        for key, value in (("rate", s.iops), ("MB/sec", s.mb_per_s), ("resp", s.resp_ms)):
            assert abs(value - float(want[key])) <= half_unit(want[key]) + FLAT_ROUNDING, (name, point.label, key, value, want[key])
        for key, value in (("rate", s.iops), ("mb", s.mb_per_s), ("resp", s.resp_ms)):
            assert abs(value - float(total[key])) <= half_unit(total[key]) + FLAT_ROUNDING, (name, point.label, key, value, total[key])


def test_no_5_04_07_directory_is_refused_and_every_refusal_is_mid_run() -> None:
    refused = {name: str(got) for name in DIRS if isinstance(got := read_or_refusal(name), EngineError)}
    assert all(version_of(REAL / name) != "50407" for name in refused), refused
    assert all("committed mid-run" in why for why in refused.values()), refused
    assert len(refused) < len(DIRS)


@pytest.mark.parametrize("name", DIRS)
def test_histograms_count_what_the_version_says(name: str) -> None:
    """5.04.06: every interval, warmup included; 5.04.01 and 5.04.07: the avg row's window X..Y
    (a file-system rate may be printed in halves: one I/O either way)."""
    got = read_or_refusal(name)
    if isinstance(got, EngineError):
        return
    for point in got.points:
        histogram = point.histograms.get("all")
        if histogram is None:
            assert point.total.intervals == 0 or got.file_system, (name, point.label)  # "No statistics generated"
            continue
        first, last = (1, len(point.flat.intervals)) if version_of(REAL / name) == "50406" else point.flat.avg_range_or_fail()
        counted = sum(row.need("rate") * got.interval_s for row in point.flat.intervals[first - 1:last])
        assert abs(histogram.total - counted) <= 1, (name, point.label, histogram.total, counted)


def test_times_are_placed_in_the_zone_summary_html_gives() -> None:
    """Hand-read first rows: 5.04.07 CST (+8 from summary.html's UTC time), 5.04.07 ICT, 5.04.01 MDT without timestamp."""
    expected = {
        "tiger7z_50407_macm1_sd": datetime(2023, 5, 10, 13, 16, 9, 42000, tzinfo=UTC),  # 21:16:09.042 CST
        "masakioui-vdb_50407_sd_7hosts_3wd": datetime(2019, 3, 8, 11, 11, 39, 68000, tzinfo=UTC),  # 18:11:39.068 ICT
        "vdbconvert_50401_sd": datetime(2016, 4, 8, 19, 49, 1, 260000, tzinfo=UTC),  # 13:49:01.260 MDT
    }
    for name, when in expected.items():
        if name not in DIRS:
            pytest.skip(f"{name} not in {REAL}")
        got = parse_outdir(REAL / name)
        assert got.points[0].flat.intervals[0].t_ms == round(when.timestamp() * 1000), name


@pytest.mark.parametrize("name", DIRS)
def test_iogate_parse_json_gives_one_record_per_run_point(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    got = read_or_refusal(name)
    rc = iogate_main(["parse", str(REAL / name), "--json"])
    out = capsys.readouterr()
    if isinstance(got, EngineError):
        assert rc == 1 and "committed mid-run" in out.err and out.err.count("\n") == 1
        return
    records = json.loads(out.out)
    assert rc == (1 if got.errors else 0)
    assert [r["rd"] for r in records] == [p.label for p in got.points] + list(got.stopped)
    for record, want in zip(records, flat_avg_rows(REAL / name), strict=False):
        assert abs(record["iops"] - float(want["rate"])) <= half_unit(want["rate"]) + FLAT_ROUNDING
        for direction in ("read", "write"):
            if record[f"{direction}_iops"] == 0:
                assert record[f"{direction}_resp_ms"] is None  # absent, not 0.0
