"""A corpus of malformed specs: each is refused when it loads, at file:line, naming the allowed values.

Every spec here is one check in one family (the events family also gets the
no_errors check its tests read by name, after the check under test, so line
numbers hold):

    1 version: 1
    2 families:
    3   <family>:
    4     checks:
    5       <check>:
    6         criterion: <criterion>
    7         <first bound>
    8         <second bound>

A bound that lets a check never fail (max_drop_pct .inf or 500, tolerance_pct
150 in mode within, minimum -.inf) or never pass (min_efficiency_pct 920, a
latency of 0ms), a knee without min_knee_iops and a check name that misspells
its case are issue 26's cases; the rest cover every other bound of every
criterion. Each expected line and range was worked from the template above and
the criterion's meaning, not read back from the loader.
"""

from __future__ import annotations

import math
import typing
from pathlib import Path

import pytest

from iogate.errors import LabFileError
from iogate.judging import relative_to_baseline, scaling_efficiency, steady_state
from iogate.judging.spec import load_spec

# (id, family, check, criterion, bound lines, expected line, field after the check ("" = the check), expected text)
CORPUS: list[tuple[str, str, str, str, tuple[str, ...], int, str, str]] = [
    # issue 26, "What passes today" 5:
    ("minimum -.inf", "baseline", "iops_min", "throughput_min", ("minimum: -.inf",), 7, "minimum",
     "minimum -inf is refused: allowed 0 < minimum (IOPS or MB/s"),
    ("max_drop_pct .inf", "events", "snapshot_read_drop_max", "throughput_impact", ("max_drop_pct: .inf",), 7, "max_drop_pct",
     "max_drop_pct inf is refused: allowed 0 <= max_drop_pct < 100 (% of the baseline window's figure"),
    ("max_drop_pct 500", "events", "snapshot_read_drop_max", "throughput_impact", ("max_drop_pct: 500",), 7, "max_drop_pct",
     "max_drop_pct 500 is refused: allowed 0 <= max_drop_pct < 100"),
    ("tolerance_pct 150 within", "protocols", "iops_vs_baseline_protocol", "relative_to_baseline",
     ("mode: within", "tolerance_pct: 150"), 8, "tolerance_pct",
     "tolerance_pct 150 is refused in mode within: allowed 0 <= tolerance_pct < 100 (percentage points"),
    ("min_efficiency_pct 920", "scaling", "linear_efficiency_min", "scaling_efficiency", ("min_efficiency_pct: 920",), 7,
     "min_efficiency_pct", "min_efficiency_pct 920 is refused: allowed 0 < min_efficiency_pct <= 100 (% of the reference"),
    ("knee without min_knee_iops", "sweep", "io_before_saturation", "knee", ("method: chord",), 5, "min_knee_iops",
     "a knee check in a spec needs min_knee_iops: the IOPS the knee must reach (> 0, IOPS)"),
    ("speed_frontend_raed_latency_max", "kpi", "speed_frontend_raed_latency_max", "latency_bound", ("max_latency: 150us",), 5, "",
     "names no kpi case: 'frontend_raed' after 'speed_' is not a case (cases, workloads/iogen.yaml: frontend_read, backend_read, "
     "frontend_write, backend_write; nearest: speed_frontend_read_...)"),
    # every other bound out of its range:
    ("minimum 0", "baseline", "iops_min", "throughput_min", ("minimum: 0",), 7, "minimum", "minimum 0 is refused: allowed 0 < minimum"),
    ("minimum .nan", "baseline", "iops_min", "throughput_min", ("minimum: .nan",), 7, "minimum",
     "minimum nan is refused: allowed 0 < minimum"),
    ("max_drop_pct 100", "events", "replica_sync_drop_max", "throughput_impact", ("max_drop_pct: 100",), 7, "max_drop_pct",
     "a drop is at most 100 % (nothing left), so a bound of 100 or more could never fail"),
    ("max_drop_pct -5", "events", "replica_sync_drop_max", "throughput_impact", ("max_drop_pct: -5",), 7, "max_drop_pct",
     "max_drop_pct -5 is refused: allowed 0 <= max_drop_pct < 100"),
    ("tolerance_pct 100 not_below", "regression", "iops_vs_stored_baseline", "relative_to_baseline",
     ("mode: not_below", "tolerance_pct: 100"), 8, "tolerance_pct",
     "tolerance_pct 100 is refused in mode not_below: allowed 0 <= tolerance_pct < 100"),
    ("tolerance_pct .inf not_above", "regression", "p99_vs_stored_baseline", "relative_to_baseline",
     ("mode: not_above", "tolerance_pct: .inf"), 8, "tolerance_pct",
     "tolerance_pct inf is refused: allowed 0 <= tolerance_pct (percentage points"),
    ("tolerance_pct -1", "scaling", "slow_host_max_below_median", "relative_to_baseline", ("mode: not_below", "tolerance_pct: -1"), 8,
     "tolerance_pct", "tolerance_pct -1 is refused: allowed 0 <= tolerance_pct"),
    ("min_efficiency_pct 0", "scaling", "datapath_efficiency_min", "scaling_efficiency", ("min_efficiency_pct: 0",), 7,
     "min_efficiency_pct", "min_efficiency_pct 0 is refused: allowed 0 < min_efficiency_pct <= 100"),
    ("min_knee_iops 0", "sweep", "io_before_saturation", "knee", ("min_knee_iops: 0",), 7, "min_knee_iops",
     "min_knee_iops 0 is refused: allowed 0 < min_knee_iops (IOPS"),
    ("min_knee_iops null", "sweep", "io_before_saturation", "knee", ("min_knee_iops: null",), 7, "min_knee_iops",
     "a knee check in a spec needs min_knee_iops"),
    ("knee slope_factor 1", "sweep", "io_before_saturation", "knee", ("min_knee_iops: 1000", "slope_factor: 1"), 8, "slope_factor",
     "slope_factor 1 is refused: allowed 1 < slope_factor (x the initial slope"),
    ("knee min_rise_pct 0", "sweep", "io_before_saturation", "knee", ("min_knee_iops: 1000", "min_rise_pct: 0"), 8, "min_rise_pct",
     "min_rise_pct 0 is refused: allowed 0 < min_rise_pct"),
    ("max_latency 0ms", "baseline", "p99_latency_max", "latency_bound", ("max_latency: 0ms",), 7, "max_latency",
     "max_latency_ns 0ms is refused: allowed a latency above 0 (e.g. 0.5ms, 150us)"),
    ("max_latency .inf", "baseline", "p99_latency_max", "latency_bound", ("max_latency: .inf",), 7, "max_latency",
     "latency inf has no unit: write e.g. infms"),
    ("latency stat p0", "baseline", "p99_latency_max", "latency_bound", ("max_latency: 1ms", "stat: p0"), 8, "stat",
     "latency statistic 'p0': percentile must be in (0, 100]"),
    ("min_iops -1", "sweep", "iops_at_latency", "iops_at_latency", ("max_latency: 1ms", "min_iops: -1"), 8, "min_iops",
     "min_iops -1 is refused: allowed 0 < min_iops (IOPS"),
    ("max_rise_pct .inf", "events", "dedupe_latency_rise_max", "latency_delta", ("max_rise_pct: .inf",), 7, "max_rise_pct",
     "max_rise_pct inf is refused: allowed 0 <= max_rise_pct (% over the baseline window's figure"),
    ("max_rise_pct -10", "events", "dedupe_latency_rise_max", "latency_delta", ("max_rise_pct: -10",), 7, "max_rise_pct",
     "max_rise_pct -10 is refused: allowed 0 <= max_rise_pct"),
    ("max_rise_pct with no stats", "events", "dedupe_latency_rise_max", "latency_delta", ("max_rise_pct: 28.5", "stats: []"), 8,
     "stats", "stats [] is refused: allowed one or more latency statistics (mean, p50, p99"),
    ("p99 vs stored baseline not_below", "regression", "p99_vs_stored_baseline", "relative_to_baseline",
     ("mode: not_below", "metric: p99_latency_ms", "tolerance_pct: 20"), 8, "metric",
     "mode not_below is refused for metric p99_latency_ms: allowed mode within or not_above (lower is better)"),
    ("regression metric misspelt", "regression", "p99_vs_stored_baseline", "relative_to_baseline",
     ("mode: not_above", "metric: p99_latency", "tolerance_pct: 20"), 8, "metric",
     "Input should be 'iops', 'mb_per_s', 'mean_latency_ms' or 'p99_latency_ms'"),
    ("targets tolerance 1", "tiles", "targets_held", "target_iops_held", ("tolerance: 1.0",), 7, "tolerance",
     "tolerance 1 is refused: allowed 0 <= tolerance < 1 (a fraction of the target"),
    ("targets min_fraction 1.5", "tiles", "targets_held", "target_iops_held", ("min_fraction: 1.5",), 7, "min_fraction",
     "min_fraction 1.5 is refused: allowed 0 < min_fraction <= 1 (a fraction of the intervals"),
    ("targets min_fraction 0", "events", "dedupe_targets_held", "target_iops_held", ("min_fraction: 0",), 7, "min_fraction",
     "min_fraction 0 is refused: allowed 0 < min_fraction <= 1"),
    ("steady max_rounds < window_rounds", "kpi", "steady_state", "steady_state", ("window_rounds: 5", "max_rounds: 3"), 8, "max_rounds",
     "max_rounds 3 is refused: allowed max_rounds >= window_rounds (5, rounds)"),
    ("steady max_range_pct 0", "kpi", "steady_state", "steady_state", ("max_range_pct: 0",), 7, "max_range_pct",
     "max_range_pct 0 is refused: allowed 0 < max_range_pct (% of the window's mean"),
    ("steady max_slope_pct .inf", "kpi", "steady_state", "steady_state", ("max_slope_pct: .inf",), 7, "max_slope_pct",
     "max_slope_pct inf is refused: allowed 0 < max_slope_pct"),
    ("max_errors -1", "baseline", "no_errors", "no_io_errors", ("max_errors: -1",), 7, "max_errors",
     "Input should be greater than or equal to 0"),
    ("throughput_backend_wirte_at_latency", "kpi", "throughput_backend_wirte_at_latency", "iops_at_latency",
     ("max_latency: 1ms", "min_iops: 1000"), 5, "", "names no kpi case: 'backend_wirte' after 'throughput_' is not a case"),
    ("speed_read_latency_max", "kpi", "speed_read_latency_max", "latency_bound", ("max_latency: 1ms",), 5, "",
     "names no kpi case: 'read_latency' after 'speed_' is not a case"),
    ("snapshot_raed_drop_max", "events", "snapshot_raed_drop_max", "throughput_impact", ("max_drop_pct: 5",), 5, "",
     "names no events case: 'raed' after 'snapshot_' is not a case (cases, tests/test_snapshot_impact.py: read, frontend_write, "
     "backend_write; nearest: snapshot_read_...)"),
    ("mirror_frontend_wirte_drop_max", "events", "mirror_frontend_wirte_drop_max", "throughput_impact", ("max_drop_pct: 50",), 5, "",
     "nearest: mirror_frontend_write_..."),
    ("source of no kind", "baseline", "iops_min", "throughput_min", ("minimum: 100", "source: from a blog post"), 8, "source",
     "source 'from a blog post' must start with one of: [published]"),
    ("source calibrated without N", "baseline", "iops_min", "throughput_min", ("minimum: 100", "source: calibrated N=many runs"), 8,
     "source", "write calibrated N=<runs>"),
    ("source kind alone", "baseline", "iops_min", "throughput_min", ("minimum: 100", "source: '[BUYER]'"), 8, "source",
     "says which kind but not what"),
    ("source calibrated N alone", "baseline", "iops_min", "throughput_min", ("minimum: 100", "source: 'calibrated N=40:'"), 8,
     "source", "says which kind but not what"),
]


