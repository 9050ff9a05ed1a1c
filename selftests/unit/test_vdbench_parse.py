"""The vdbench output parser against vdbench's own numbers, and every fault it must refuse.

Expected values come from vdbench's totals.html (its avg rows as the console
prints them), read here with a plain split, never through the parser.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from iogate.__main__ import main as iogate_main
from iogate.engines.vdbench import errorlog
from iogate.engines.vdbench.buckets import BucketHistogram, parse_histograms
from iogate.engines.vdbench.outdir import parse_outdir, to_run_result
from iogate.errors import EngineError
from iogate.judging import no_io_errors
from iogate.metrics.nodata import NoData
from iogate.metrics.resample import judged_series
from iogate.metrics.types import Dir

SAMPLES = Path(__file__).resolve().parents[2].parent.parent / "shared" / "samples" / "vdbench"
if not SAMPLES.is_dir():
    SAMPLES = Path("/work/shared/samples/vdbench")
RUNS = sorted(p.name for p in SAMPLES.glob("run*")) if SAMPLES.is_dir() else []
pytestmark = pytest.mark.skipif(not RUNS, reason=f"vdbench sample outputs not found at {SAMPLES} (a fresh clone has no shared/)")


def totals_rows(run_dir: Path) -> list[dict[str, str]]:
    """vdbench's avg rows from totals.html: rate, MB/s and response times as printed."""
    rows = []
    file_system = ".Interval." in (run_dir / "totals.html").read_text()
    for line in (run_dir / "totals.html").read_text().splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[1].startswith("avg_"):
            if file_system:  # tod interval rate resp cpu sys read% read_rate read_resp write_rate write_resp mb_r mb_w mb_total
                rows.append({"iops": fields[2], "resp": fields[3], "read_resp": fields[8], "write_resp": fields[10], "mb": fields[13],
                             "cpu": fields[4], "sys": fields[5]})
            else:  # tod interval rate MB/s bytes read% resp read_resp write_resp resp_max resp_std qdepth cpu sys
                rows.append({"iops": fields[2], "mb": fields[3], "resp": fields[6], "read_resp": fields[7], "write_resp": fields[8],
                             "cpu": fields[12], "sys": fields[13]})
    return rows


def half_unit(printed: str) -> float:
    decimals = len(printed.partition(".")[2])
    return 0.5 * 10 ** -decimals


# Intervals in the flatfile are printed with 4 decimals: their mean may differ from
# vdbench's unrounded one by that much before totals.html rounds it.
FLAT_ROUNDING = 1e-4


@pytest.mark.parametrize("sample", RUNS)
def test_parser_reproduces_vdbench_totals(sample: str) -> None:
    expected = totals_rows(SAMPLES / sample)
    points = parse_outdir(SAMPLES / sample).points
    assert len(points) == len(expected) > 0
    for point, want in zip(points, expected, strict=True):
        s = point.total.stats
        assert abs(s.iops - float(want["iops"])) <= half_unit(want["iops"]) + FLAT_ROUNDING, (point.label, s.iops, want)
        assert abs(s.mb_per_s - float(want["mb"])) <= half_unit(want["mb"]) + FLAT_ROUNDING, (point.label, s.mb_per_s, want)
        for key, got in (("resp", s.resp_ms), ("read_resp", s.read_resp_ms), ("write_resp", s.write_resp_ms)):
            assert abs(got - float(want[key])) <= 0.01, (point.label, key, got, want)
            assert abs(got - float(want[key])) <= half_unit(want[key]) + FLAT_ROUNDING, (point.label, key, got, want)
        busy = (s.cpu_user_pct or 0) + (s.cpu_kernel_pct or 0)
        assert abs(busy - float(want["cpu"])) <= half_unit(want["cpu"]) + FLAT_ROUNDING, (point.label, busy, want)
        # The file-system report prints sys 48.3 for a flatfile 48.3640 (truncated, not rounded): one printed unit.
        assert abs((s.cpu_kernel_pct or 0) - float(want["sys"])) <= 2 * half_unit(want["sys"]) + FLAT_ROUNDING


@pytest.mark.parametrize("sample", RUNS)
def test_histogram_counts_every_interval_warmup_included(sample: str) -> None:
    """histogram.html counts every I/O of the point, warmup intervals too (unlike the avg row).

    A file-system point may differ by one operation (its rates are printed in halves).
    """
    for point in parse_outdir(SAMPLES / sample).points:
        if "all" in point.histograms:
            all_ios = sum(row.need("rate") for row in point.flat.intervals)
            assert abs(point.histograms["all"].total - all_ios) <= 1, point.label


