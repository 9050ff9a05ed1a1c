"""steady_state: SNIA PTS window of 5 rounds, range <= 20 %, slope excursion <= 10 % of the mean."""

from __future__ import annotations

import pytest

from iogate.judging import steady_state
from iogate.judging.steady_state import check_window, least_squares_slope

# 4 KiB random write IOPS per round of a flash device: fresh-out-of-box high, settling after GC starts.
SETTLING = [90_000, 70_000, 52_000, 41_000, 36_000, 34_000, 33_500, 33_800, 33_200, 33_900, 33_600]


def test_least_squares_slope() -> None:
    assert least_squares_slope([1, 2, 3, 4, 5]) == pytest.approx(1.0)
    assert least_squares_slope([5, 5, 5]) == 0.0


def test_settling_device_reaches_steady_state_and_names_the_round() -> None:
    verdict = steady_state.evaluate(SETTLING, steady_state.Params())
    assert verdict.passed, verdict.line()
    first = next(i for i in range(5, len(SETTLING) + 1) if check_window(SETTLING[i - 5:i], 20, 10)["steady"])
    assert verdict.measured == first == 9 and verdict.window == "rounds 5-9"
    assert verdict.evidence[-1]["steady"] is True
    assert all(row["steady"] is False for row in verdict.evidence[:-1])


def test_steady_state_too_late_fails() -> None:
    verdict = steady_state.evaluate(SETTLING, steady_state.Params(max_rounds=7))
    assert not verdict.passed and verdict.measured == 7 and "no window of 5 rounds within 7" in verdict.detail


def test_a_steady_trend_fails_the_slope_but_not_the_range() -> None:
    drifting = [100.0, 104.0, 108.0, 112.0, 116.0]  # range 16 % of mean 108: ok; excursion 16/108 = 14.8 %: not ok
    row = check_window(drifting, 20, 10)
    assert row["range_pct"] < 20 and row["slope_excursion_pct"] > 10 and not row["steady"]
    assert not steady_state.evaluate(drifting, steady_state.Params()).passed


def test_noise_without_trend_fails_the_range() -> None:
    noisy = [100.0, 130.0, 95.0, 128.0, 100.0]
    row = check_window(noisy, 20, 10)
    assert row["range_pct"] > 20 and not steady_state.evaluate(noisy, steady_state.Params()).passed


def test_a_failure_says_how_far_the_closest_window_was() -> None:
    """Range 35 / mean 110.6 = 31.6 %; slope -0.2 per round x 4 rounds / 110.6 = 0.7 % (by hand)."""
    noisy = [100.0, 130.0, 95.0, 128.0, 100.0]
    detail = steady_state.evaluate(noisy, steady_state.Params()).detail
    assert detail.endswith("closest rounds 1-5: range 31.6 %, slope excursion 0.7 % of mean 110.6 (100, 130, 95, 128, 100)")


def test_too_few_rounds_fails() -> None:
    verdict = steady_state.evaluate([1.0, 1.0, 1.0], steady_state.Params())
    assert not verdict.passed and "only 3 rounds" in verdict.detail
