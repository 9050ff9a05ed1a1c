"""The judged window starts when fio's measured phase did, not a report-writing delay later.

Found on the emulated PowerStore lab (TCG guest, one tile of 25 VMs at load_scale 0.25): fio
wrote its report 1.1 s after the jobs ended, the report-based window began a second late and
ended a second after fio's last logged interval, and a VM paced at exactly 1 read + 1 write a
second read 0.73 + 0.76 IOPS in its last 5 s interval (a zero second inside), "missing" its
target of 2. The lines themselves show the start: the first one ends the first measured second.
"""

from __future__ import annotations

from iogate.engines.fio import parse
from iogate.metrics.resample import judged_series
from iogate.metrics.types import Dir, RunResult, Sample, Series

START_MS = 1_795_741_258_118  # the true start of the measured phase
RUNTIME_MS = 21_172  # job_runtime: 21 whole seconds and a partial one
PHASE_MS = 14  # fio stamps its lines a few ms after each whole second


def _report(delay_ms: int) -> dict[str, object]:
    return {"timestamp_ms": START_MS + RUNTIME_MS + delay_ms, "jobs": [{"jobname": "vm", "job_runtime": RUNTIME_MS}]}


def _paced_lines(first_second: int = 1) -> list[Sample]:
    """1 read and 1 write a second from `first_second` to the 20th (fio's 21st whole second unlogged, as seen)."""
    return [Sample(START_MS + n * 1000 + PHASE_MS, "vm", "guest", direction, 1.0, 5e6)
            for n in range(first_second, 21) for direction in (Dir.READ, Dir.WRITE)]


def _judged(report: dict[str, object], lines: list[Sample]) -> dict[Dir, list[float]]:
    """The runner's result for one host (start, spans, end), judged in 5 s intervals."""
    start_ms = parse.measured_start_ms(report, lines, "guest")
    series = Series(tuple(lines), (), 1000, tuple(parse.job_spans(report, "guest", start_ms)))
    result = RunResult("tiles", (), series, start_ms, start_ms + RUNTIME_MS)
    judged = judged_series(result, 5000)
    return {d: [round(s.iops, 3) for s in judged.samples if s.dir is d] for d in (Dir.READ, Dir.WRITE)}


def test_a_report_written_late_does_not_move_the_judged_window() -> None:
    report = _report(delay_ms=1_131)
    assert parse.measured_start_ms(report, _paced_lines(), "guest") == START_MS + PHASE_MS
    assert _judged(report, _paced_lines()) == {Dir.READ: [1.0] * 4, Dir.WRITE: [1.0] * 4}


def test_a_prompt_report_judges_the_same() -> None:
    assert _judged(_report(delay_ms=40), _paced_lines()) == {Dir.READ: [1.0] * 4, Dir.WRITE: [1.0] * 4}


def test_a_first_second_without_io_stays_judged_as_zero() -> None:
    """No line in the first three seconds: the lines cannot move the start later than the report's,
    so the stalled seconds stay inside the window at 0 IOPS."""
    report = _report(delay_ms=40)
    lines = _paced_lines(first_second=4)
    assert parse.measured_start_ms(report, lines, "guest") == START_MS + 40
    judged = _judged(report, lines)
    assert judged[Dir.READ][0] == 0.4 and judged[Dir.WRITE][0] == 0.4  # 2 of 5 seconds did their I/O