def test_per_workload_and_host_reports_add_up_to_the_total() -> None:
    tile = parse_outdir(SAMPLES / "run3_vm_tile").points[0]
    assert set(tile.reports["wd"]) == {"sql", "web"}
    assert sum(a.stats.iops for a in tile.reports["wd"].values()) == pytest.approx(tile.total.stats.iops, abs=0.02)
    hosts = parse_outdir(SAMPLES / "run5_multihost").points[0].reports["host"]
    assert set(hosts) == {"hd1", "hd2"}
    assert sum(a.stats.iops for a in hosts.values()) == pytest.approx(956.0, abs=0.02)


def test_run_result_carries_the_jobs_and_a_clean_errorlog_passes() -> None:
    output = parse_outdir(SAMPLES / "run3_vm_tile")
    result = to_run_result(output, output.points[0], "localhost")
    assert sorted(j.name for j in result.jobs) == ["sql", "web"]
    assert result.total_iops == pytest.approx(474.0, abs=0.02)
    assert len(result.series.samples) == 2 * 2 * 10  # per job, read + write per interval of the window
    sql = result.series.where(job="sql", dir=Dir.READ).samples
    assert len(sql) == 10 and all(s.host == "localhost" for s in sql)
    assert result.start_ms < min(s.t_ms for s in result.series.samples) <= result.end_ms
    assert no_io_errors.evaluate(result, no_io_errors.Params()).passed


def test_series_lies_on_vdbenchs_interval_grid_so_no_judged_second_is_empty() -> None:
    """Rows are printed 10-150 ms late by varying amounts; samples sit on the nominal grid from the row before
    the window, so cutting the run into seconds finds every interval once (run3: rates 284 477 490 500 522
    525 489 496 499 458, its avg_2-10 covering all ten)."""
    output = parse_outdir(SAMPLES / "run3_vm_tile")
    result = to_run_result(output, output.points[0], "localhost")
    assert result.end_ms - result.start_ms == 10_000
    assert sorted({s.t_ms - result.start_ms for s in result.series.samples}) == [1000 * k for k in range(1, 11)]
    rounds = [round(iops) for _, iops, _ in judged_series(result, 1000).totals()]
    assert rounds == [284, 477, 490, 500, 522, 525, 489, 496, 499]  # the last second is left out (resample.py)


