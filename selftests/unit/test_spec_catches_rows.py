"""The spec catches read verdict rows as the test outcome did: a failure measured on a saturated
generator is neither the clean lab failing nor a check failing beyond the injected degradation."""

from __future__ import annotations

from typing import Any

import pytest

from selftests.spec_catches import assert_caught, failed, invalid

REASON = "generator saturated: host localhost was 97.0 % CPU busy over run point nbd-rd70-4k-t1"


def _row(criterion: str, passed: bool, reason: str | None = None) -> dict[str, Any]:
    return {"criterion": criterion, "passed": passed, "measured": 1, "bound": 2, "detail": "d", "measurement_invalid": reason}


ROWS = {"iops_min": [_row("iops_min", False)],
        "io_before_saturation": [_row("io_before_saturation[rd70-4k]", True), _row("io_before_saturation[rd70-4k]", False, REASON)],
        "no_errors": [_row("no_errors", True)]}


def test_a_failure_on_a_saturated_generator_does_not_stand() -> None:
    assert failed(ROWS) == {"iops_min"}
    assert failed(ROWS, with_invalid=True) == {"iops_min", "io_before_saturation"}
    assert invalid(ROWS) == {"io_before_saturation": REASON}


def test_the_injected_check_counts_even_when_invalid_and_nothing_else_may_stand() -> None:
    assert_caught(ROWS, {"iops_min"})  # io_before_saturation failed only on the saturated generator
    assert_caught({"io_before_saturation": ROWS["io_before_saturation"]}, {"io_before_saturation"})
    with pytest.raises(AssertionError, match=r"failed beyond the expected: \['iops_min'\]"):
        assert_caught(ROWS, {"io_before_saturation"})


def test_rows_without_the_field_stand_as_before() -> None:
    """Rows written before the field existed (calibration records) read as standing failures."""
    old = {"iops_min": [{"criterion": "iops_min", "passed": False, "measured": 1, "bound": 2, "detail": "d"}]}
    assert failed(old) == {"iops_min"} and invalid(old) == {}


def test_a_pass_on_a_saturated_generator_is_no_failure_and_no_catch() -> None:
    """Its row keeps the criterion's judgement (passed) beside the reason: neither a standing failure nor the catch."""
    rows = {"iops_min": [_row("iops_min", True, REASON)], "no_errors": [_row("no_errors", True)]}
    assert failed(rows) == set() and failed(rows, with_invalid=True) == set() and invalid(rows) == {}
    with pytest.raises(AssertionError, match=r"not caught: \['iops_min'\]"):
        assert_caught(rows, {"iops_min"})
