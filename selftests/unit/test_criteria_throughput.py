"""throughput_min and throughput_impact: must pass and must fail, on real fio output and synthetic windows."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from iogate.engines.fio.parse import load_json, parse_jobs
from iogate.judging import throughput_impact, throughput_min
from iogate.metrics.types import Dir, RunResult, Sample, Series
from iogate.metrics.windows import event_windows, window_stats

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
T0 = 1_795_300_000_000


def real_run(name: str = "randrw.json") -> RunResult:
    data = load_json((DATA / name).read_text(), name)
    return RunResult(name, tuple(parse_jobs(data, "localhost")), Series(), 0, 0)


def stepped_series(iops_by_second: list[float]) -> Series:
    return Series(tuple(Sample(T0 + 1000 * (k + 1), "vm1", "h1", Dir.READ, iops, 200_000.0) for k, iops in enumerate(iops_by_second)))


def test_iops_min_passes_and_fails_on_a_real_fio_run() -> None:
    run = real_run()  # 2 jobs x (700 read + 300 write) IOPS, rate-limited
    assert run.total_iops == pytest.approx(2000, rel=0.05)
    passed = throughput_min.evaluate(run, throughput_min.Params(minimum=500))
    assert passed.passed and passed.measured == pytest.approx(run.total_iops) and passed.unit == "IOPS"
    failed = throughput_min.evaluate(run, throughput_min.Params(minimum=5000))
    assert not failed.passed and failed.bound == 5000
    assert "FAIL" in failed.line() and "5000 IOPS" in failed.line()
    reads = throughput_min.evaluate(run, throughput_min.Params(minimum=1500, direction="read"))
    assert not reads.passed and reads.measured == pytest.approx(1400, rel=0.05)


def test_mb_per_s_from_a_run_and_from_a_window() -> None:
    run = real_run()
    verdict = throughput_min.evaluate(run, throughput_min.Params(minimum=5, metric="mb_per_s"))
    assert verdict.passed and verdict.measured == pytest.approx(2000 * 4096 / 1e6, rel=0.05)
    series = stepped_series([1000.0] * 5)
    window = event_windows(T0, T0 + 5000, T0 + 5000, T0 + 5000)[0]
    with_bs = throughput_min.evaluate(window_stats(series, window, block_size_bytes=4096),
                                      throughput_min.Params(minimum=4, metric="mb_per_s"))
    assert with_bs.passed and with_bs.measured == pytest.approx(4.096) and with_bs.window == "baseline"
    unknown = throughput_min.evaluate(window_stats(series, window), throughput_min.Params(minimum=5, metric="mb_per_s"))
    assert not unknown.passed and math.isnan(unknown.measured) and "block size" in unknown.detail


def test_throughput_impact_within_and_beyond_the_allowed_drop() -> None:
    series = stepped_series([1000.0] * 4 + [450.0] * 3 + [1000.0] * 3)
    baseline, event, recovery = event_windows(T0, T0 + 10_000, T0 + 4000, T0 + 7000)
    before, during, after = (window_stats(series, w) for w in (baseline, event, recovery))
    mirror = throughput_impact.evaluate(before, during, throughput_impact.Params(max_drop_pct=70))  # synchronous mirror: up to 70 %
    assert mirror.passed and mirror.measured == pytest.approx(55.0) and mirror.window == "event vs baseline"
    snapshot = throughput_impact.evaluate(before, during, throughput_impact.Params(max_drop_pct=5))  # snapshot on reads: none
    assert not snapshot.passed and "1000 -> 450" in snapshot.detail
    assert throughput_impact.evaluate(before, after, throughput_impact.Params(max_drop_pct=1)).passed


def test_throughput_impact_with_no_baseline_io_fails_instead_of_dividing_by_zero() -> None:
    series = stepped_series([0.0] * 4 + [100.0] * 3)
    baseline, event, _ = event_windows(T0, T0 + 7000, T0 + 4000, T0 + 7000)
    verdict = throughput_impact.evaluate(window_stats(series, baseline), window_stats(series, event),
                                         throughput_impact.Params(max_drop_pct=50))
    assert not verdict.passed and "no data: 0 iops in window baseline" in verdict.detail


def test_throughput_impact_between_two_whole_runs() -> None:
    run = real_run()
    assert throughput_impact.evaluate(run, run, throughput_impact.Params(max_drop_pct=0)).passed
    with pytest.raises(ValueError, match="'iops' or 'mb_per_s'"):  # refused with the bounds, before any run is judged
        throughput_impact.Params(max_drop_pct=0, metric="bogus")