def test_cli_json_has_exactly_the_documented_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert iogate_main(["vdbench-parse", str(SAMPLES / "run2_curve"), "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["rd"] for r in records][:2] == ["SD_format threads=2 iorate=max", "rd_curve xfersize=8k rdpct=70 threads=4"]
    for record in records:
        assert set(record) == {"rd", "intervals", "iops", "mb_per_s", "resp_ms", "read_resp_ms", "write_resp_ms", "percentiles"}
    assert records[1]["intervals"] == 10 and records[1]["iops"] == 10275.9


@pytest.mark.parametrize("sample", RUNS)
def test_cli_json_reproduces_vdbench_avg_rows_of_every_sample(sample: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`vdbench-parse --json` on every sample: one object per avg row of totals.html (read with a plain split),
    exactly the documented keys, figures to the printed precision, a percentile for every point that did I/O."""
    assert iogate_main(["vdbench-parse", str(SAMPLES / sample), "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    expected = totals_rows(SAMPLES / sample)
    assert len(records) == len(expected) > 0
    for record, want in zip(records, expected, strict=True):
        assert set(record) == {"rd", "intervals", "iops", "mb_per_s", "resp_ms", "read_resp_ms", "write_resp_ms", "percentiles"}
        for key, printed in (("iops", "iops"), ("mb_per_s", "mb"), ("resp_ms", "resp"), ("read_resp_ms", "read_resp"),
                             ("write_resp_ms", "write_resp")):
            if record[key] is None:  # a direction without I/O has no response time (totals.html prints 0.000)
                assert key.endswith("resp_ms") and float(want[printed]) == 0.0, (record["rd"], key, want)
                continue
            assert abs(record[key] - float(want[printed])) <= half_unit(want[printed]) + FLAT_ROUNDING, (record["rd"], key, want)
        assert record["intervals"] >= 1
        assert all(isinstance(v, float) for v in record["percentiles"].values()), record


def test_cli_pins_hand_checked_points(capsys: pytest.CaptureFixture[str]) -> None:
    """Values checked by hand: the avg row of totals.html, the flatfile's per-interval rates (run5: 635, 913, 1032, 949,
    1000, 967, 1048, 1007, 979, 1030 -> mean 956.0 over all 10 intervals, which avg_2-10 covers) and histogram.html's
    cumulative % (run5: 98.5356 % below 2 ms, 99.6653 % below 4 ms -> p99 in the 2-4 ms bucket, reported as 4 ms)."""
    assert iogate_main(["vdbench-parse", str(SAMPLES / "run5_multihost"), "--json"]) == 0
    (point,) = json.loads(capsys.readouterr().out)
    assert point["rd"] == "rd1 threads=2" and point["intervals"] == 10
    assert point["iops"] == 956.0 and round(point["mb_per_s"], 2) == 3.73
    assert (round(point["resp_ms"], 3), round(point["read_resp_ms"], 3), round(point["write_resp_ms"], 3)) == (0.258, 0.254, 0.268)
    assert point["percentiles"] == {"p50_ms": 0.2, "p90_ms": 0.4, "p95_ms": 0.8, "p99_ms": 4.0, "p99.9_ms": 8.0}
    # run3 (VM tile, iorate=500): interval rates 284 477 490 500 522 525 489 496 499 458 -> 474.0; totals.html 14.08 MB/s.
    assert iogate_main(["vdbench-parse", str(SAMPLES / "run3_vm_tile"), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)[0]
    assert first["rd"] == "rd_tile threads=4 iorate=500" and first["intervals"] == 10
    assert first["iops"] == 474.0 and round(first["mb_per_s"], 2) == 14.08
    assert (round(first["resp_ms"], 3), round(first["read_resp_ms"], 3), round(first["write_resp_ms"], 3)) == (0.340, 0.343, 0.327)


# -- percentiles from vdbench buckets -------------------------------------------------------

def test_percentile_is_the_upper_edge_of_the_nearest_rank_bucket() -> None:
    h = BucketHistogram((0.0, 0.1, 0.2, 0.4, math.inf), (50, 40, 9, 1))
    assert h.percentile_ms(50) == 0.1  # rank 50 is the last I/O of the first bucket
    assert h.percentile_ms(51) == 0.2
    assert h.percentile_ms(99) == 0.4
    assert h.percentile_ms(100) == math.inf  # the top bucket is open-ended: no finite bound


def test_per_host_histograms_merge_into_the_total_and_never_across_edges() -> None:
    host1, host2, total = (parse_histograms(SAMPLES / "run5_multihost" / f"{name}histogram.html")[0].sections["all"]
                           for name in ("hd1.", "hd2.", ""))
    assert host1.merged(host2) == total
    with pytest.raises(ValueError, match="different bucket edges"):
        host1.merged(BucketHistogram((0.0, 1.0, math.inf), (1, 1)))


def test_empty_histogram_is_no_data() -> None:
    with pytest.raises(NoData, match="no I/O"):
        BucketHistogram((0.0, 1.0, math.inf), (0, 0)).percentile_ms(99)


# -- faults: each one must be refused naming file and line ----------------------------------

def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(SAMPLES / name, target)
    for path in target.iterdir():
        path.chmod(0o644)
    return target


def _edit(path: Path, old: str, new: str, count: int = 1) -> int:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, count))
    return text[: text.index(old)].count("\n") + 1


def test_missing_interval_is_refused(tmp_path: Path) -> None:
    out = _copy(tmp_path, "run3_vm_tile")
    lines = (out / "flatfile.html").read_text().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.split()[3:4] == ["5"])
    (out / "flatfile.html").write_text("".join(lines[:index] + lines[index + 1:]))
    with pytest.raises(EngineError, match=rf"flatfile.html:{index + 1}: interval 6 .* interval 5 .* was due"):
        parse_outdir(out)


def test_na_rate_is_refused(tmp_path: Path) -> None:
    out = _copy(tmp_path, "run3_vm_tile")
    line = _edit(out / "flatfile.html", "   500.0000   284.0000", "   500.0000        n/a")
    with pytest.raises(EngineError, match=rf"flatfile.html:{line}: column 'rate' is n/a"):
        parse_outdir(out)


def test_garbage_line_is_refused(tmp_path: Path) -> None:
    out = _copy(tmp_path, "run5_multihost")
    line = _edit(out / "flatfile.html", "11/21/2026-22:34:36-UTC", "11/21/2026-22:34:36-UTC junk")
    with pytest.raises(EngineError, match=rf"flatfile.html:{line}: .* fields where the header has"):
        parse_outdir(out)


def test_run_cut_short_is_refused(tmp_path: Path) -> None:
    out = _copy(tmp_path, "run5_multihost")
    lines = (out / "flatfile.html").read_text().splitlines(keepends=True)
    (out / "flatfile.html").write_text("".join(line for line in lines if "avg_" not in line))
    with pytest.raises(EngineError, match="ends without its avg_X-Y row"):
        parse_outdir(out)


def test_output_without_any_run_point_is_no_data(tmp_path: Path) -> None:
    out = _copy(tmp_path, "run5_multihost")
    lines = (out / "flatfile.html").read_text().splitlines(keepends=True)
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["tod", "timestamp"])
    (out / "flatfile.html").write_text("".join(lines[: header + 1]))
    with pytest.raises(EngineError, match="no run point completed"):
        parse_outdir(out)


def test_average_no_window_reproduces_is_refused(tmp_path: Path) -> None:
    out = _copy(tmp_path, "run5_multihost")
    line = _edit(out / "flatfile.html", "   956.0000", "   999.0000")
    with pytest.raises(EngineError, match=rf"flatfile.html:{line}: no interval window reproduces"):
        parse_outdir(out)


def test_broken_histogram_is_refused(tmp_path: Path) -> None:
    out = _copy(tmp_path, "run5_multihost")
    line = _edit(out / "histogram.html", "    0.020 <       0.040", "    0.030 <       0.040")
    with pytest.raises(EngineError, match=rf"histogram.html:{line}: bucket starts at 0.03"):
        parse_histograms(out / "histogram.html")


def test_errorlog_entries_fail_no_io_errors(tmp_path: Path) -> None:
    out = _copy(tmp_path, "run5_multihost")
    with (out / "errorlog.html").open("a") as log:
        log.write("22:34:40.001 hd1-0: Data Validation error for sd=sd1,lun=/lab/data/vol1 lba 8192\n")
    output = parse_outdir(out)
    assert len(output.errors) == 1
    verdict = no_io_errors.evaluate(to_run_result(output, output.points[0], "localhost"), no_io_errors.Params())
    assert not verdict.passed and "EILSEQ" in verdict.detail


def test_a_late_report_race_is_followed_to_the_window_that_reproduces_the_average(tmp_path: Path) -> None:
    """A loaded master counts earlier warmup intervals too: avg_3-10 may cover 1-10 (window.py)."""
    out = _copy(tmp_path, "run5_multihost")
    _edit(out / "flatfile.html", "avg_2-10", "avg_3-10")
    total = parse_outdir(out).points[0].total
    assert (total.first, total.last) == (1, 10)


def summary_interval_rates(run_dir: Path) -> list[list[float]]:
    """Per run point, the 'i/o rate' of every interval row in summary.html (plain split)."""
    points: list[list[float]] = []
    for line in (run_dir / "summary.html").read_text().splitlines():
        fields = line.split()
        if "Starting RD=" in line:
            points.append([])
        elif len(fields) > 2 and fields[1].isdigit() and ":" in fields[0]:
            points[-1].append(float(fields[2]))
    return points


def test_runner_window_after_the_ramp_is_not_vdbenchs_window() -> None:
    """run1 has warmup=2: vdbench averaged 2-12; judged from interval 3 the mean is that of 3-12."""
    output = parse_outdir(SAMPLES / "run1_block_dedup")
    rates = summary_interval_rates(SAMPLES / "run1_block_dedup")
    for point, point_rates in zip(output.points, rates, strict=True):
        result = to_run_result(output, point, "localhost", first_interval=3)
        expected = sum(point_rates[2:12]) / 10
        assert result.total_iops == pytest.approx(expected, abs=0.005)  # summary prints rates with 2 decimals
        assert result.jobs[0]["write"].runtime_ms == 10_000 or result.jobs[0]["read"].runtime_ms == 10_000


DATA = Path(__file__).resolve().parents[1] / "data" / "vdbench"


def test_a_clean_data_validation_run_has_no_errors_and_a_corrupted_one_fails_no_io_errors(tmp_path: Path) -> None:
    assert errorlog.error_lines(DATA / "errorlog_clean_dv.html") == []
    corrupted = errorlog.error_lines(DATA / "errorlog_dv_corrupted.html")
    assert corrupted and "18:23:35.720" in corrupted[0].text  # the first line after the bookkeeping
    out = _copy(tmp_path, "run5_multihost")
    shutil.copy(DATA / "errorlog_dv_corrupted.html", out / "errorlog.html")
    output = parse_outdir(out)
    verdict = no_io_errors.evaluate(to_run_result(output, output.points[0], "localhost"), no_io_errors.Params())
    assert not verdict.passed and "EILSEQ" in verdict.detail


def test_validated_blocks_in_error_are_errors(tmp_path: Path) -> None:
    log = tmp_path / "errorlog.html"
    text = (DATA / "errorlog_clean_dv.html").read_text().replace("marked in error:    0", "marked in error:    3")
    log.write_text(text)
    assert [e.text.split()[-1] for e in errorlog.error_lines(log)] == ["3"]
