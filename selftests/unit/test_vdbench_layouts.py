"""vdbench 5.04.01-5.04.07 layout quirks, one test each, on small directories written here (a fresh clone
has no real outputs): expected values worked by hand in the comments, never computed by the parser."""

from __future__ import annotations

import json
import re
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from iogate.__main__ import main as iogate_main
from iogate.engines.vdbench import errorlog
from iogate.engines.vdbench.buckets import parse_histograms
from iogate.engines.vdbench.clock import Clock, read_clock
from iogate.engines.vdbench.outdir import parse_outdir, to_run_result
from iogate.engines.vdbench.reports import block_layout, block_stats
from iogate.engines.vdbench.source import Line
from iogate.errors import EngineError
from iogate.metrics.types import Dir

CREATED_0407 = "Vdbench summary report, created 21:16:03 May 10 2023 CST (13:16:03 May 10 2023 UTC)"
BLOCK_0407 = ("tod timestamp Run Interval reqrate rate MB/sec bytes/io read% resp read_resp write_resp resp_max "
              "read_max write_max resp_std")
PREAMBLE = "Error log. If there are no error messages beyond this line then there were no Data Validation or I/O errors."


def starting(rd: str, loops: str = "None") -> str:
    return f"<a name=\"_1\"></a><i><b>21:16:10.007 Starting RD={rd}; I/O rate: 100; elapsed=5; For loops: {loops}</b></i>"


def buckets(counts: tuple[int, int, int], title: str = "Reads and writes:") -> str:
    """Three buckets: <1 ms, 1-2 ms, 2 ms and more."""
    total = sum(counts)
    rows, cum = [], 0
    for (low, high), n in zip((("0.000", "1.000"), ("1.000", "2.000"), ("2.000", "max")), counts, strict=True):
        cum += n
        rows.append(f"{low:>9} < {high:>11} {n:>13} {100 * n / total:8.4f} {100 * cum / total:8.4f}")
    return "\n".join([title, "  min(ms) <     max(ms)         count       %%    cum%%", "", *rows, ""])


def make_outdir(tmp_path: Path, *, version: str = "50407", created: str = CREATED_0407, rds: tuple[str, ...] = ("rd1",),
                started: bool = True, flat: list[str], histograms: dict[str, str] | None = None,
                errors: tuple[str, ...] = (), summary_extra: str = "") -> Path:
    out = tmp_path / f"out{version}"
    out.mkdir()
    links = "\n".join(f'Link to Run Definitions:         <A HREF="#_{i}">{rd} For loops: None</A>' for i, rd in enumerate(rds))
    starts = "\n".join(starting(rd) for rd in rds) if started else ""
    (out / "summary.html").write_text(f"<title>Vdbench output/summary.html</title><pre>\n{created}\n\n{links}\n\n"
                                      f"{summary_extra}{starts}\n")
    (out / "logfile.html").write_text(f"<pre>\n13:48:08.553 Vdbench distribution: vdbench{version}\n")
    (out / "flatfile.html").write_text("<title>Vdbench output/flatfile.html</title><pre>\n* comment\n" + "\n".join(flat) + "\n")
    hist = "".join(f"{starting(rd)}\n\n{(histograms or {}).get(rd, 'No statistics generated for this run.')}\n"
                   for rd in rds) if started else ""
    (out / "histogram.html").write_text(f"<title>Vdbench output/histogram.html</title><pre>\nTotal response time histogram.\n{hist}")
    (out / "errorlog.html").write_text("<pre>\n" + PREAMBLE + "\n\n" + "\n".join(errors) + "\n")
    (out / "parmfile.html").write_text("<pre>\n#rd=old,wd=wd1,interval=5\nrd=rd1,wd=wd1,elapsed=3,interval=1\n")
    return out


