"""A dedupe job that saved nothing, or cannot say, measured no dedupe's impact: the judge fails it."""

from __future__ import annotations

import math

import pytest

from iogate.arrays.static import reported
from iogate.judging.event_effect import effect_verdict
from iogate.verdict import Unit


def test_a_pass_that_saved_space_passes_and_says_how_much() -> None:
    verdict = effect_verdict("dedupe", {"saved_bytes": 62 << 20, "scope": "datastore"})
    assert verdict.passed and verdict.criterion == "dedupe_took_effect"
    assert verdict.measured == 62 << 20 and verdict.unit is Unit.BYTES
    assert "saved 65011712 bytes (62.0 MiB)" in verdict.detail


def test_a_pass_that_saved_nothing_fails() -> None:
    verdict = effect_verdict("dedupe", {"saved_bytes": 0})
    assert not verdict.passed
    assert "it did nothing, so its impact on the load was not measured" in verdict.detail


@pytest.mark.parametrize("evidence", [{}, {"saved_bytes": None}, {"saved_bytes": float("nan")}, {"saved_bytes": True},
                                      {"saved_bytes": "62 MiB"}])
def test_a_pass_that_cannot_say_is_no_data(evidence: dict) -> None:
    verdict = effect_verdict("dedupe", evidence)
    assert not verdict.passed and math.isnan(verdict.measured)
    assert verdict.detail.startswith("no data: the array's dedupe evidence holds no saved_bytes"), verdict.detail


def test_a_static_hook_reports_on_its_last_line() -> None:
    assert reported('scanning...\n{"saved_bytes": 4096}\n', "saved_bytes") == 4096.0
    assert reported('{"saved_bytes": 4096}\ndone', "saved_bytes") is None  # not the last line
    assert reported("", "saved_bytes") is None
    assert reported('["saved_bytes", 1]', "saved_bytes") is None
    assert reported('{"saved_bytes": "4 KiB"}', "saved_bytes") is None
