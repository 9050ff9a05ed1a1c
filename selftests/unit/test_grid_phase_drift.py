"""A job whose log lines drift off their first line's phase keeps its target in every judged interval.

The stamps are a tile VM's from a real `make accept` run (fio 3.33, 25 rate-limited jobs in one process,
log_unix_epoch, 2026-12-05): the first line a whole second after the measured start, the next 1.155 s later,
then on the helper thread's phase (.183) to the last line at +20.188 s; the report's longest runtime 21.087 s.
Before the fix every tile VM read 12-20 % short in its first 5 s interval (the grid expected an interval
ending +0.183 s, 82 % before the job began) and, here, exactly 20 % short in its last (the line at +20.188 s
cut by its own stamp while its interval, ending +20.183 s, was kept): the edges of issue 26's tile misses.
A stall in the first second must still read as one.
"""

from __future__ import annotations

from iogate.judging import no_stall
from iogate.metrics.grid import per_vm
from iogate.metrics.resample import judged_series
from iogate.metrics.types import Dir, JobSpan, RunResult, Sample, Series

T0 = 1_796_495_302_530  # the measured start (epoch ms)
STAMPS_MS = (1000, 2155, 3176, *range(4183, 19184, 1000), 20188)
RUNTIME_MS = 21_087
IOPS = 10.0


def run_of(stamps: tuple[int, ...]) -> RunResult:
    samples = tuple(Sample(T0 + t, "vm", "h1", Dir.READ, IOPS, 2e6) for t in stamps)
    series = Series(samples, (), 1000, (JobSpan("h1", "vm", T0, T0 + RUNTIME_MS),))
    return RunResult("tiles", (), series, T0, T0 + RUNTIME_MS)


def buckets(run: RunResult) -> list[tuple[int, float]]:
    ((_, intervals),) = per_vm(judged_series(run, 5000)).items()
    return [(t - T0, iops) for t, iops, _ in intervals]


def test_a_drifting_job_holds_its_rate_in_every_5s_interval() -> None:
    # Grid ends +1.183, +2.183 ... +20.183 (origin: the phase point .183 nearest the start); the judged part ends
    # a second before the run (+20.087 s, stamps 0.1 s late allowed): 20 whole seconds, four 5 s buckets of 10 IOPS.
    assert buckets(run_of(STAMPS_MS)) == [(5183, IOPS), (10183, IOPS), (15183, IOPS), (20183, IOPS)]


def test_a_stall_in_the_first_second_still_counts() -> None:
    # No line at +1.000 s: the interval ending +1.183 s is 0 IOPS, the first bucket holds 40 I/Os in 5 s.
    stalled = run_of(STAMPS_MS[1:])
    assert buckets(stalled)[0] == (5183, 8.0)
    # ... and the silence is measured from the window's start, not from the grid's first interval (+0.183 s).
    ((_, intervals),) = per_vm(stalled.series).items()
    assert no_stall.silent_spans(intervals, 1000, from_ms=T0) == [(T0, T0 + 1183)]