# 5.04.07 block flatfile: SD_format's one interval and its all-zero avg_2-1, then rd1 over 3 intervals.
# rd1: interval 1 rate 100 (read% 50), 2: rate 200 read% 25, 3: rate 300 read% 50.
FLAT_0407 = [
    BLOCK_0407,
    "21:16:09.042 05/10/2023-21:16:09-CST SD_format 1 9999988 320 40 131072 0 0.0549 0 0.0549 0.537 0 0.537 0.0595",
    "21:16:09.047 05/10/2023-21:16:09-CST SD_format avg_2-1 9999988 0 0 0 0 0 0 0 0 0 0 0",
    "21:16:11.020 05/10/2023-21:16:11-CST rd1 1 100 100 0.1 1024 50 1 0.5 1.5 2 1 2 0.1",
    "21:16:12.015 05/10/2023-21:16:12-CST rd1 2 100 200 0.2 1024 25 2 1 2.3333 3 1 3 0.1",
    "21:16:13.015 05/10/2023-21:16:13-CST rd1 3 100 300 0.3 1024 50 3 2 4 5 2 5 0.1",
    "21:16:13.033 05/10/2023-21:16:13-CST rd1 avg_2-3 100 250 0.25 1024 40 2.6 1.75 3.1667 5 2 5 0.1",
]


def test_5_04_07_averages_x_to_y_and_one_interval_runs_average_nothing(tmp_path: Path) -> None:
    out = make_outdir(tmp_path, rds=("SD_format", "rd1"), flat=FLAT_0407, histograms={"rd1": buckets((100, 300, 100))})
    output = parse_outdir(out)
    assert output.version.name == "5.04.07"
    sd_format, rd1 = output.points
    # avg_2-1: no interval averaged, vdbench's zeros; nothing judged from it.
    assert (sd_format.total.first, sd_format.total.last, sd_format.total.intervals) == (2, 1, 0)
    assert sd_format.total.stats.iops == 0.0 and sd_format.histograms == {}
    with pytest.raises(EngineError, match="averaged no interval"):
        to_run_result(output, sd_format, "h1")
    # avg_2-3 = intervals 2..3: (200+300)/2 = 250 IOPS; resp (200*2 + 300*3)/500 = 2.6;
    # reads 50 @ 1.0 + 150 @ 2.0 -> 350/200 = 1.75; writes 150 @ 2.3333 + 150 @ 4.0 -> 949.995/300 = 3.16665.
    s = rd1.total.stats
    assert (rd1.total.first, rd1.total.last) == (2, 3)
    assert (s.iops, s.mb_per_s, s.read_iops, s.write_iops) == pytest.approx((250.0, 0.25, 100.0, 150.0))
    assert (s.resp_ms, s.read_resp_ms, s.write_resp_ms) == pytest.approx((2.6, 1.75, 3.16665))
    assert s.resp_max_ms == 5.0


def test_5_04_07_histograms_count_since_warmup(tmp_path: Path) -> None:
    """500 I/Os = intervals 2 and 3 (200 + 300), the judged window: reads 50 + 150 = 200, writes 150 + 150 = 300."""
    sections = "\n".join((buckets((100, 300, 100)), buckets((100, 100, 0), "Reads:"), buckets((0, 200, 100), "Writes:")))
    out = make_outdir(tmp_path, rds=("SD_format", "rd1"), flat=FLAT_0407, histograms={"rd1": sections})
    output = parse_outdir(out)
    assert output.points[1].histograms["all"].total == 500
    result = to_run_result(output, output.points[1], "h1")
    histogram = result.jobs[0][Dir.READ].clat.histogram
    assert histogram is not None and histogram.total == 200
    assert "intervals 2-3, the judged window" in histogram.covers
    # Judged from interval 3 only: the histogram still counts 2-3, since warmup, and says so.
    later = to_run_result(output, output.points[1], "h1", first_interval=3).jobs[0][Dir.READ].clat.histogram
    assert later is not None and "intervals 2-3, since warmup (vdbench 5.04.07) (the judged window is intervals 3-3)" in later.covers


