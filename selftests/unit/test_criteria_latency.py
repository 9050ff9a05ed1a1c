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


def test_a_percentile_verdict_says_how_many_ios_it_was_taken_from() -> None:
    run = real_run()  # randrw.json: 2 jobs of 2,800 reads and 1,200 writes each (clat_ns N)
    verdict = latency_bound.evaluate(run, latency_bound.Params(max_latency="50ms"))
    assert {row["direction"]: row["ios"] for row in verdict.evidence} == {"read": 5600, "write": 2400}
    assert f" of {({'read': 5600, 'write': 2400}[verdict.detail.split()[1]]):,} I/Os (worst of" in verdict.detail
    assert "slowest" not in verdict.detail  # 24 or 56 I/Os above the p99: not a thin tail
    mean = latency_bound.evaluate(run, latency_bound.Params(max_latency="50ms", stat="mean"))
    assert "I/Os" not in mean.detail and all("ios" not in row for row in mean.evidence)


def _window_of(counts: dict[float, int]) -> object:
    """One second's window of one VM's writes whose histogram holds `counts` (latency ns -> I/Os)."""
    t = T0 + 1000
    total = sum(counts.values())
    series = Series((Sample(t, "vm1", "h1", Dir.WRITE, float(total), 1_000_000.0),),
                    (HistSample(t, "vm1", "h1", Dir.WRITE, {value_to_index(int(ns)): n for ns, n in counts.items()}),))
    _, event, _ = event_windows(T0, T0 + 1000, T0, T0 + 1000)
    return window_stats(series, event)


@pytest.mark.parametrize(("slow", "p99_ms", "rank"), [(3, 1.0, "4th"), (4, 9.0, "4th")])
def test_a_thin_tail_is_named_as_the_kth_slowest(slow: int, p99_ms: float, rank: str) -> None:
    # 352 writes (a smoke tile's Web writes): ceil(0.99 x 352) = 349, so the p99 is the 4th slowest:
    # with 3 slow writes it is a fast one, with 4 it is a slow one.
    window = _window_of({1_000_000: 352 - slow, 9_000_000: slow})
    verdict = latency_bound.evaluate(window, latency_bound.Params(max_latency="5ms", direction="write"))
    assert verdict.measured == pytest.approx(p99_ms, rel=1 / 64)  # a fio bin is at most 1/64 wide
    assert verdict.passed is (p99_ms < 5)
    assert f"p99 write of 352 I/Os, the {rank} slowest" in verdict.detail


def test_the_slowest_io_and_a_thick_tail() -> None:
    top = latency_bound.evaluate(_window_of({1_000_000: 9, 9_000_000: 1}), latency_bound.Params(max_latency="5ms", stat="p100"))
    assert "of 10 I/Os, the slowest (" in top.detail and not top.passed
    thick = latency_bound.evaluate(_window_of({1_000_000: 1990, 9_000_000: 10}), latency_bound.Params(max_latency="5ms"))
    assert "of 2,000 I/Os (" in thick.detail  # 20 I/Os at or above the p99: no rank named
