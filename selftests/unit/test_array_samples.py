"""The array's own samples (METRICS): the record, the window it is asked for, and what a caller makes of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from iogate.arrays.base import ArraySample, check_window, samples_evidence

T0 = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)


def sample(
    second: int, read: float | None, write: float | None, read_us: float | None, write_us: float | None, note: str = ""
) -> ArraySample:
    return ArraySample(T0 + timedelta(seconds=second), 15.0, read, write, read_us, write_us, note)


def test_a_sample_carries_its_time_zone() -> None:
    with pytest.raises(ValueError, match="time zone"):
        ArraySample(datetime(2026, 11, 23, 18, 0), 15.0, 1.0, 1.0, 1.0, 1.0)


def test_the_window_is_timezone_aware_and_forward() -> None:
    check_window(T0, T0 + timedelta(seconds=1))
    with pytest.raises(ValueError, match="timezone-aware"):
        check_window(T0.replace(tzinfo=None), T0 + timedelta(seconds=1))
    with pytest.raises(ValueError, match="not after the start"):
        check_window(T0, T0)


def test_no_samples_is_no_data_not_zeros() -> None:
    assert samples_evidence([]) is None


def test_iops_are_means_and_latency_is_weighted_by_operations() -> None:
    evidence = samples_evidence([sample(15, 300.0, 0.0, 100.0, None), sample(0, 100.0, 0.0, 500.0, None)])
    assert evidence is not None
    assert evidence["samples"] == 2 and evidence["first_sample"] == T0.isoformat() and evidence["interval_s"] == [15.0]
    assert evidence["read_iops_mean"] == 200.0
    assert evidence["read_latency_us_mean"] == (500.0 * 100 + 100.0 * 300) / 400  # 200 us: the busy interval counts more
    assert evidence["write_iops_mean"] == 0.0  # the array said 0: that is a figure
    assert evidence["write_latency_us_mean"] is None  # no write operations and no write latency: no figure, not 0
    assert "notes" not in evidence


def test_a_figure_the_array_did_not_report_is_left_out_not_counted_as_zero() -> None:
    evidence = samples_evidence([sample(0, None, 50.0, None, 300.0, "backfilled_data"), sample(15, 80.0, 150.0, 90.0, 100.0)])
    assert evidence is not None
    assert evidence["read_iops_mean"] == 80.0 and evidence["read_latency_us_mean"] == 90.0
    assert evidence["write_iops_mean"] == 100.0 and evidence["write_latency_us_mean"] == (300.0 * 50 + 100.0 * 150) / 200
    assert evidence["notes"] == ["backfilled_data"]
