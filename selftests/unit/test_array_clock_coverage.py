"""What the array's samples cover of a window (iogate.arrays.coverage) and the array's clock against
the controller's (iogate.arrays.clock): missing spans named, offsets stated with their uncertainty."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from iogate.arrays.base import ArraySample
from iogate.arrays.clock import ArrayClock, measure
from iogate.arrays.coverage import sample_coverage

T0 = datetime(2026, 11, 24, 3, 0, tzinfo=UTC)


def at(second: float, interval: float | None = 30.0) -> ArraySample:
    return ArraySample(T0 + timedelta(seconds=second), interval, 1.0, 1.0, 100.0, 100.0)


def test_samples_every_interval_leave_nothing_missing() -> None:
    got = sample_coverage([at(s) for s in range(15, 300, 30)], T0, T0 + timedelta(seconds=300))
    assert got.missing == () and got.samples == 10 and got.interval_s == 30.0


def test_a_lost_sample_in_the_middle_and_samples_ending_early_are_named() -> None:
    times = [15, 45, 105, 135]  # 75 lost; nothing after 135 of a window to 300
    got = sample_coverage([at(s) for s in times], T0, T0 + timedelta(seconds=300))
    assert got.missing == (
        (T0 + timedelta(seconds=45), T0 + timedelta(seconds=105), 1),
        (T0 + timedelta(seconds=135), T0 + timedelta(seconds=300), 5),
    )
    assert got.missing_samples == 6


def test_a_gap_under_one_and_a_half_intervals_is_the_grid_not_a_loss() -> None:
    got = sample_coverage([at(44), at(74)], T0, T0 + timedelta(seconds=118))  # 44 s from the start, 44 s to the end
    assert got.missing == ()


def test_no_samples_or_no_single_interval_is_said_not_judged() -> None:
    assert sample_coverage([], T0, T0 + timedelta(seconds=60)).describe() == [
        "the array reported no samples for this window: all of it is missing"
    ]
    assert sample_coverage([at(1, None)], T0, T0 + timedelta(seconds=60)).note == "coverage not judged: the samples report no interval"
    mixed = sample_coverage([at(1, 15.0), at(20, 300.0)], T0, T0 + timedelta(seconds=60))
    assert mixed.note == "coverage not judged: the samples report several intervals (15 s, 300 s)"


def test_the_offset_is_the_arrays_time_against_the_midpoint_of_our_two_readings() -> None:
    ours = iter([T0, T0 + timedelta(seconds=2)])  # the read took 2 s: midpoint T0 + 1 s
    array_time = (T0 + timedelta(seconds=1 + 42)).astimezone(timezone(timedelta(hours=-4)))  # 42 s ahead, in its own zone
    got = measure(lambda: [array_time], "GET /x date", resolution_s=1.0, now=lambda: next(ours))
    assert got == ArrayClock(42.0, 2.0, "GET /x date")  # +/- half the round trip (1 s) + the 1 s resolution


def test_several_nodes_give_their_mean_and_their_spread_widens_the_uncertainty() -> None:
    ours = iter([T0, T0])
    got = measure(lambda: [T0 + timedelta(seconds=10), T0 + timedelta(seconds=14)], "nodes", resolution_s=0.0, now=lambda: next(ours))
    assert got == ArrayClock(12.0, 2.0, "nodes")


def test_an_array_that_gives_no_time_is_not_read() -> None:
    ours = iter([T0, T0])
    got = measure(lambda: [], "GET /x date", resolution_s=1.0, now=lambda: next(ours))
    assert got.offset_s is None and got.describe() == "array clock not read: GET /x date: the array gave no time"