def test_vdbench_parse_reports_a_direction_without_io_as_absent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flat = [BLOCK_0407,
            "21:16:11.020 05/10/2023-21:16:11-CST rd1 1 100 100 0.1 4096 100 0.5 0.5 0 1 1 0 0.1",
            "21:16:12.020 05/10/2023-21:16:12-CST rd1 2 100 300 0.3 4096 100 0.7 0.7 0 1 1 0 0.1",
            "21:16:12.030 05/10/2023-21:16:12-CST rd1 avg_2-2 100 300 0.3 4096 100 0.7 0.7 0 1 1 0 0.1"]
    out = make_outdir(tmp_path, flat=flat, histograms={"rd1": buckets((300, 0, 0), "Only reads done for this workload:")})
    assert iogate_main(["vdbench-parse", str(out), "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert record["read_resp_ms"] == 0.7 and record["resp_ms"] == 0.7
    assert record["write_resp_ms"] is None  # a read-only point has no write response (was 0.0)
    assert record["percentiles"]["p50_ms"] == 1.0  # all 300 in the first bucket: its upper edge


def test_5_04_06_avg_2_1_averages_interval_1(tmp_path: Path) -> None:
    """5.04.06 prints interval 1's figures in a one-interval point's avg_2-1 (its race, window.py): 1280 IOPS."""
    flat = ["tod timestamp Run Interval reqrate rate MB/sec Read_rate Read_resp Write_rate Write_resp MB_read MB_write resp",
            "22:33:43.249 11/21/2026-22:33:43-UTC fmt 1 9999988 1280 160 0 0 1280 0.3559 0 160 0.3559",
            "22:33:43.511 11/21/2026-22:33:43-UTC fmt avg_2-1 9999988 1280 160 0 0 1280 0.3559 0 160 0.3559"]
    out = make_outdir(tmp_path, version="50406", created="Vdbench summary report, created 22:33:40 Nov 21 2026 UTC",
                      rds=("fmt",), flat=flat, histograms={"fmt": buckets((1280, 0, 0), "Total of all requested operations:")})
    point = parse_outdir(out).points[0]
    assert (point.total.first, point.total.last, point.total.stats.iops) == (1, 1, 1280.0)
    assert point.total.stats.write_resp_ms == pytest.approx(0.3559)


def test_5_04_07_file_system_flatfile_rate_columns_and_since_warmup_section(tmp_path: Path) -> None:
    """Rate/Resp/Reqrate (5.04.07) read as rate/resp/reqrate; reads 10 + writes 30 per interval = Rate 40."""
    header = ("tod timestamp Run Interval Xfersize Threads Reqrate Rate Rate_std Rate_max Resp Resp_std Resp_max MB/sec "
              "MB_read MB_write Read_rate Read_resp Write_rate Write_resp")
    flat = [header,
            "15:14:56.122 03/08/2019-15:14:56-ICT rd1 1 4096 n/a 9999988 40 0 0 1 0 2 0.16 0.04 0.12 10 0.5 30 1.1667",
            "15:14:57.122 03/08/2019-15:14:57-ICT rd1 2 4096 n/a 9999988 80 0 0 2 0 4 0.32 0.08 0.24 20 1 60 2.3333",
            "15:14:57.200 03/08/2019-15:14:57-ICT rd1 avg_2-2 4096 n/a 9999988 80 0 80 2 0 4 0.32 0.08 0.24 20 1 60 2.3333"]
    created = "Vdbench summary report, created 15:14:52 Mar 08 2019 ICT (08:14:52 Mar 08 2019 UTC)"
    fs_header = "Mar 08, 2019 ..Interval.. .ReqstdOps... ...cpu%...  read ....read..... ....write....\n"
    out = make_outdir(tmp_path, created=created, flat=flat, summary_extra=fs_header,
                      histograms={"rd1": buckets((20, 60, 0), "Total of all requested operations since warmup:")})
    output = parse_outdir(out)
    assert output.file_system
    s = output.points[0].total.stats
    assert (s.iops, s.read_iops, s.write_iops, s.resp_ms, s.reqrate) == pytest.approx((80.0, 20.0, 60.0, 2.0, 9999988.0))
    assert (s.mb_read_per_s, s.mb_write_per_s) == pytest.approx((0.08, 0.24))
    assert output.points[0].histograms["all"].total == 80  # interval 2 only: 20 + 60
    # ICT is +7 (summary.html: 15:14:52 local = 08:14:52 UTC): 15:14:56.122 ICT = 08:14:56.122 UTC.
    assert output.points[0].flat.intervals[0].t_ms == round(datetime(2019, 3, 8, 8, 14, 56, 122000, tzinfo=UTC).timestamp() * 1000)


def test_report_layouts_by_their_column_header() -> None:
    line = Line(Path("sd1.html"), 7, "")
    # 5.04.07 Linux: read max and write max, CPU: 15 fields.
    linux = block_layout("rate  1024**2     i/o    pct     time     resp     resp      max      max   stddev  depth sys+u   sys")
    row = ("18:11:39.061           1    27913.0   204.59    7685   0.00    0.328    0.000    0.328     0.00     6.63    0.179"
           "    9.2   1.9   0.3")
    s = block_stats(Line(line.path, 8, row), linux)
    assert linux.fields == 15
    assert (s.iops, s.mb_per_s, s.read_iops, s.resp_ms, s.resp_max_ms) == (27913.0, 204.59, 0.0, 0.328, 6.63)
    assert (s.cpu_user_pct, s.cpu_kernel_pct) == pytest.approx((1.6, 0.3))  # sys+u 1.9 - sys 0.3
    # 5.04.07 macOS: no CPU columns, 13 fields; 54.02 % of 87 reads = 46.9974.
    mac = block_layout("rate  1024**2     i/o    pct     time     resp     resp      max      max   stddev  depth")
    row = "21:16:11.016           1       87.0     0.08    1024  54.02    0.030    0.017    0.045     0.09     0.16    0.028    0.0"
    s = block_stats(Line(line.path, 9, row), mac)
    assert mac.fields == 13 and s.cpu_user_pct is None and s.cpu_kernel_pct is None
    assert (s.read_iops, s.resp_max_ms) == pytest.approx((46.9974, 0.16))
    # 5.04.01-5.04.06: one resp max, 14 fields; a 15-field row under it is refused naming the counts.
    old = block_layout("rate  1024**2     i/o    pct     time     resp     resp      max   stddev depth sys+u   sys")
    assert old.fields == 14
    with pytest.raises(EngineError, match="sd1.html:10: 15 fields where this report's column header names 14"):
        block_stats(Line(line.path, 10, "18:11:39.061 1 27913.0 204.59 7685 0.00 0.328 0.000 0.328 0.00 6.63 0.179 9.2 1.9 0.3"), old)


def test_summary_clock_places_any_zone_summary_html_names(tmp_path: Path) -> None:
    summary = tmp_path / "summary.html"
    summary.write_text("<pre>\nVdbench summary report, created 21:16:03 5月 10 2023 CST (13:16:03 5月 10 2023 UTC)\n")
    clock = read_clock(summary)
    assert (clock.zone, clock.offset_s, clock.created) == ("CST", 8 * 3600, datetime(2023, 5, 10, 21, 16, 3))
    # Across the date line: 09:00 on the 2nd local is 20:00 on the 1st UTC: +13 h; -10 h by the dates, not +14 h.
    summary.write_text("Vdbench summary report, created 09:00:00 Jan 02 2020 NZDT (20:00:00 Jan 01 2020 UTC)\n")
    assert read_clock(summary).offset_s == 13 * 3600
    summary.write_text("Vdbench summary report, created 10:00:00 Jan 01 2020 HST (20:00:00 Jan 01 2020 UTC)\n")
    assert read_clock(summary).offset_s == -10 * 3600
    row = Line(summary, 1, "row")
    # 5.04.01 prints no UTC time: MDT names one offset (-6 h); CST names several and is refused.
    assert Clock("MDT").epoch_ms(row, datetime(2016, 4, 8, 13, 49, 1), None) == \
        round(datetime(2016, 4, 8, 19, 49, 1, tzinfo=UTC).timestamp() * 1000)
    if "CST" not in time.tzname:
        with pytest.raises(EngineError, match="time zone 'CST' cannot be placed"):
            Clock("CST").epoch_ms(row, datetime(2021, 4, 20, 16, 3, 41), "CST")


def test_5_04_01_flatfile_without_timestamp_takes_dates_from_summary_across_midnight(tmp_path: Path) -> None:
    flat = ["tod Run Interval reqrate rate MB/sec bytes/io read% resp read_resp write_resp resp_max",
            "23:59:59.500 rd1 1 50 30 0.1172 4096 80 3.6405 4.4203 0.5215 22.083",
            "00:00:00.500 rd1 2 50 46 0.1797 4096 50 7.4103 9.1043 5.7163 50.09",
            "00:00:00.600 rd1 avg_2-2 50 46 0.1797 4096 50 7.4103 9.1043 5.7163 50.09"]
    out = make_outdir(tmp_path, version="50401", created="Vdbench summary report, created 23:59:58 Apr 08 2016 MDT", flat=flat,
                      histograms={"rd1": buckets((46, 0, 0))})
    (out / "errorlog.html").write_text("<pre>\nError log. If there is no data beyond this line then there were no "
                                       "Data validation or I/O errors.\n\n")
    output = parse_outdir(out)
    first, second = output.points[0].flat.intervals
    # Apr 08 23:59:59.500 MDT (-6 h) = Apr 09 05:59:59.500 UTC; the next row is past midnight: Apr 09.
    assert first.t_ms == round(datetime(2016, 4, 9, 5, 59, 59, 500000, tzinfo=UTC).timestamp() * 1000)
    assert second.t_ms - first.t_ms == 1000
    assert output.errors == () and output.version.name == "5.04.01"


def test_run_stopped_on_errors_is_reported_as_its_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty flatfile beside errorlog entries: the planned point is there, with the errors as its result."""
    errors = ("16:12:20.605 n4-0: 16:12:20.786 op: read   lun: /data/f1 lba: 1150976 xfer: 2457 errno: EINVAL: 'Invalid argument'",
              "Error:         EINVAL: 'Invalid argument'")
    out = make_outdir(tmp_path, started=False, flat=[], errors=errors)
    output = parse_outdir(out)
    assert output.points == () and output.stopped == ("rd1",) and len(output.errors) == 2
    assert iogate_main(["parse", str(out)]) == 1
    text = capsys.readouterr().out
    assert "rd rd1: no measurements; errors: 2, first: 16:12:20.605 n4-0" in text and "EINVAL" in text
    assert iogate_main(["vdbench-parse", str(out), "--json"]) == 1
    (record,) = json.loads(capsys.readouterr().out)
    assert record["intervals"] == 0 and record["iops"] is None and record["write_resp_ms"] is None


def test_mid_run_directory_is_refused_for_having_no_averages_whatever_its_zone(tmp_path: Path) -> None:
    """5.04.06 CST without a UTC time could not be placed, but the refusal is the true reason: no averages."""
    flat = ["tod timestamp Run Interval reqrate rate MB/sec bytes/io read% resp read_resp write_resp resp_max",
            "16:28:23.005 04/20/2021-16:28:23-CST rd1 1 50 58.6 0.1 4096 0 2.1 0 2.1 5",
            "16:28:28.005 04/20/2021-16:28:28-CST rd1 2 50 72.8 0.1 4096 0 2.1 0 2.1 5"]
    out = make_outdir(tmp_path, version="50406", created="Vdbench summary report, created 16:02:41 Apr 20 2021 CST", flat=flat)
    with pytest.raises(EngineError, match=r"committed mid-run: run point 'rd1' has 2 intervals and no averages") as caught:
        parse_outdir(out)
    assert "\n" not in str(caught.value)


def test_unsupported_version_is_refused_by_name(tmp_path: Path) -> None:
    out = make_outdir(tmp_path, version="50300", rds=("SD_format", "rd1"), flat=FLAT_0407,
                      histograms={"rd1": buckets((100, 300, 100))})
    with pytest.raises(EngineError, match=r"vdbench 5\.03\.00 is not a version IOGate reads \(supported: 5\.04\.01 to 5\.04\.07\)"):
        parse_outdir(out)


def test_5_04_01_errorlog_preamble(tmp_path: Path) -> None:
    log = tmp_path / "errorlog.html"
    log.write_text("<pre>\nError log. If there is no data beyond this line then there were no Data validation or I/O errors.\n\n")
    assert errorlog.error_lines(log) == []
    log.write_text(log.read_text() + "13:49:01.000 hd1-0: read error on /dev/sdb\n")
    assert [e.number for e in errorlog.error_lines(log)] == [4]


def test_since_warmup_histogram_section_is_the_total(tmp_path: Path) -> None:
    path = tmp_path / "histogram.html"
    path.write_text(f"<pre>\n{starting('rd1')}\n\n{buckets((1, 2, 1), 'Total of all requested operations since warmup:')}")
    (point,) = parse_histograms(path)
    assert point.sections["all"].counts == (1, 2, 1) and point.sections["all"].percentile_ms(50) == 2.0  # rank 2 of 4


def test_iogate_parse_fio_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A read-only fio job: 1000 IOPS, 4096000 B/s = 4.096 MB/s, clat mean 250000 ns = 0.25 ms; no write response."""
    idle = {"total_ios": 0, "io_bytes": 0, "runtime": 0, "iops": 0.0, "bw_bytes": 0, "bw": 0,
            "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
            "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}}
    read = {**idle, "total_ios": 10000, "io_bytes": 40960000, "runtime": 10000, "iops": 1000.0, "bw_bytes": 4096000, "bw": 4000,
            "clat_ns": {"min": 100000, "max": 900000, "mean": 250000.0, "stddev": 1000.0, "N": 10000},
            "lat_ns": {"min": 100000, "max": 900000, "mean": 260000.0, "stddev": 1000.0, "N": 10000}}
    data = {"fio version": "fio-3.33", "jobs": [{"jobname": "r", "groupid": 0, "error": 0, "read": read, "write": idle,
                                                 "trim": idle, "usr_cpu": 1.0, "sys_cpu": 2.0}]}
    path = tmp_path / "fio.json"
    path.write_text("fio: some warning\n" + json.dumps(data))
    assert iogate_main(["parse", str(path), "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert (record["engine"], record["job"], record["iops"], record["mb_per_s"]) == ("fio", "r", 1000.0, 4.096)
    assert (record["read_resp_ms"], record["resp_ms"], record["write_resp_ms"]) == (0.25, 0.25, None)
    assert record["errors"] == [] and record["mb_bytes"] == 1_000_000


SAMPLE_TILE = next((root / "shared" / "samples" / "vdbench" / "run3_vm_tile" for root in
                    (Path(__file__).resolve().parents[3], Path(__file__).resolve().parents[4])
                    if (root / "shared" / "samples" / "vdbench" / "run3_vm_tile").is_dir()), None)


@pytest.mark.skipif(SAMPLE_TILE is None, reason="vdbench samples not found (a fresh clone has no shared/)")
def test_a_workload_report_without_rows_is_not_the_points_but_a_job_of_it_must_have_rows(tmp_path: Path) -> None:
    assert SAMPLE_TILE is not None
    out = tmp_path / "tile"
    shutil.copytree(SAMPLE_TILE, out)
    web = out / "web.html"
    web.chmod(0o644)
    web.write_text("\n".join(line for line in web.read_text().splitlines() if not re.match(r"^\d\d:\d\d:\d\d\.\d{3}\s", line)))
    output = parse_outdir(out)
    assert set(output.points[0].reports["wd"]) == {"sql"}
    with pytest.raises(EngineError, match=r"workload report\(s\) \['web'\] hold no intervals"):
        to_run_result(output, output.points[0], "h1", {"sql": "sql", "web": "web"})
