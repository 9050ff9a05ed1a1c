"""The expected interval grid: a second fio logged nothing for is 0 IOPS, everywhere it is counted.

Expected values are worked out by hand from the I/Os each test feeds in, never
with the grid code itself.
"""

from __future__ import annotations

import pytest

from iogate.events.model import EventRecord, Timeline
from iogate.events.schedule import EventRun
from iogate.judging import target_iops_held, throughput_impact
from iogate.metrics.grid import job_grids
from iogate.metrics.nodata import NoData
from iogate.metrics.resample import judged_series, resample
from iogate.metrics.types import Dir, JobSpan, RunResult, Sample, Series
from iogate.metrics.windows import Window, event_windows, window_stats

T0 = 1_795_400_000_000


def job_lines(job: str, per_second: list[float], *, host: str = "h1", phase_ms: int = 0, lat_ns: float | None = 100_000.0,
              clone: int = 1) -> list[Sample]:
    """fio-like lines: one per second that did I/O (a 0 writes no line), stamped 2 ms late."""
    return [Sample(T0 + phase_ms + 1000 * (k + 1) + 2, job, host, Dir.READ, iops, lat_ns, clone)
            for k, iops in enumerate(per_second) if iops > 0]


def test_a_paused_job_is_0_iops_in_totals_and_window_means() -> None:
    # The case: 100 IOPS, paused for seconds 4-8 of 10; fio logged 5 lines.
    per_second = [100.0, 100.0, 100.0, 0, 0, 0, 0, 0, 100.0, 100.0]
    series = Series(tuple(job_lines("vm", per_second)), spans=(JobSpan("h1", "vm", T0, T0 + 10_000),))
    assert [iops for _, iops, _ in series.totals()] == per_second
    stats = window_stats(series, Window("measure", T0, T0 + 10_000))
    assert stats.intervals == 10
    assert stats.total.iops == pytest.approx(50.0)  # 500 I/Os in 10 s, not 100
    assert stats.stalls() == ["h1/vm: 0 IOPS in 5 of 10 intervals of the measure window"]


def test_a_job_silent_until_the_end_of_its_span_is_0_there() -> None:
    # Seconds 6-9 are 0; the 10th is not expected unlogged (fio logs a job's last second only if its
    # timer beats the job's end).
    series = Series(tuple(job_lines("vm", [100.0] * 5)), spans=(JobSpan("h1", "vm", T0, T0 + 10_000),))
    assert [iops for _, iops, _ in series.totals()] == [100.0] * 5 + [0.0] * 4
    # Without a span, the series' other jobs tell how long the run was.
    both = Series(tuple(job_lines("vm", [100.0] * 5) + job_lines("other", [10.0] * 10)))
    assert [iops for _, iops, _ in both.where(job="vm").totals()] == [100.0] * 5 + [0.0] * 4


def test_two_hosts_500_ms_apart_total_2000_every_second() -> None:
    lines = job_lines("vm", [1000.0] * 10, host="a") + job_lines("vm", [1000.0] * 10, host="b", phase_ms=500)
    spans = (JobSpan("a", "vm", T0, T0 + 10_000), JobSpan("b", "vm", T0 + 500, T0 + 10_500))
    totals = Series(tuple(lines), spans=spans).totals()
    # Host a's grid is the reference: (T0, T0+1 s] holds a's whole second and half of b's first.
    assert [iops for _, iops, _ in totals] == [1500.0] + [2000.0] * 9
    # Reversed roles (b's lines first) make no difference: merging is by time.
    swapped = Series(tuple(reversed(lines)), spans=tuple(reversed(spans))).totals()
    assert [iops for _, iops, _ in swapped] == [1500.0] + [2000.0] * 9


