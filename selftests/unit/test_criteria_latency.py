"""latency_bound and latency_delta: must pass and must fail, on real fio output and synthetic windows."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.engines.fio.parse import load_json, parse_jobs
from iogate.judging import latency_bound, latency_delta
from iogate.judging.common import parse_stat
from iogate.metrics.histogram import value_to_index
from iogate.metrics.types import Dir, HistSample, RunResult, Sample, Series
from iogate.metrics.windows import event_windows, window_stats

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
T0 = 1_795_300_000_000
MS = 1_000_000


def real_run() -> RunResult:
    data = load_json((DATA / "randrw.json").read_text(), "randrw.json")
    return RunResult("randrw", tuple(parse_jobs(data, "localhost")), Series(), 0, 0)


def series_with_latency(lat_ns_by_second: list[float], iops: float = 100.0) -> Series:
    samples, hist = [], []
    for k, lat in enumerate(lat_ns_by_second):
        t = T0 + 1000 * (k + 1)
        samples.append(Sample(t, "vm1", "h1", Dir.READ, iops, lat))
        # 99 IOs at the mean, 1 at 5x: p99 = the mean, p100 = 5x.
        hist.append(HistSample(t, "vm1", "h1", Dir.READ, {value_to_index(int(lat)): 99, value_to_index(int(5 * lat)): 1}))
    return Series(tuple(samples), tuple(hist))


def test_p99_bound_on_a_real_run_judges_reads_and_writes_separately() -> None:
    run = real_run()  # measured: read p99 ~0.68 ms, write p99 ~1.86 ms
    loose = latency_bound.evaluate(run, latency_bound.Params(max_latency="50ms"))
    assert loose.passed and loose.unit == "ms"
    assert {row["direction"] for row in loose.evidence} == {"read", "write"}
    assert loose.measured == pytest.approx(max(r["latency_ms"] for r in loose.evidence))
    tight = latency_bound.evaluate(run, latency_bound.Params(max_latency="1ms"))
    assert not tight.passed
    assert "over the bound: write" in tight.detail and "read" not in tight.detail.split("over the bound:")[1]
    assert tight.measured > 1.0


def test_mean_and_all_directions_on_a_real_run() -> None:
    run = real_run()
    mean_all = latency_bound.evaluate(run, latency_bound.Params(max_latency="50ms", stat="mean", direction="all"))
    reads, writes = run.total("read").clat, run.total("write").clat
    expected = (reads.mean_ns * reads.samples + writes.mean_ns * writes.samples) / (reads.samples + writes.samples)
    assert mean_all.measured == pytest.approx(expected / MS)
    assert not latency_bound.evaluate(run, latency_bound.Params(max_latency=f"{expected * 0.9:.0f}ns", stat="mean", direction="all")).passed


def test_latency_bound_in_a_window() -> None:
    series = series_with_latency([200_000.0] * 5 + [3_000_000.0] * 5)
    baseline, event, _ = event_windows(T0, T0 + 10_000, T0 + 5000, T0 + 10_000)
    assert latency_bound.evaluate(window_stats(series, baseline), latency_bound.Params(max_latency="1ms")).passed
    during = latency_bound.evaluate(window_stats(series, event), latency_bound.Params(max_latency="1ms"))
    assert not during.passed and during.window == "event"
    assert during.measured == pytest.approx(3.0, rel=1 / 128)


def test_latency_bound_with_no_io_fails() -> None:
    empty = window_stats(Series(), event_windows(T0, T0 + 1000, T0, T0 + 1000)[1])
    verdict = latency_bound.evaluate(empty, latency_bound.Params(max_latency="1ms"))
    assert not verdict.passed and verdict.detail == "no I/O measured"


def test_latency_delta_passes_within_and_fails_beyond_the_allowed_rise() -> None:
    # Hitachi: +28.5 % mean latency during dedupe.
    series = series_with_latency([1_000_000.0] * 4 + [1_285_000.0] * 4)
    baseline, event, _ = event_windows(T0, T0 + 8000, T0 + 4000, T0 + 8000)
    before, during = window_stats(series, baseline), window_stats(series, event)
    ok = latency_delta.evaluate(before, during, latency_delta.Params(max_rise_pct=30))
    assert ok.passed and ok.window == "event vs baseline"
    assert [row["stat"] for row in ok.evidence] == ["mean", "p99"]
    assert ok.evidence[0]["rise_pct"] == pytest.approx(28.5)
    too_much = latency_delta.evaluate(before, during, latency_delta.Params(max_rise_pct=20, stats=["mean"]))
    assert not too_much.passed and too_much.measured == pytest.approx(28.5) and "+28.5 %" in too_much.detail


def test_latency_delta_without_baseline_latency_fails() -> None:
    series = series_with_latency([1_000_000.0] * 4)
    baseline, event, _ = event_windows(T0, T0 + 8000, T0 + 4000, T0 + 8000)
    verdict = latency_delta.evaluate(window_stats(series, baseline), window_stats(series, event), latency_delta.Params(max_rise_pct=30))
    assert not verdict.passed and "window event" in verdict.detail


@pytest.mark.parametrize(("stat", "pct"), [("mean", None), ("p99", 99.0), ("p99.9", 99.9), ("p50", 50.0)])
def test_stat_names(stat: str, pct: float | None) -> None:
    assert parse_stat(stat) == pct


@pytest.mark.parametrize("stat", ["p0", "p101", "median", "99"])
def test_bad_stat_names_are_refused(stat: str) -> None:
    with pytest.raises(ValueError, match="latency statistic"):
        parse_stat(stat)
