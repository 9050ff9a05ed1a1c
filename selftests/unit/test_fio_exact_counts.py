"""Per-interval IOPS from fio's clat_hist log's exact counts, not its truncated iops log.

fio logs an interval's IOPS as (I/Os x 1000) // ms (stat.c __add_samples): 8 reads
in 1001 ms are logged 7, 1 write in 1002 ms is logged 0. The hist log (a line at
the first completion after each log_hist_msec boundary, counting every I/O since
the line before) is exact. Expected values are worked out by hand (unit tests) or
are the completions fed to a simulation of fio's own logging rules (property).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iogate.engines.fio.parse import parse_logs
from iogate.metrics.histogram import PLAT_NR
from iogate.metrics.types import Dir, Series


def hist_line(t_ms: int, ddir: int, count: int) -> str:
    bins = [0] * PLAT_NR
    bins[700] = count
    return f"{t_ms}, {ddir}, 4096, " + ", ".join(map(str, bins))


def iops_of(files: dict[str, str], direction: Dir = Dir.READ) -> list[tuple[int, float]]:
    samples, _ = parse_logs(files, "h")
    return [(s.t_ms, round(s.iops, 6)) for s in samples if s.dir == direction]


READS_LOGGED_7 = "".join(f"{t}, 7, 0, 4096, 0\n" for t in (2000, 3000, 4000, 5000, 6000))
# 8 reads in every second, counted exactly; the first line counts from the first interval's start (1000).
READS_COUNTED_8 = "\n".join(hist_line(t, 0, n) for t, n in ((1500, 4), (2500, 8), (3500, 8), (4500, 8), (5500, 8)))


def test_exact_counts_replace_the_truncated_iops_where_the_hist_log_covers() -> None:
    files = {"vm_iops.1.log": READS_LOGGED_7, "vm_clat_hist.1.log": READS_COUNTED_8}
    # (1500, 2500] holds 8 I/Os, half of its time in each of (1000, 2000] and (2000, 3000] (both logged 7):
    # 4 each, and (1000, 1500] holds 4. The hist log covers (1000, 5500]: the last interval's uncovered
    # half keeps the iops log's 7 IOPS x 0.5 s = 3.5 I/Os; the others hold exactly 8.
    assert iops_of(files) == [(2000, 8.0), (3000, 8.0), (4000, 8.0), (5000, 8.0), (6000, 7.5)]


def test_a_single_write_logged_as_zero_counts_as_one() -> None:
    files = {"vm_iops.1.log": "3000, 0, 1, 4096, 0\n",
             "vm_clat_hist.1.log": hist_line(2950, 1, 1) + "\n"}
    # The hist line (2000, 2950] holds 1 write, inside (2000, 3000]. The 50 ms of that interval after it
    # keep the iops log's 0.
    assert iops_of(files, Dir.WRITE) == [(3000, 1.0)]


def test_without_a_hist_log_the_iops_log_stands() -> None:
    assert iops_of({"vm_iops.1.log": READS_LOGGED_7}) == [(t, 7.0) for t in (2000, 3000, 4000, 5000, 6000)]


def test_io_after_a_stall_is_not_smeared_back_over_the_stall() -> None:
    # fio stopped from 3000 to 7000: no iops lines between; the hist line written at the first completion
    # after the resume counts the I/Os since 3000, all of which completed after the resume.
    iops = "".join(f"{t}, 8, 0, 4096, 0\n" for t in (2000, 3000, 8000, 9000))
    hist = "\n".join(hist_line(t, 0, n) for t, n in ((2000, 8), (3000, 8), (7500, 4), (8000, 4), (9000, 8)))
    samples, _ = parse_logs({"vm_iops.1.log": iops, "vm_clat_hist.1.log": hist}, "h")
    totals = Series(tuple(samples)).totals()
    assert [(t, round(v, 6)) for t, v, _ in totals] == [
        (2000, 8.0), (3000, 8.0), (4000, 0.0), (5000, 0.0), (6000, 0.0), (7000, 0.0), (8000, 8.0), (9000, 8.0)]


def fio_logs(per_second: list[int], tick_jitter_ms: list[int], rng: random.Random) -> tuple[str, str, int]:
    """A job's iops and clat_hist logs made by fio's rules (stat.c), and how many I/Os completed in the
    logged intervals (from the first iops line's interval start to the last iops line)."""
    completions = sorted(1000 * k + rng.randint(1, 999) for k, n in enumerate(per_second) for _ in range(n))
    # iops log: the helper thread ticks every ~1000 ms; a line only if some I/O completed since the last tick.
    iops_lines, before = [], 0
    for k, jitter in enumerate(tick_jitter_ms, 1):
        tick = 1000 * k + jitter
        delta = sum(1 for c in completions if before < c <= tick)
        if delta:
            iops_lines.append((tick, delta * 1000 // (tick - before)))
        before = tick
    # hist log: on a completion at least hist_msec after hist_last, a line counting every I/O since the
    # line before; hist_last then advances by exactly hist_msec. The last partial interval is not written.
    hist_lines, hist_last, pending = [], None, 0
    for c in completions:
        pending += 1
        hist_last = c if hist_last is None else hist_last
        if c - hist_last >= 1000:
            hist_lines.append((c, pending))
            pending, hist_last = 0, hist_last + 1000
    if not iops_lines:
        return "", "", 0
    logged = sum(1 for c in completions if iops_lines[0][0] - 1000 < c <= iops_lines[-1][0])
    return ("".join(f"{t}, {v}, 0, 4096, 0\n" for t, v in iops_lines),
            "\n".join(hist_line(t, 0, n) for t, n in hist_lines), logged)


@settings(max_examples=300, deadline=None)
@given(rate=st.integers(3, 12), seconds=st.integers(4, 40), seed=st.integers(0, 2**32))
def test_interval_counts_total_the_completions_within_one_interval(rate: int, seconds: int, seed: int) -> None:
    rng = random.Random(seed)
    # Random per-second counts around the rate, with idle seconds (no iops line) now and then.
    per_second = [0 if rng.random() < 0.15 else rng.randint(max(rate - 2, 1), rate + 2) for _ in range(seconds)]
    jitter = sorted(rng.randint(0, 40) for _ in range(seconds))  # the helper thread runs a little late
    iops_text, hist_text, logged = fio_logs(per_second, jitter, rng)
    if not iops_text:
        return
    samples, _ = parse_logs({"vm_iops.1.log": iops_text, "vm_clat_hist.1.log": hist_text}, "h")
    counted = sum(iops for _, iops, _ in Series(tuple(samples)).totals())  # 1 s intervals: IOPS = I/Os
    # One interval's worth (the busiest second holds at most rate + 2): the hist lines count every
    # completion exactly and the clamp to fio's truncation bounds gives back what it takes; only the
    # unlogged tail after the last hist line and the truncated iops log's rounding remain
    # (3000 seeded runs: at most 0.97 x rate off, 0.11 x rate on average; the truncated iops log
    # alone is 2.3 off on average).
    assert counted == pytest.approx(logged, abs=rate + 2), (per_second, jitter)