def test_two_hosts_500_ms_apart_judged_from_one_time_on_total_2000_in_every_judged_second() -> None:
    # The judged window is (T0+3.2 s, T0+10.2 s]: a's seconds ending at 4..10 s and b's ending at 3.5..9.5 s
    # are kept (stamps 2 ms late), so b's grid is the reference. Its second ending at 3.5 s would hold
    # b's 1000 and half of a's second ending at 4 s alone, a's earlier second lying before the window:
    # 1500, a drop that never happened, left out. Every second after it holds b's and halves of two of a's.
    lines = job_lines("vm", [1000.0] * 10, host="a") + job_lines("vm", [1000.0] * 10, host="b", phase_ms=500)
    spans = (JobSpan("a", "vm", T0, T0 + 10_000), JobSpan("b", "vm", T0 + 500, T0 + 10_500))
    judged = Series(tuple(lines), spans=spans).where(start_ms=T0 + 3200, end_ms=T0 + 10_200)
    assert [(t - T0, iops) for t, iops, _ in judged.totals()] == [(1000 * k + 502, 2000.0) for k in range(4, 10)]
    # Cut at the tail alike: (T0+0.2 s, T0+6.2 s] keeps a's seconds ending at 1..6 s and b's at 1.5..5.5 s;
    # a's second ending at 6 s would hold a's 1000 and half of b's second ending at 6.5 s, left out. In a
    # cut series a host that began late reads as one cut: a's first second (b had not begun) goes too.
    head = Series(tuple(lines), spans=spans).where(start_ms=T0 + 200, end_ms=T0 + 6200)
    assert [(t - T0, iops) for t, iops, _ in head.totals()] == [(1000 * k + 2, 2000.0) for k in range(2, 6)]


def test_a_host_that_begins_and_ends_within_the_run_counts_where_it_ran() -> None:
    # b runs 3 s from 3.5 s on, inside a's 8 s: the seconds ending at 4 and 7 s hold half of one of b's.
    lines = job_lines("vm", [1000.0] * 8, host="a") + job_lines("vm", [1000.0] * 3, host="b", phase_ms=3500)
    spans = (JobSpan("a", "vm", T0, T0 + 8000), JobSpan("b", "vm", T0 + 3500, T0 + 6500))
    totals = Series(tuple(lines), spans=spans).totals()
    assert [iops for _, iops, _ in totals] == [1000.0] * 3 + [1500.0, 2000.0, 2000.0, 1500.0, 1000.0]
    # Judged over (T0+2.5 s, T0+8.5 s]: b begins and ends away from the merge's ends, so its halves stand.
    judged = Series(tuple(lines), spans=spans).where(start_ms=T0 + 2500, end_ms=T0 + 8500)
    assert [iops for _, iops, _ in judged.totals()] == [1000.0, 1500.0, 2000.0, 2000.0, 1500.0, 1000.0]


def test_the_judged_series_of_two_hosts_500_ms_apart_totals_2000_in_every_round() -> None:
    # Measured from T0+2.2 s to T0+10.2 s, less the last second: a's seconds ending at 3..9 s, b's at
    # 2.5..8.5 s. On b's grid the second ending at 2.5 s would hold half of a's second ending at 3 s
    # alone (a's earlier second was measured before the start): 1500, left out. From 3.5 s to 8.5 s every
    # second holds b's and halves of two of a's (kpi's steady-state rounds are these totals).
    lines = job_lines("vm", [1000.0] * 10, host="a") + job_lines("vm", [1000.0] * 10, host="b", phase_ms=500)
    spans = (JobSpan("a", "vm", T0, T0 + 10_000), JobSpan("b", "vm", T0 + 500, T0 + 10_500))
    result = RunResult("r", (), Series(tuple(lines), spans=spans), T0 + 2200, T0 + 10_200)
    rounds = judged_series(result, 1000).totals()
    assert [(t - T0, iops) for t, iops, _ in rounds] == [(1000 * k + 502, 2000.0) for k in range(3, 9)]


def test_each_clone_ticks_on_its_own_grid() -> None:
    lines = job_lines("vm", [100.0] * 4, clone=1) + job_lines("vm", [100.0, 0, 0, 100.0], clone=2, phase_ms=400)
    # The span's start is an upper bound (the later clone's start); its length, 4 s, is exact.
    grids = job_grids(Series(tuple(lines), spans=(JobSpan("h1", "vm", T0 + 400, T0 + 4400),)))
    assert [(g.clone, [iops for _, iops, _ in g.intervals]) for g in grids] == [(1, [100.0] * 4), (2, [100.0, 0.0, 0.0, 100.0])]


def test_unpaired_latency_is_unknown_not_zero() -> None:
    lines = [*job_lines("vm", [100.0, 100.0], lat_ns=200000.0), Sample(T0 + 3002, "vm", "h1", Dir.READ, 300.0, None, 1)]
    stats = window_stats(Series(tuple(lines)), Window("w", T0, T0 + 3000))
    assert stats.total.latency_mean_ns == 200_000.0  # the unpaired second is left out, not weighted in as 0 ns
    assert stats.total.intervals[-1][2] is None
    unpaired = window_stats(Series((Sample(T0 + 1002, "vm", "h1", Dir.READ, 300.0, None, 1),)), Window("w", T0, T0 + 1000))
    with pytest.raises(NoData, match=r"no latency samples in window w \(all\)"):
        _ = unpaired.total.latency_mean_ns