def spec_text(family: str, check: str, criterion: str, bounds: tuple[str, ...]) -> str:
    lines = ["version: 1", "families:", f"  {family}:", "    checks:", f"      {check}:", f"        criterion: {criterion}",
             *(f"        {bound}" for bound in bounds)]
    if family == "events":
        lines.append("      no_errors: {criterion: no_io_errors}")
    return "\n".join(lines) + "\n"


def test_the_corpus_is_large_enough_and_names_distinct_mistakes() -> None:
    assert len(CORPUS) >= 25
    assert len({case[0] for case in CORPUS}) == len(CORPUS)
    assert len({(case[2], case[4]) for case in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize(("family", "check", "criterion", "bounds", "line", "field", "text"),
                         [case[1:] for case in CORPUS], ids=[case[0] for case in CORPUS])
def test_a_malformed_spec_is_refused_at_file_line_naming_the_allowed_values(
        tmp_path: Path, family: str, check: str, criterion: str, bounds: tuple[str, ...], line: int, field: str, text: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text(family, check, criterion, bounds))
    with pytest.raises(LabFileError) as refused:
        load_spec(path)
    first = str(refused.value).splitlines()[0]
    where = f"{path} line {line}: families.{family}.checks.{check}{f'.{field}' if field else ''}: "
    assert first.startswith(where), first
    assert text in first, first


def test_each_mistake_fixed_loads(tmp_path: Path) -> None:
    """The template itself is sound: the same checks with bounds in range load (so each refusal above is the bound's)."""
    good = {
        ("baseline", "iops_min", "throughput_min"): ("minimum: 100", "source: '[BUYER] committed IOPS'"),
        ("events", "snapshot_read_drop_max", "throughput_impact"): ("max_drop_pct: 99.9",),
        ("protocols", "iops_vs_baseline_protocol", "relative_to_baseline"): ("mode: within", "tolerance_pct: 99.9"),
        ("regression", "p99_vs_stored_baseline", "relative_to_baseline"): ("mode: not_above", "tolerance_pct: 150"),
        ("scaling", "linear_efficiency_min", "scaling_efficiency"): ("min_efficiency_pct: 100",),
        ("sweep", "io_before_saturation", "knee"): ("min_knee_iops: 1",),
        ("kpi", "speed_frontend_read_latency_max", "latency_bound"): ("max_latency: 150us",),
        ("kpi", "speed_latency_max", "latency_bound"): ("max_latency: 150us",),
        ("kpi", "steady_state", "steady_state"): ("window_rounds: 5", "max_rounds: 5"),
        ("events", "snapshot_p99_latency_max", "latency_bound"): ("max_latency: 1ms", "source: 'calibrated N=20: worst x 1.25'"),
        ("events", "mirror_backend_write_drop_max", "throughput_impact"): ("max_drop_pct: 70",),
    }
    for (family, check, criterion), bounds in good.items():
        path = tmp_path / f"{family}-{check}.yaml"
        path.write_text(spec_text(family, check, criterion, bounds))
        assert load_spec(path).for_family(family)[check].criterion == criterion


# At the edges of the allowed ranges a check can still both pass and fail (worked by hand):
def test_at_the_widest_allowed_tolerance_a_fall_to_zero_still_fails() -> None:
    params = relative_to_baseline.Params(mode="within", tolerance_pct=99.9)
    assert not relative_to_baseline.evaluate({"iscsi": 1000.0, "nvme": 0.0}, "iscsi", params).passed  # deviation 100
    assert relative_to_baseline.evaluate({"iscsi": 1000.0, "nvme": 549.0}, "iscsi", params).passed  # deviation 45.1
    tight = relative_to_baseline.Params(mode="within", tolerance_pct=5)
    assert not relative_to_baseline.evaluate({"iscsi": 1000.0, "nvme": 549.0}, "iscsi", tight).passed  # NVMe at 54.9 %


def test_at_the_highest_allowed_efficiency_a_perfect_aggregate_still_passes() -> None:
    params = scaling_efficiency.Params(min_efficiency_pct=100)
    assert scaling_efficiency.evaluate(120.0, params, limit=120.0).passed  # 100 %
    assert not scaling_efficiency.evaluate(119.0, params, limit=120.0).passed  # 99.2 %


def test_a_window_as_long_as_the_allowed_rounds_still_passes() -> None:
    params = steady_state.Params(window_rounds=5, max_rounds=5)
    assert steady_state.evaluate([100.0] * 5, params).passed  # range 0 %, slope 0 %: steady at round 5
    assert not steady_state.evaluate([100.0, 200.0, 100.0, 200.0, 100.0], params).passed  # range 100/140 = 71 %


def test_an_infinite_bound_is_refused_in_every_float_bound() -> None:
    """The model config's safety net: no float bound of any criterion accepts inf or NaN, ranged or not."""
    from iogate.judging import registry

    checked = 0
    for criterion in registry.REGISTRY.values():
        for name, field in criterion.params.model_fields.items():
            if field.annotation is not float and float not in [typing.get_args(a)[0] if typing.get_args(a) else a
                                                               for a in typing.get_args(field.annotation)]:
                continue  # a float, or a float or None (min_knee_iops)
            checked += 1
            for value in (math.inf, -math.inf, math.nan):
                with pytest.raises(ValueError):
                    criterion.params.model_validate({**_required(criterion.params), name: value})
    assert checked == 18  # every float bound of the 12 criteria (no_stall: min_interval, min_ios; a new one: count it here)


def _required(model: type) -> dict[str, object]:
    """A valid value for every required bound of a Params model (so only the field under test is wrong)."""
    known: dict[str, object] = {"minimum": 1.0, "max_latency": "1ms", "max_rise_pct": 5.0, "max_drop_pct": 5.0, "min_iops": 1.0,
                                "tolerance_pct": 5.0, "min_efficiency_pct": 90.0}
    return {alias or name: known[alias or name] for name, field in model.model_fields.items()  # type: ignore[attr-defined]
            if field.is_required() for alias in [field.alias]}


def test_every_mistake_of_a_spec_is_named_at_once(tmp_path: Path) -> None:
    """One load names them all, in file order per family: a user fixes the file once, not once per mistake."""
    path = tmp_path / "spec.yaml"
    path.write_text("""\
version: 1
families:
  kpi:
    checks:
      speed_frontend_raed_latency_max: {criterion: latency_bound, max_latency: 150us}
      throughput_frontend_read_at_latency: {criterion: iops_at_latency, max_latency: 0.5ms, min_iops: -1}
  events:
    checks:
      snapshot_read_drop_max: {criterion: throughput_impact, max_drop_pct: 500}
      replica_sync_drop_max: {criterion: throughput_impact, max_drop_pct: 70, window: event}
      no_errors: {criterion: no_io_errors, source: from the vendor}
  sweep:
    checks:
      io_before_saturation: {criterion: knee}
      iops_at_latency: {criterion: iops_at_latecny}
""")
    with pytest.raises(LabFileError) as refused:
        load_spec(path)
    assert [line.split(": ", 2)[:2] for line in str(refused.value).splitlines()] == [
        [f"{path} line 5", "families.kpi.checks.speed_frontend_raed_latency_max"],
        [f"{path} line 6", "families.kpi.checks.throughput_frontend_read_at_latency.min_iops"],
        [f"{path} line 9", "families.events.checks.snapshot_read_drop_max.max_drop_pct"],
        [f"{path} line 10", "families.events.checks.replica_sync_drop_max.window"],
        [f"{path} line 11", "families.events.checks.no_errors.source"],
        [f"{path} line 14", "families.sweep.checks.io_before_saturation.min_knee_iops"],
        [f"{path} line 15", "families.sweep.checks.iops_at_latency.criterion"],
    ]
