"""A late fio helper tick is not a stall; a real stall still is (the hist log tells them apart).

fio's helper thread logs an interval's IOPS as the I/Os since its previous tick over the ms since then,
and restarts at every tick, also one that found no I/O and logged nothing (stat.c __add_samples). A gap
of more than an interval between two iops-log lines is therefore either a stall (the line after it
covers its last interval) or a late tick (the line covers the whole gap). The grid used to read every
gap as a stall: a tick 600 ms late (a loaded host, a TCG guest) read a phantom 0 IOPS second. The
clat_hist log is written on the completion path, so it goes on through a late tick and stops in a stall.

The logs below are written by the rules above from a list of completion times (a steady 200 IOPS job,
a completion every 5 ms), so what each interval truly held is known by hand: 200 IOPS where I/O ran,
0 where it did not.
"""

from __future__ import annotations

from iogate.engines.fio.parse import parse_logs
from iogate.judging.no_stall import Params, stalls
from iogate.metrics.grid import per_vm
from iogate.metrics.histogram import PLAT_NR
from iogate.metrics.types import JobSpan, RunResult, Series

END_MS = 9000
EVERY_5_MS = [3 + 5 * k for k in range(END_MS // 5)]  # 200 IOPS, completions at 3, 8, 13 ... ms


def _hist_line(t_ms: int, count: int) -> str:
    bins = [0] * PLAT_NR
    bins[700] = count
    return f"{t_ms}, 0, 4096, " + ", ".join(map(str, bins))


def fio_logs(completions: list[int], ticks: list[int], *, hist: bool = True) -> dict[str, str]:
    """The iops and clat_hist logs fio writes for these completions and helper ticks (log_hist_msec=1000)."""
    iops, before = [], 0
    for tick in ticks:
        done = sum(before < c <= tick for c in completions)
        if done:  # "No entries for interval"
            iops.append(f"{tick}, {done * 1000 // (tick - before)}, 0, 4096, 0")
        before = tick  # restarted also when nothing was logged
    files = {"vm_iops.1.log": "\n".join(iops) + "\n"}
    if hist:
        lines, last, count = [], 0, 0
        for c in completions:
            count += 1
            if c - last >= 1000:  # the first completion a hist interval after the line before
                lines.append(_hist_line(c, count))
                last, count = c, 0
        files["vm_clat_hist.1.log"] = "\n".join(lines) + "\n"
    return files


def intervals(files: dict[str, str]) -> list[int]:
    """The job's per-interval IOPS on its grid, rounded to whole I/Os."""
    samples, hist = parse_logs(files, "h")
    series = Series(tuple(samples), tuple(hist), 1000, (JobSpan("h", "vm", 0, END_MS),))
    (grid,) = per_vm(series).values()
    return [round(iops) for _, iops, _ in grid]


def stall_count(files: dict[str, str]) -> int:
    samples, hist = parse_logs(files, "h")
    series = Series(tuple(samples), tuple(hist), 1000, (JobSpan("h", "vm", 0, END_MS),))
    found, _, _ = stalls(RunResult("p", (), series, 0, END_MS), Params(min_interval="1s"))
    return len(found)


ON_TIME = [1000 * k for k in range(1, 10)]
LATE_600_MS = [1000, 2000, 3000, 4600, 5600, 6600, 7600, 8600]  # the tick due at 4000 came at 4600


def test_on_time_ticks_read_200_every_second() -> None:
    assert intervals(fio_logs(EVERY_5_MS, ON_TIME)) == [200] * 9


def test_a_tick_600_ms_late_is_not_a_stall() -> None:
    """The line at 4600 covers (3000, 4600] at 200 IOPS; the grid (on the later lines' phase, 600 ms) used to
    read the second before it as 0."""
    files = fio_logs(EVERY_5_MS, LATE_600_MS)
    assert 0 not in intervals(files)
    assert set(intervals(files)) == {200}
    assert stall_count(files) == 0


def test_the_first_line_a_whole_interval_after_the_start_and_the_rest_on_a_late_phase() -> None:
    """fio stamps a job's first line at +1.000 s and the later ones on its helper thread's phase: here 700 ms
    late, so the second line covers (1000, 2700]."""
    files = fio_logs(EVERY_5_MS, [1000, 2700, 3700, 4700, 5700, 6700, 7700, 8700])
    assert set(intervals(files)) == {200}


def test_a_real_stall_still_reads_zero() -> None:
    """No completion in (2998, 5000]: the ticks at 4000 and 5000 found nothing, the line at 6000 covers one
    interval. The hist line after the stall counts only the I/Os before it (held by the line at 3000)."""
    stalled = [c for c in EVERY_5_MS if not 2998 < c <= 5000]
    files = fio_logs(stalled, ON_TIME)
    assert intervals(files) == [200, 200, 200, 0, 0, 200, 200, 200, 200]
    assert stall_count(files) == 1


def test_a_stall_then_a_late_tick_is_not_credited_with_the_stall() -> None:
    """No completion in (2998, 4000], the tick at 4000 found nothing, the next came 600 ms late at 5600: the
    line covers (4000, 5600] only. Only 0.6 s of the 1.6 s gap ran, less than half: the gap is not credited
    and stays 0 on the grid (fail closed; the grid's phase is 600 ms, so both its intervals across the gap
    held some I/O, but neither is credited with a rate the hist log cannot prove)."""
    stalled = [c for c in EVERY_5_MS if not 2998 < c <= 4000]
    files = fio_logs(stalled, [1000, 2000, 3000, 4000, 5600, 6600, 7600, 8600])
    assert intervals(files)[3:5] == [0, 0]


def test_without_a_hist_log_a_late_tick_is_not_credited() -> None:
    """Fail closed: nothing proves the I/O went on, so the gap stays 0 IOPS."""
    assert 0 in intervals(fio_logs(EVERY_5_MS, LATE_600_MS, hist=False))


def test_a_tick_three_seconds_late_covers_all_three_seconds() -> None:
    """A guest whose helper thread was descheduled for 3 s: one line at 6000 covers (3000, 6000]."""
    files = fio_logs(EVERY_5_MS, [1000, 2000, 3000, 6000, 7000, 8000, 9000])
    assert intervals(files) == [200] * 9
    assert stall_count(files) == 0


def test_any_lateness_up_to_three_intervals_reads_the_steady_rate() -> None:
    """The tick due at 4000 comes 0.1-2.9 s late, the later ones keep its phase (fio restarts at every tick).
    Every interval lies in fio's truncation bounds of 200 IOPS: [200, 201]."""
    for late_ms in range(100, 3000, 100):
        ticks = [1000, 2000, 3000, *range(4000 + late_ms, END_MS, 1000)]
        found = intervals(fio_logs(EVERY_5_MS, ticks))
        assert set(found) <= {200, 201}, (late_ms, found)


def test_a_stall_of_two_seconds_reads_zero_at_any_tick_phase() -> None:
    """No completion for 2 s from 3000 (ticks on time, at phases 0-900 ms): two intervals read 0, the others
    200 or the part of 200 the stall left them."""
    stalled = [c for c in EVERY_5_MS if not 2998 < c <= 5000]
    for phase in range(0, 1000, 100):
        ticks = [1000, *range(2000 + phase, END_MS, 1000)]
        found = intervals(fio_logs(stalled, ticks))
        assert found.count(0) >= 1 and sum(found) <= 200 * 7 + 1, (phase, found)


def test_a_sigstopped_fio_is_a_stall_although_its_helper_ticked_late() -> None:
    """SIGSTOP freezes the helper and the completion path alike: nothing completes (3500, 7500), the helper's
    next line comes at 7500, at the resume, with a low mean rate over the stop (the I/Os of (3000, 3500] and
    the 4 in flight reaped at the resume). The hist log shows one line before the stop and the next after it,
    so the stop is not credited with that mean: the seconds inside it read 0 (the truth test
    test_tiles_truth.test_a_tile_whose_fio_is_stopped... does this with a real fio)."""
    frozen = [c for c in EVERY_5_MS if not 3500 < c < 7500] + [7500] * 4
    files = fio_logs(sorted(frozen), [1000, 2000, 3000, 7500, 8500])
    found = intervals(files)
    assert found.count(0) >= 3, found
    assert stall_count(files) == 1
