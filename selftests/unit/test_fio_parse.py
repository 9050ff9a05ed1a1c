"""fio json+ and log parsing: real shapes, and broken output refused with a name."""

import pytest

from iogate.engines.fio import parse
from iogate.errors import EngineError
from iogate.metrics.histogram import PLAT_NR
from iogate.metrics.types import Dir


def test_iops_and_latency_logs_pair_by_nearest_time() -> None:
    # fio 3.33 stamps the clat log ~128 ms before the iops log of the same interval.
    files = {
        "vm1_iops.1.log": "1000272367, 500, 0, 0, 0\n1000272367, 200, 1, 0, 0\n1000273367, 510, 0, 0, 0\n",
        "vm1_clat.1.log": "1000272239, 90000, 0, 0, 0\n1000272239, 150000, 1, 0, 0\n1000273239, 95000, 0, 0, 0\n"
        "1000274239, 99000, 0, 0, 0\n",
    }
    samples, hist = parse.parse_logs(files, "h1")
    assert [(s.t_ms, s.dir, s.iops, s.clat_mean_ns) for s in samples] == [
        (1000272367, Dir.READ, 500.0, 90000.0),
        (1000272367, Dir.WRITE, 200.0, 150000.0),
        (1000273367, Dir.READ, 510.0, 95000.0),
    ]
    assert hist == [] and {s.host for s in samples} == {"h1"} and {s.job for s in samples} == {"vm1"}


def test_latency_too_far_away_is_not_borrowed() -> None:
    files = {"j_iops.1.log": "5000, 10, 0, 0, 0\n", "j_clat.1.log": "9000, 777, 0, 0, 0\n"}
    samples, _ = parse.parse_logs(files, "h")
    assert samples[0].clat_mean_ns is None  # unknown, never a fabricated 0 ns


def test_short_histogram_line_refused() -> None:
    with pytest.raises(EngineError, match="j_clat_hist.1.log: histogram line has 3 bins"):
        parse.parse_logs({"j_clat_hist.1.log": "1000, 0, 4096, 1, 2, 3\n"}, "h")


def test_not_json_refused_with_source() -> None:
    with pytest.raises(EngineError, match="h1:/x/out.json: no JSON"):
        parse.load_json("fio: failed to open /dev/foo", "h1:/x/out.json")
    with pytest.raises(EngineError, match="not fio json output"):
        parse.load_json('{"hello": 1}', "x")


def test_numjobs_clones_merge_into_one_job() -> None:
    direction = {"total_ios": 100, "io_bytes": 409600, "runtime": 1000, "iops": 100.0, "bw_bytes": 409600,
                 "clat_ns": {"min": 1000, "max": 5000, "mean": 2000.0, "stddev": 10.0, "N": 100, "bins": {"2008": 100}}}
    idle = {"total_ios": 0, "io_bytes": 0, "runtime": 0, "iops": 0.0, "bw_bytes": 0}
    raw = {"jobname": "vm", "error": 0, "read": direction, "write": idle, "trim": idle}
    jobs = parse.parse_jobs({"jobs": [raw, raw]}, "h1")
    assert len(jobs) == 1 and jobs[0].name == "vm"
    assert jobs[0]["read"].iops == 200.0 and jobs[0]["read"].clat.samples == 200
    assert jobs[0]["read"].clat.bins == {2008: 200}


# fio 3.33 status reports (SIGUSR1, json+), two jobs, ramp_time=2: job_runtime counts the ramp, then restarts at 0.
STATUS_REPORTS = """
  "timestamp_ms" : 1795316223354,
      "elapsed" : 1,
      "job_runtime" : 750,
      "elapsed" : 1,
      "job_runtime" : 749,
  "timestamp_ms" : 1795316224361,
      "elapsed" : 2,
      "job_runtime" : 1757,
      "elapsed" : 2,
      "job_runtime" : 1757,
  "timestamp_ms" : 1795316225370,
      "elapsed" : 3,
      "job_runtime" : 766,
      "elapsed" : 3,
      "job_runtime" : 765,
  "timestamp_ms" : 1795316226376,
      "elapsed" : 4,
      "job_runtime" : 1772,
"""


def test_measurement_start_from_the_first_status_report_past_the_ramp() -> None:
    from iogate.engines.fio.runner import measurement_start_ms

    assert measurement_start_ms(STATUS_REPORTS, first_elapsed_s=3) == 1795316225370 - 765  # the later job's start
    assert measurement_start_ms(STATUS_REPORTS, first_elapsed_s=4) == 1795316226376 - 1772
    reports_during_ramp = STATUS_REPORTS[: STATUS_REPORTS.index('  "timestamp_ms" : 1795316225370')]
    assert measurement_start_ms(reports_during_ramp, first_elapsed_s=3) is None
    assert measurement_start_ms("", first_elapsed_s=1) is None


def test_clones_keep_their_log_number() -> None:
    files = {"j_iops.2.log": "1000, 10, 0, 0, 0\n", "j_iops.3.log": "1400, 20, 0, 0, 0\n"}
    samples, _ = parse.parse_logs(files, "h")
    assert [(s.t_ms, s.clone, s.iops) for s in samples] == [(1000, 2, 10.0), (1400, 3, 20.0)]


def test_job_spans_come_from_the_report_time_and_each_jobs_runtime() -> None:
    data = {"timestamp_ms": 50_000, "jobs": [{"jobname": "a", "job_runtime": 10_000}, {"jobname": "b", "job_runtime": 9_000},
                                             {"jobname": "b", "job_runtime": 9_500}]}
    spans = parse.job_spans(data, "h")
    assert [(s.job, s.start_ms, s.end_ms) for s in spans] == [("a", 40_000, 50_000), ("b", 40_000, 49_500)]
    with pytest.raises(EngineError, match="fio json of host h: cannot tell when the jobs ran"):
        parse.job_spans({"jobs": []}, "h")


# -- clat_hist lines: fio's own format read non-zero fields only, anything else field by field ---------
def _hist_text(lines: list[tuple[int, dict[int, int]]], sep: str = ", ") -> str:
    rows = []
    for t_ms, bins in lines:
        counts = [bins.get(i, 0) for i in range(PLAT_NR)]
        rows.append(sep.join(str(v) for v in (t_ms, 0, 4096, *counts)))
    return "\n".join(rows) + "\n"


def test_hist_lines_as_fio_writes_them_and_otherwise_give_the_same_bins() -> None:
    # Worked by hand: bins 0, 9, 10, 1855 (first, neighbours across a digit count, last) and big counts.
    lines = [(1000, {0: 7, 9: 1, 10: 10, 1855: 123456789012}), (2000, {}), (3000, {600: 1, 1800: 20})]
    fio_text = _hist_text(lines)
    loose_text = _hist_text(lines, sep=" ,\t")  # not fio's ", ": read field by field
    for text in (fio_text, loose_text):
        got = [(t, code, dict(counts.items())) for t, code, counts in parse.hist_log_lines(text, "x")]
        assert got == [(t, 0, bins) for t, bins in lines]


@pytest.mark.parametrize("bad", ["-1", "1.5", "", "x", "1 2", " "])
def test_a_hist_field_that_is_not_an_integer_is_refused_naming_file_and_line(bad: str) -> None:
    good = _hist_text([(1000, {5: 1})])
    fields = good.rstrip("\n").split(", ")
    fields[3 + 700] = bad
    text = good + ", ".join(fields) + "\n"
    with pytest.raises(EngineError, match=r"j_clat_hist.1.log line 2: "):
        parse.parse_logs({"j_clat_hist.1.log": text}, "h")
