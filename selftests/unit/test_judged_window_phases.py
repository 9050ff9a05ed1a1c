"""Two jobs of one fio process whose clones tick on different phases: the judged rounds of a top step.

Found by `make accept` (1 run of 10 at 8e8f18e): test_kpi_throughput[local-backend_write] failed steady_state
with "only 2 rounds, a window needs 3" on its 5 s top step. fio stamps a job's first line a whole interval
after its start and the later ones on its helper thread's phase, which can run late: kpi1's clones ticked at
+0 ms, kpi2's at +108 ms. The merge then leaves out the head round (kpi2 began inside it on its grid) and the
tail round (the judged window's bound cut kpi2's last second, not kpi1's), so 5 s held 2 whole rounds.
A second fault showed with phases inside the merge's jitter slack (20 and 110 ms): the two were merged
interval for interval, the bound kept kpi1's last second and cut kpi2's, and that round read half its I/O.

The series below are built as fio logs them: 8 clones (2 jobs x 4) at 125 IOPS each, so every whole round
is 1000 IOPS; the first line at +1.000 s (+1 ms on odd clones), the later ones at k s + the job's phase.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.engines.fio import parse
from iogate.judging.judge import SpecJudge
from iogate.judging.spec import load_spec
from iogate.metrics.resample import judged_series
from iogate.metrics.types import Dir, RunResult, Sample, Series

T0 = 1_800_000_000_000
CRITERIA = Path(__file__).resolve().parents[2] / "criteria"
WINDOW_ROUNDS = 3  # local.yaml's kpi steady_state window


def _rounds(runtime_s: int, phases_ms: tuple[int, int], *, silent: tuple[int, int] | None = None) -> list[float]:
    """The top step's judged one-second rounds; `silent` = (clone, stamp offset ms) of a line fio never wrote."""
    samples, jobs = [], []
    for j, phase in enumerate(phases_ms):
        runtime_ms = runtime_s * 1000 + (6, 2)[j]  # fio's job_runtime, a few ms over the plan
        for c in range(4):
            clone = 4 * j + c + 1
            jobs.append({"jobname": f"kpi{j + 1}", "job_runtime": runtime_ms})
            stamps = [1000 + c % 2] + [k * 1000 + phase + c % 2 for k in range(2, runtime_s + 1) if k * 1000 + phase < runtime_ms]
            samples += [Sample(T0 + t, f"kpi{j + 1}", "localhost", Dir.WRITE, 125.0, 7e6, clone=clone)
                        for t in stamps if (clone, t) != silent]
    report = {"timestamp_ms": T0 + runtime_s * 1000 + 10, "jobs": jobs}
    start_ms = parse.measured_start_ms(report, samples, "localhost")
    series = Series(tuple(samples), (), 1000, tuple(parse.job_spans(report, "localhost", start_ms, samples)))
    result = RunResult("backend_write-p8", (), series, start_ms, start_ms + max(int(j["job_runtime"]) for j in jobs))
    return [round(iops, 1) for _, iops, _ in judged_series(result, 1000).totals()]


def test_phases_108_ms_apart_leave_a_5_s_step_two_whole_rounds() -> None:
    """The make accept failure: a ragged head and a ragged tail round."""
    assert _rounds(5, (0, 108)) == [1000.0, 1000.0]


def test_phases_within_the_slack_either_side_of_the_bound_never_read_a_half_round() -> None:
    """20 and 110 ms: the bound (+106 ms with its jitter allowance) kept kpi1's last second, cut kpi2's."""
    assert _rounds(6, (20, 110)) == [1000.0] * 4


@pytest.mark.parametrize("first", range(0, 500, 25))
def test_the_planned_top_step_holds_its_window_at_any_phase_up_to_half_an_interval_late(first: int) -> None:
    runtime_s = int(SpecJudge(load_spec(CRITERIA / "local.yaml")).top_step_runtime_s("backend_write", 4, backend=True))
    for second in range(0, 500, 25):
        rounds = _rounds(runtime_s, (first, second))
        assert len(rounds) >= WINDOW_ROUNDS and set(rounds) == {1000.0}, (first, second, rounds)


def test_a_clone_silent_in_the_last_judged_round_still_reads_as_a_drop() -> None:
    """Fail closed: leaving out what the bound cut never hides a missing line (clone 1's at +4.020 s)."""
    assert _rounds(6, (20, 110), silent=(1, 4020)) == [1000.0, 1000.0, 1000.0, 875.0]


def test_a_job_that_logged_nothing_reads_as_missing_io_not_as_a_shorter_window() -> None:
    """Fail closed: kpi2's four clones wrote no line at all (its span says it ran): every judged round is
    kpi1's 500 IOPS, none is left out as a cut edge."""
    samples, jobs = [], []
    for clone in range(1, 9):
        job = "kpi1" if clone <= 4 else "kpi2"
        jobs.append({"jobname": job, "job_runtime": 6006})
        if job == "kpi1":
            samples += [Sample(T0 + k * 1000, job, "localhost", Dir.WRITE, 125.0, 7e6, clone=clone) for k in range(1, 6)]
    report = {"timestamp_ms": T0 + 6010, "jobs": jobs}
    start_ms = parse.measured_start_ms(report, samples, "localhost")
    series = Series(tuple(samples), (), 1000, tuple(parse.job_spans(report, "localhost", start_ms, samples)))
    rounds = [round(iops, 1) for _, iops, _ in
              judged_series(RunResult("backend_write-p8", (), series, start_ms, start_ms + 6006), 1000).totals()]
    assert rounds == [500.0] * 5