def test_resample_counts_a_bucket_the_vm_was_silent_in() -> None:
    lines = job_lines("vm-sql", [10.0] * 5 + [0.0] * 5 + [10.0] * 5) + job_lines("vm-web", [10.0] * 15)
    coarse = resample(Series(tuple(lines)), 5000)
    per_vm = {job: [s.iops for s in coarse.samples if s.job == job] for job in ("vm-sql", "vm-web")}
    assert per_vm == {"vm-sql": [10.0, 0.0, 10.0], "vm-web": [10.0, 10.0, 10.0]}
    verdict = target_iops_held.evaluate(coarse, {"vm-sql": 10, "vm-web": 10}, target_iops_held.Params(min_fraction=0.9))
    assert not verdict.passed
    assert "h1/vm-sql (2/3 intervals, min 0.0 of 10 IOPS (floor 9), missed intervals 2)" in verdict.detail
    assert "vm-web (" not in verdict.detail


def test_a_vm_that_pauses_fails_target_iops_held_in_the_one_second_path_too() -> None:
    run = RunResult("tile", (), Series(tuple(job_lines("vm", [100.0] * 3 + [0.0] * 4 + [100.0] * 3)),
                                       spans=(JobSpan("h1", "vm", T0, T0 + 10_000),)), T0, T0 + 10_000)
    verdict = target_iops_held.evaluate(judged_series(run, 1000), {"vm": 100}, target_iops_held.Params())
    assert not verdict.passed and "missed intervals 4-7" in verdict.detail, verdict.line()


def test_a_stall_in_the_event_window_fails_the_event_check_not_the_infrastructure() -> None:
    sql = [1000.0] * 4 + [1000.0, 0, 0, 0, 1000.0] + [1000.0] * 3
    lines = job_lines("vm-sql", sql) + job_lines("vm-web", [1000.0] * 12)
    result = RunResult("r", (), Series(tuple(lines), spans=(JobSpan("h1", "vm-sql", T0, T0 + 12_000),
                                                           JobSpan("h1", "vm-web", T0, T0 + 12_000))), T0, T0 + 12_000)
    run = EventRun(result, Timeline((EventRecord("dedupe_run", "dedupe_run", 4, T0 + 4000, T0 + 9000),), T0))
    baseline, event, _ = run.window_stats("dedupe_run")  # no WindowTooShort: the run covered the window
    assert event.intervals == 5
    assert event.total.iops == pytest.approx((2 * 1000 + 1000 * 5) / 5)
    verdict = throughput_impact.evaluate(baseline, event, throughput_impact.Params(max_drop_pct=50))  # a 30 % drop alone would pass
    assert not verdict.passed
    assert "h1/vm-sql: 0 IOPS in 3 of 5 intervals of the event window" in verdict.detail


def test_a_window_the_run_did_not_reach_has_no_intervals() -> None:
    series = Series(tuple(job_lines("vm", [100.0] * 4)), spans=(JobSpan("h1", "vm", T0, T0 + 4000),))
    _, event, _ = event_windows(T0, T0 + 4000, T0 + 4000, T0 + 9000)
    stats = window_stats(series, event)
    assert stats.intervals == 0
    with pytest.raises(NoData, match=r"no intervals in window event \(all\)"):
        _ = stats.total.iops


def test_grid_intervals_read_as_the_tuples_they_hold() -> None:
    from iogate.metrics.grid import GridIntervals

    rows = ((2000, 10.0, 70_000.5), (3000, 0.0, None), (4000, 1e-9, 1.0))  # the same floats back, None for unknown
    grid = GridIntervals(2000, 1000, [r[1] for r in rows], [r[2] for r in rows])
    assert grid == rows and tuple(grid) == rows and list(grid) == list(rows)
    assert grid[1] == (3000, 0.0, None) and grid[-1] == rows[-1] and grid[1:] == rows[1:] and len(grid) == 3
    assert GridIntervals(0, 1000, [], []) == ()
    with pytest.raises(IndexError):
        grid[3]
