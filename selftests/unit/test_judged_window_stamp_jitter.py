"""A judged window's bound never falls between fio's stamps of one interval.

Found by `make accept` (4 fresh clones on a loaded machine, 3 failed): the local lab's
backend_write top step (8 clones in one fio process) failed steady_state with
"no window of 3 rounds met range <= 40 %". fio stamped each second's lines of the 8 clones 0-4 ms
apart (timer jitter); the measured start came from the earliest stamp, so the judged window's end
(start + job_runtime - the run's last second) fell at ...786 ms, between the clones stamped ...783
and ...787: half the clones lost their third second, which read 517 IOPS instead of 1050.
The lines below are that run's (points/017-backend_write-p8), its json's timestamp and runtimes.
"""

from __future__ import annotations

from iogate.engines.fio import parse
from iogate.metrics.resample import judged_series
from iogate.metrics.types import Dir, RunResult, Sample, Series

REPORT = {"timestamp_ms": 1_795_751_690_865,
          "jobs": [{"jobname": "kpi1", "job_runtime": r} for r in (4003, 4001, 4001, 4000)]
          + [{"jobname": "kpi2", "job_runtime": r} for r in (4003, 4000, 4003, 4000)]}
# (stamp offset from 1_795_751_680_000 ms, job, clone, IOPS) as fio logged them.
LINES = [
    (7783, "kpi1", 4, 135.0), (7783, "kpi2", 5, 124.9), (7783, "kpi2", 6, 126.0), (7783, "kpi2", 8, 128.0),
    (7786, "kpi1", 1, 125.0), (7787, "kpi1", 2, 127.0), (7787, "kpi1", 3, 123.0), (7787, "kpi2", 7, 125.0),
    (8783, "kpi1", 4, 126.0), (8783, "kpi2", 5, 124.9), (8783, "kpi2", 6, 126.0), (8783, "kpi2", 8, 127.0),
    (8786, "kpi1", 1, 130.0), (8787, "kpi1", 2, 130.1), (8787, "kpi1", 3, 123.0), (8787, "kpi2", 7, 131.0),
    (9783, "kpi1", 4, 137.9), (9783, "kpi2", 5, 134.0), (9783, "kpi2", 6, 136.0), (9783, "kpi2", 8, 129.0),
    (9786, "kpi1", 1, 132.0), (9787, "kpi1", 2, 125.1), (9787, "kpi1", 3, 130.0), (9787, "kpi2", 7, 126.0),
    (10783, "kpi2", 5, 118.0),  # one clone's partial last second, logged at exit
]
# Each second's lines summed by hand: all 8 clones ran every one of the 3 whole seconds.
EXPECTED_ROUNDS = [1013.9, 1018.0, 1050.0]


def _samples(shift_ms: int = 0) -> list[Sample]:
    return [Sample(1_795_751_680_000 + t + shift_ms, job, "localhost", Dir.WRITE, iops, 7e6, clone=clone)
            for t, job, clone, iops in LINES]


def _rounds(report: dict[str, object], samples: list[Sample]) -> list[float]:
    """The runner's result for the host (start, spans, end) judged per second, as steady_state reads it."""
    start_ms = parse.measured_start_ms(report, samples, "localhost")
    runtime_ms = max(int(j["job_runtime"]) for j in report["jobs"])  # type: ignore[index, union-attr]
    series = Series(tuple(samples), (), 1000, tuple(parse.job_spans(report, "localhost", start_ms)))
    result = RunResult("backend_write-p8", (), series, start_ms, start_ms + runtime_ms)
    return [round(iops, 1) for _, iops, _ in judged_series(result, 1000).totals()]


def test_clones_stamped_a_few_ms_apart_keep_every_judged_second() -> None:
    assert _rounds(REPORT, _samples()) == EXPECTED_ROUNDS


def test_the_same_with_stamps_later_by_up_to_a_tenth_of_an_interval() -> None:
    """fio's helper thread stamps late under load; the rounds stay whole while the lateness stays
    within the grid's jitter allowance (a tenth of an interval)."""
    late = [Sample(s.t_ms + (90 if s.clone % 2 else 0), s.job, s.host, s.dir, s.iops, s.clat_mean_ns, clone=s.clone)
            for s in _samples()]
    assert _rounds(REPORT, late) == EXPECTED_ROUNDS


def test_a_clone_that_stopped_logging_still_reads_as_a_drop() -> None:
    """Fail closed: the allowance absorbs jitter, never a missing interval (clone 3's last second gone)."""
    samples = [s for s in _samples() if not (s.clone == 3 and s.t_ms % 10_000 == 9787)]
    assert _rounds(REPORT, samples) == [1013.9, 1018.0, 920.0]
