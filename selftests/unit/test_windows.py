"""Windows of a run: which intervals count, and the totals inside each window."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.engines.fio.parse import parse_logs
from iogate.metrics.histogram import Histogram, value_to_index
from iogate.metrics.nodata import NoData
from iogate.metrics.types import Dir, HistSample, Sample, Series
from iogate.metrics.windows import Window, event_windows, measure_window, window_stats

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
T0 = 1_795_300_000_000  # epoch ms


def synthetic_series(per_second: list[tuple[float, float]], jobs: tuple[str, ...] = ("vm1", "vm2"), jitter_ms: int = 3) -> Series:
    """Each second k (interval ending at T0 + 1000 (k+1)): every job does (iops, mean clat ns) in reads,
    half that in writes at twice the latency; hist samples put every read IO at the mean."""
    samples, hist = [], []
    for k, (iops, lat_ns) in enumerate(per_second):
        for n, job in enumerate(jobs):
            t = T0 + 1000 * (k + 1) + n * jitter_ms
            samples.append(Sample(t, job, "h1", Dir.READ, iops, lat_ns))
            samples.append(Sample(t + 1, job, "h1", Dir.WRITE, iops / 2, 2 * lat_ns))
            hist.append(HistSample(t, job, "h1", Dir.READ, {value_to_index(int(lat_ns)): int(iops)}))
    return Series(tuple(samples), tuple(hist))


def test_window_rejects_end_before_start() -> None:
    with pytest.raises(ValueError, match="window event: end"):
        Window("event", 10, 5)


def test_an_interval_counts_only_when_it_fits_the_window_give_or_take_jitter() -> None:
    window = Window("event", T0 + 3000, T0 + 6000)
    assert window.holds(T0 + 4000, 1000)  # [3000, 4000]
    assert window.holds(T0 + 4003, 1000)  # a few ms of fio timer jitter
    assert window.holds(T0 + 6050, 1000)
    assert not window.holds(T0 + 3500, 1000)  # straddles the event start
    assert not window.holds(T0 + 6500, 1000)  # straddles the event end
    assert not window.holds(T0 + 3000, 1000)  # entirely before


def test_event_windows_split_the_measured_span_at_the_recorded_event() -> None:
    baseline, event, recovery = event_windows(T0, T0 + 10_000, T0 + 4000, T0 + 7000)
    assert (baseline.name, baseline.start_ms, baseline.end_ms) == ("baseline", T0, T0 + 4000)
    assert (event.name, event.start_ms, event.end_ms) == ("event", T0 + 4000, T0 + 7000)
    assert (recovery.name, recovery.start_ms, recovery.end_ms) == ("recovery", T0 + 7000, T0 + 10_000)
    guarded = event_windows(T0, T0 + 10_000, T0 + 4000, T0 + 7000, guard_ms=1000)
    assert [(w.start_ms - T0, w.end_ms - T0) for w in guarded] == [(0, 3000), (5000, 6000), (8000, 10_000)]


def test_event_running_past_the_end_leaves_an_empty_recovery_window() -> None:
    _, event, recovery = event_windows(T0, T0 + 10_000, T0 + 4000, T0 + 12_000)
    assert event.end_ms == T0 + 10_000
    assert recovery.duration_ms == 0
    assert window_stats(synthetic_series([(100, 1e5)] * 10), recovery).intervals == 0


def test_event_outside_the_measured_run_is_an_error() -> None:
    with pytest.raises(ValueError, match="does not start inside the measured run"):
        event_windows(T0, T0 + 10_000, T0 - 1, T0 + 5000)


def test_window_totals_per_direction_and_together() -> None:
    # 4 s at 100 IOPS/job 100 us, then 3 s at 50 IOPS/job 400 us, then 3 s back to normal.
    series = synthetic_series([(100, 100_000)] * 4 + [(50, 400_000)] * 3 + [(100, 100_000)] * 3)
    baseline, event, recovery = event_windows(T0, T0 + 10_000, T0 + 4000, T0 + 7000)
    before, during, after = (window_stats(series, w, block_size_bytes=4096) for w in (baseline, event, recovery))
    assert (before.intervals, during.intervals, after.intervals) == (4, 3, 3)
    assert before.of(Dir.READ).iops == 200 and before.of("write").iops == 100 and before.total.iops == 300
    assert during.total.iops_per_interval == [150, 150, 150]
    assert during.bytes_per_s == 150 * 4096
    # IOPS-weighted: reads 100 IOPS @ 400 us, writes 50 IOPS @ 800 us per job.
    assert during.of("read").latency_mean_ns == pytest.approx(400_000)
    assert during.total.latency_mean_ns == pytest.approx((100 * 400_000 + 50 * 800_000) / 150)
    # Percentiles come from the window's merged hist samples (reads only here).
    assert during.of("read").percentile_ns(99) == pytest.approx(400_000, rel=1 / 128)
    assert before.of("read").histogram.total == 4 * 2 * 100
    with pytest.raises(NoData, match="no latency samples"):  # no write hist samples: no invented numbers
        during.of("write").percentile_ns(99)
    assert during.of("trim").intervals == ()


def test_real_fio_logs_show_the_noisy_neighbour_window() -> None:
    """tiles.fio: two rate-limited VMs; a 1 MiB writer runs from t=3 s to t=6 s."""
    files = {}
    for n, job in ((1, "vm_sql"), (2, "vm_web")):
        for kind in ("iops", "clat", "clat_hist"):
            files[f"{job}_{kind}.{n}.log"] = (DATA / f"tiles_{kind}.{n}.log").read_text()
    samples, hist = parse_logs(files, "localhost")
    series = Series(tuple(samples), tuple(hist))
    start = min(s.t_ms for s in samples) - 1000
    whole = window_stats(series, measure_window(start, start + 9000))
    assert whole.intervals == 8
    # The writer starts 3 s in; fio's rate limiter makes up the missed I/Os once the writer's
    # burst is through, so the first two event seconds show the drop.
    baseline, event, _ = event_windows(start, start + 9000, start + 3000, start + 5000)
    before, during = window_stats(series, baseline), window_stats(series, event)
    assert before.intervals == 3 and during.intervals == 2
    assert before.total.iops == pytest.approx(400, rel=0.1)  # 200+100 and 95+5 IOPS requested
    assert during.total.iops < 0.7 * before.total.iops
    assert during.total.percentile_ns(99) > 10 * before.total.percentile_ns(99)
    assert during.total.percentile_ns(50) > 10 * before.total.percentile_ns(50)
    assert isinstance(before.total.histogram, Histogram) and before.total.histogram.total > 0
