"""relative_to_baseline ("within 5 % of the baseline") and scaling_efficiency ("117.7 of 120 GB/s = 98 %")."""

from __future__ import annotations

import pytest

from iogate.judging import relative_to_baseline, scaling_efficiency

PROTOCOLS = {"FC-4G": 10_000.0, "iSCSI": 9_700.0, "NFS": 10_300.0, "NVMe-TCP": 8_000.0}


def test_within_5pct_of_the_baseline_passes_for_close_protocols() -> None:
    close = {k: v for k, v in PROTOCOLS.items() if k != "NVMe-TCP"}
    verdict = relative_to_baseline.evaluate(close, "FC-4G", relative_to_baseline.Params(tolerance_pct=5))
    assert verdict.passed and verdict.measured == pytest.approx(3.0) and verdict.unit == "% points"
    rows = {row["name"]: row["relative"] for row in verdict.evidence}
    assert rows == pytest.approx({"FC-4G": 100.0, "iSCSI": 97.0, "NFS": 103.0})
    assert "FC-4G = 100" in verdict.detail and "each within 95..105" in verdict.detail


def test_a_protocol_outside_the_tolerance_fails_and_is_named() -> None:
    verdict = relative_to_baseline.evaluate(PROTOCOLS, "FC-4G", relative_to_baseline.Params(tolerance_pct=5))
    assert not verdict.passed and verdict.measured == pytest.approx(20.0)
    assert "out of bounds: NVMe-TCP" in verdict.detail


def test_one_sided_modes() -> None:
    # Higher is better (IOPS): +3 % is fine, -3 % is fine at 5 %, -20 % is not.
    assert not relative_to_baseline.evaluate(PROTOCOLS, "FC-4G", relative_to_baseline.Params(tolerance_pct=5, mode="not_below")).passed
    higher = relative_to_baseline.evaluate({"base": 100.0, "new": 130.0}, "base",
                                           relative_to_baseline.Params(tolerance_pct=5, mode="not_below"))
    assert higher.passed and "each >= 95" in higher.detail
    # Lower is better (latency): 130 % of the baseline fails at 25 %.
    latency = {"base": 1.0, "new": 1.3}
    p99 = relative_to_baseline.Params(tolerance_pct=25, mode="not_above", metric="p99_latency_ms")
    assert not relative_to_baseline.evaluate(latency, "base", p99).passed
    assert relative_to_baseline.evaluate({"base": 1.0, "new": 0.5}, "base",
                                         relative_to_baseline.Params(tolerance_pct=25, mode="not_above", metric="mean_latency_ms")).passed


def test_baseline_must_be_measured_and_positive() -> None:
    with pytest.raises(ValueError, match="baseline 'FC-8G' not among"):
        relative_to_baseline.evaluate(PROTOCOLS, "FC-8G", relative_to_baseline.Params(tolerance_pct=5))
    assert not relative_to_baseline.evaluate({"base": 0.0, "x": 1.0}, "base", relative_to_baseline.Params(tolerance_pct=5)).passed


def test_efficiency_against_the_data_path_limit() -> None:
    vast = scaling_efficiency.evaluate(117.7, scaling_efficiency.Params(min_efficiency_pct=95), limit=120.0)
    assert vast.passed and vast.measured == pytest.approx(98.08, abs=0.01)
    ten_gbe = scaling_efficiency.evaluate(110.9, scaling_efficiency.Params(min_efficiency_pct=95), limit=120.0)
    assert not ten_gbe.passed and ten_gbe.measured == pytest.approx(92.4, abs=0.1)


def test_efficiency_against_n_times_one_host_for_client_stepping() -> None:
    steps = {1: 10.0, 2: 19.8, 4: 38.0, 6: 45.0}
    verdict = scaling_efficiency.evaluate(steps, scaling_efficiency.Params(min_efficiency_pct=90), single_host=10.0)
    assert not verdict.passed and verdict.measured == pytest.approx(75.0)
    assert [row["passed"] for row in verdict.evidence] == [True, True, True, False]
    assert scaling_efficiency.evaluate({k: v for k, v in steps.items() if k < 6},
                                       scaling_efficiency.Params(min_efficiency_pct=90), single_host=10.0).passed
    assert scaling_efficiency.evaluate(38.0, scaling_efficiency.Params(min_efficiency_pct=95), single_host=10.0, hosts=4).passed


def test_efficiency_needs_exactly_one_reference() -> None:
    with pytest.raises(ValueError, match="exactly one reference"):
        scaling_efficiency.evaluate(1.0, scaling_efficiency.Params(min_efficiency_pct=90))
    with pytest.raises(ValueError, match="exactly one reference"):
        scaling_efficiency.evaluate(1.0, scaling_efficiency.Params(min_efficiency_pct=90), limit=2.0, single_host=1.0)


def test_the_metrics_a_spec_may_name_are_those_the_tests_compare() -> None:
    import typing

    from iogate.judging.evidence import RUN_FIGURES
    from iogate.results.compare import STORED_METRICS

    metrics = set(typing.get_args(relative_to_baseline.Metric))
    assert set(RUN_FIGURES) <= metrics and set(STORED_METRICS) <= metrics and {"iops", "mb_per_s"} <= metrics
    assert set(relative_to_baseline.HIGHER_IS_BETTER) | set(relative_to_baseline.LOWER_IS_BETTER) == metrics


@pytest.mark.parametrize(("metric", "mode"), [("p99_latency_ms", "not_below"), ("mean_latency_ms", "not_below"),
                                              ("iops", "not_above"), ("mb_per_s", "not_above")])
def test_a_one_sided_mode_on_the_better_side_is_refused(metric: str, mode: str) -> None:
    """p99 latency judged not_below fails when latency improves and never when it doubles: refused."""
    with pytest.raises(ValueError, match=rf"mode {mode} is refused for metric {metric}: allowed mode within or not_"):
        relative_to_baseline.Params(tolerance_pct=10, mode=mode, metric=metric)
