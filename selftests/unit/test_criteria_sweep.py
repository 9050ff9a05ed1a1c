"""iops_at_latency ("780k IOPS @ 0.5 ms") and knee ("I/O before saturation") on sweep points."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.engines.fio.parse import load_json, parse_jobs
from iogate.judging import iops_at_latency, knee
from iogate.judging.points import SweepPoint
from iogate.metrics.types import RunResult, Series

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
US = 1000
MS = 1_000_000

# A thread sweep as arrays behave: IOPS grow at ~flat latency, then stall while latency climbs
# (Little's law past saturation). The last point before latency turns up is 8 threads.
HOCKEY_STICK = [
    SweepPoint(f"t{threads}", iops, lat_us * US, {99.0: 3 * lat_us * US})
    for threads, iops, lat_us in [
        (1, 100_000, 150), (2, 195_000, 155), (4, 380_000, 160), (8, 700_000, 175),
        (16, 780_000, 300), (32, 800_000, 600), (64, 805_000, 1200),
    ]
]


def test_iops_at_latency_reports_the_highest_point_within_the_limit() -> None:
    verdict = iops_at_latency.evaluate(HOCKEY_STICK, iops_at_latency.Params(max_latency="0.5ms", min_iops=780_000))
    assert verdict.passed and verdict.measured == 780_000
    assert "point t16" in verdict.detail and "@ mean 0.3 ms" in verdict.detail
    assert len(verdict.evidence) == 7


def test_iops_at_latency_fails_below_the_committed_figure() -> None:
    verdict = iops_at_latency.evaluate(HOCKEY_STICK, iops_at_latency.Params(max_latency="0.5ms", min_iops=919_000))
    assert not verdict.passed and verdict.measured == 780_000
    p99 = iops_at_latency.evaluate(HOCKEY_STICK, iops_at_latency.Params(max_latency="0.5ms", min_iops=780_000, stat="p99"))
    assert not p99.passed and p99.measured == 380_000  # p99 = 3 x mean here


def test_iops_at_latency_with_no_point_under_the_limit_fails_with_zero() -> None:
    verdict = iops_at_latency.evaluate(HOCKEY_STICK, iops_at_latency.Params(max_latency="100us", min_iops=1))
    assert not verdict.passed and verdict.measured == 0.0 and "no point" in verdict.detail


def test_missing_percentile_is_an_error_not_a_zero() -> None:
    with pytest.raises(ValueError, match=r"no p99\.9 recorded"):
        iops_at_latency.evaluate(HOCKEY_STICK, iops_at_latency.Params(max_latency="1ms", min_iops=1, stat="p99.9"))


def test_chord_knee_is_the_point_farthest_below_the_chord() -> None:
    verdict = knee.evaluate(HOCKEY_STICK, knee.Params())
    # Scaled to [0, 1]: t8 sits at (0.851, 0.024), t16 at (0.965, 0.143); t8 is farther below the diagonal.
    assert verdict.passed and verdict.measured == 700_000 and verdict.bound == 0.0
    assert [row["knee"] for row in verdict.evidence].index(True) == 3
    assert "knee at point t8" in verdict.detail
    distances = [row["distance_below_chord"] for row in verdict.evidence]
    assert distances[3] == max(distances) > distances[4] > 0


def test_slope_knee_is_the_last_point_before_latency_per_iops_turns_steep() -> None:
    verdict = knee.evaluate(HOCKEY_STICK, knee.Params(method="slope", slope_factor=3.0))
    # Segment 8 -> 16 threads: 125 us over 80k IOPS, ~30x the initial slope.
    assert verdict.measured == 700_000 and "knee at point t8" in verdict.detail


def test_knee_bound_form_passes_and_fails() -> None:
    assert knee.evaluate(HOCKEY_STICK, knee.Params(min_knee_iops=650_000)).passed
    failed = knee.evaluate(HOCKEY_STICK, knee.Params(min_knee_iops=750_000))
    assert not failed.passed and failed.bound == 750_000 and "measured 700000 IOPS" in failed.line()


def curve(*points: tuple[float, float]) -> list[SweepPoint]:
    """(IOPS, mean latency us) in load order, labelled p0, p1 ..."""
    return [SweepPoint(f"p{i}", iops, lat_us * US) for i, (iops, lat_us) in enumerate(points)]


def test_latency_growing_with_iops_from_the_start_is_saturated_from_the_first_point() -> None:
    linear = [SweepPoint(str(i), 1000.0 * i, 100_000.0 * i) for i in range(1, 6)]  # 0.1 -> 0.5 ms: x2 at once
    for method in ("chord", "slope"):
        verdict = knee.evaluate(linear, knee.Params(method=method, min_knee_iops=10))
        assert not verdict.passed and verdict.measured == 1000
        assert "saturated from the first point" in verdict.detail and "(x5, +400 us)" in verdict.detail


def test_flat_iops_with_doubling_latency_is_saturated_from_the_first_point_not_a_chord_knee() -> None:
    # Scaled to [0, 1] the chord sees a bend at p1; IOPS grew 1 % while latency doubled at once.
    flat = curve((10_000, 100), (10_100, 200), (10_150, 400), (10_200, 800))
    verdict = knee.evaluate(flat, knee.Params())
    assert not verdict.passed and verdict.measured == 10_000 and "saturated from the first point" in verdict.detail
    assert not any(row["knee"] for row in verdict.evidence)


def test_a_ten_percent_rise_is_not_a_knee() -> None:
    # The chord alone (scale-invariant) would call p3 a knee: 100 -> 110 us is noise, not saturation.
    gentle = curve((1000, 100), (2000, 101), (3000, 102), (3500, 104), (3600, 110))
    unbounded = knee.evaluate(gentle, knee.Params())
    assert not unbounded.passed and "not saturated within the sweep" in unbounded.detail and "no knee measured" in unbounded.detail
    assert "(x1.1, +10 us)" in unbounded.detail
    bounded = knee.evaluate(gentle, knee.Params(min_knee_iops=3000))
    assert bounded.passed and bounded.measured == 3600 and "the knee lies beyond it" in bounded.detail
    too_high = knee.evaluate(gentle, knee.Params(min_knee_iops=5000))
    assert not too_high.passed and "never reached 5000 IOPS" in too_high.detail


def test_both_minimum_rises_are_needed() -> None:
    fast_path = curve((1000, 20), (2000, 21), (3000, 40), (3100, 45))  # +125 % but only +25 us
    slow_path = curve((1000, 1000), (2000, 1010), (3000, 1090), (3100, 1100))  # +100 us but only +10 %
    for sweep in (fast_path, slow_path):
        assert "not saturated within the sweep" in knee.evaluate(sweep, knee.Params()).detail
    # Lowering the absolute minimum makes the fast path's rise count: knee at p1, the last point before it.
    verdict = knee.evaluate(fast_path, knee.Params(min_rise_latency="10us"))
    assert "knee at point p1" in verdict.detail and verdict.measured == 2000
    assert knee.Params(min_rise_latency="10us").min_rise_latency == 10_000  # YAML form


def test_a_real_knee_is_reported_with_the_curves_latency_growth() -> None:
    verdict = knee.evaluate(HOCKEY_STICK, knee.Params(min_knee_iops=500_000))
    assert verdict.passed and verdict.measured == 700_000
    assert "knee at point t8" in verdict.detail and "0.15 -> 1.2 ms over the sweep (x8, +1050 us)" in verdict.detail
    growth = {row["point"]: row["latency_growth"] for row in verdict.evidence}
    assert growth["t1"] == 1 and growth["t64"] == pytest.approx(8.0)


def test_two_points_cannot_locate_a_knee() -> None:
    rising = knee.evaluate(curve((1000, 100), (1500, 400)), knee.Params(min_knee_iops=10))
    assert not rising.passed and "two points" in rising.detail
    level = knee.evaluate(curve((1000, 100), (2000, 105)), knee.Params(min_knee_iops=1500))
    assert level.passed and "not saturated within the sweep" in level.detail and level.measured == 2000
    single = knee.evaluate(curve((1000, 100)), knee.Params(min_knee_iops=10))
    assert not single.passed and "one point" in single.detail


def test_slope_knee_when_more_load_brings_no_more_iops() -> None:
    stalled = [SweepPoint("a", 1000, 100_000), SweepPoint("b", 2000, 101_000), SweepPoint("c", 2000, 200_000)]
    assert knee.evaluate(stalled, knee.Params(method="slope")).measured == 2000


def test_knee_is_deterministic_and_rejects_unknown_methods() -> None:
    assert knee.evaluate(HOCKEY_STICK, knee.Params()) == knee.evaluate(list(HOCKEY_STICK), knee.Params())
    with pytest.raises(ValueError, match="'chord' or 'slope'"):  # refused with the bounds, before any sweep is judged
        knee.Params(method="magic")
    assert not knee.evaluate([], knee.Params()).passed


def test_sweep_point_from_a_real_run() -> None:
    data = load_json((DATA / "randrw.json").read_text(), "randrw.json")
    run = RunResult("qd4", tuple(parse_jobs(data, "localhost")), Series(), 0, 0)
    point = SweepPoint.from_run(run, "qd4")
    assert point.iops == pytest.approx(run.total_iops)
    assert 0 < point.latency_ns("p50") <= point.latency_ns("p99") <= point.latency_ns("p99.9")
    assert iops_at_latency.evaluate([point], iops_at_latency.Params(max_latency="50ms", min_iops=500)).passed


def test_sweep_table_reads_the_baseline_transport_as_100_pct() -> None:
    from iogate.procedures.dell import relative_rows

    def record(point: str, iops: float) -> dict[str, object]:
        return {"point": point, "iops": iops}

    block = [record("rd70-4k-t8", 2000.0), record("rd70-4k-t32", 0.0)]
    nbd = [record("rd70-4k-t8", 1500.0), record("rd70-4k-t32", 10.0)]
    assert [r["iops_vs_block_pct"] for r in relative_rows(block, block, "block")] == [100.0, ""]
    assert [r["iops_vs_block_pct"] for r in relative_rows(nbd, block, "block")] == [75.0, ""]


def test_a_spec_may_accept_a_stated_outcome_and_the_detail_still_says_it() -> None:
    flat = curve((10_000, 100), (10_100, 200), (10_150, 400), (10_200, 800))
    accepted = knee.evaluate(flat, knee.Params(min_knee_iops=5000, accept=("saturated_from_first_point",)))
    assert accepted.passed and "saturated from the first point" in accepted.detail and "accepted by the spec" in accepted.detail
    assert not knee.evaluate(flat, knee.Params(min_knee_iops=20_000, accept=("saturated_from_first_point",))).passed  # floor still holds
    gentle = curve((1000, 100), (2000, 101), (3000, 102))
    assert knee.evaluate(gentle, knee.Params(accept=("not_saturated",))).passed
    assert not knee.evaluate(gentle, knee.Params(accept=("saturated_from_first_point",))).passed  # each outcome only by name
