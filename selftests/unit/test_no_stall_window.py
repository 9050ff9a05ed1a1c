"""no_stall judges the measured window only: silence before the measurement began is never a stall.

The fresh-clone gate of 2026-11-28: a tiles run stopped by fail-fast failed no_stall on `-0.587-1.413 s`.
A job of one fio process may start measuring later than the process' first job (each job resets its clock
when it sees its own ramp end; behind a blkio throttle's queue a job sees it late), while every job's span
starts with the first; the job's grid (its own phase, iogate.metrics.grid) then begins up to an interval
before the window, and the seconds before the job measured read as 0 IOPS. Reproduced with real fio 3.33
(a second job with startdelay=1400ms: `-0.553-1.447 s`, stopped or full). Hand-worked values below.
"""

from __future__ import annotations

from iogate.judging import no_stall
from iogate.metrics.grid import per_vm
from iogate.metrics.types import Dir, JobSpan, RunResult, Sample, Series

S = 1000  # ms
T0 = 100_000  # the measured window's start (epoch ms)


def late_job(first_line_s: float, last_line_s: float, span_s: int) -> RunResult:
    """One job logging 30 IOPS at T0 + first_line_s, +1 s, ... last_line_s (its lines tick 413 ms after whole
    seconds of the window: it started measuring late), span [T0, T0 + span_s]: the process' window."""
    count = round(last_line_s - first_line_s) + 1
    samples = tuple(Sample(T0 + round((first_line_s + k) * S), "vm", "h1", Dir.READ, 30.0, 1_000_000.0) for k in range(count))
    series = Series(samples, (), S, (JobSpan("h1", "vm", T0, T0 + span_s * S),))
    return RunResult("tiles", (), series, T0, T0 + span_s * S)


def test_the_grid_of_a_late_job_begins_before_the_window() -> None:
    """The premise, by hand: lines at +2.413, 3.413, 4.413 s; the grid's bound is min(T0, 2413 - 1000) + half an
    interval = T0 + 500, its phase 413: origin T0 + 413, intervals ending +1.413 (0), +2.413 ... +4.413. The
    interval ending +0.413 lies mostly before the span and is not expected (iogate.metrics.grid._start_ms)."""
    intervals = per_vm(late_job(2.413, 4.413, 5).series)[("h1", "vm")]
    assert [(t - T0, iops) for t, iops, _ in intervals] == [(1413, 0.0), (2413, 30.0), (3413, 30.0), (4413, 30.0)]
    # The job's own silence (T0 + 413, T0 + 1413] is 1 s, under the default 2 s span.
    assert no_stall.silent_spans(intervals, S) == [(T0 + 413, T0 + 1413)]


def test_silence_before_the_window_is_not_a_stall() -> None:
    # Clipped to the window: (T0, T0 + 1413] = 1.413 s. Rate 90 / 5 = 18 IOPS: 10 I/Os take 0.556 s, the 2 s floor
    # decides; 1.413 < 2 passes, the longest silence 1413 / 2000 = 0.71 of the span.
    run = late_job(2.413, 4.413, 5)
    verdict = no_stall.evaluate(run, no_stall.Params())
    assert verdict.passed, verdict.detail
    assert "longest silence 0.71 of it" in verdict.detail
    intervals = per_vm(run.series)[("h1", "vm")]
    assert no_stall.silent_spans(intervals, S, from_ms=T0) == [(T0, T0 + 1413)]
    # A silent span that ends by the window's start is no span at all.
    assert no_stall.silent_spans([(T0 - 500, 0.0, None), (T0 + 500, 30.0, None)], S, from_ms=T0) == []


def test_a_real_silence_inside_the_window_still_fails() -> None:
    # Lines from +3.413 s: the grid's zeros end +0.413, 1.413, 2.413; clipped, (T0, T0 + 2413] = 2.413 s silent.
    # Rate 4 x 30 / 7 intervals = 17.1 IOPS: 10 I/Os take 0.58 s, the 2 s floor decides; 2.413 >= 2 fails, from 0 s.
    verdict = no_stall.evaluate(late_job(3.413, 6.413, 7), no_stall.Params())
    assert not verdict.passed
    assert verdict.measured == 2413 and verdict.bound == 2000
    assert "h1/vm: no I/O completed 0-2.413 s after the measurement began (2.413 s)" in verdict.detail
    assert verdict.evidence[0]["from_s"] == 0 and verdict.evidence[0]["to_s"] == 2.413
    assert all(row["from_s"] >= 0 for row in verdict.evidence)
