"""The registry lists every criterion module; outcome turns verdicts into the failing test's line."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import iogate.judging
from iogate.judging import outcome, registry
from iogate.judging.params import CriterionParams
from iogate.verdict import Unit, Verdict

HELPERS = {"common", "params", "points", "registry", "spec", "outcome", "families", "events_family", "scaling_family",
           "family_rules", "cases", "judge", "evidence", "regression", "validity", "live", "monotonic", "steady_stop",
           "event_effect", "nothing_judged"}


def test_every_criterion_module_is_registered_under_its_name() -> None:
    modules = {m.name for m in pkgutil.iter_modules(iogate.judging.__path__)} - HELPERS
    assert modules == set(registry.REGISTRY)
    for name, entry in registry.REGISTRY.items():
        module = importlib.import_module(f"iogate.judging.{name}")
        assert module.NAME == name == entry.name
        assert issubclass(entry.params, CriterionParams)
        assert entry.summary.startswith(f"{name}:")


def test_every_evaluator_reads_its_bounds_from_its_params_alone() -> None:
    """Bounds and their defaults are declared once, in Params: evaluate() takes the Params object
    and none of its other parameters is named like a bound (which would be a second declaration)."""
    for entry in registry.REGISTRY.values():
        parameters = inspect.signature(entry.evaluate, eval_str=True).parameters
        assert "params" in parameters and parameters["params"].annotation is entry.params, entry.name
        assert parameters["params"].default is inspect.Parameter.empty, entry.name
        others = set(parameters) - {"params"}
        assert not others & set(entry.params.model_fields), entry.name


def test_unknown_criterion_names_the_known_ones() -> None:
    try:
        registry.get("latency_bond")
    except KeyError as exc:
        assert "latency_bound" in str(exc)
    else:
        raise AssertionError("no error for an unknown criterion")


def test_failure_message_names_criterion_measured_bound_and_window() -> None:
    ok = Verdict("iops_min", True, 31_000, 500, Unit.IOPS)
    bad = Verdict("p99_latency_max", False, 61.2, 50, Unit.MS, window="event", detail="p99 write")
    assert outcome.failure_message([ok]) == ""
    message = outcome.failure_message([ok, bad])
    assert message == "1 of 2 criteria failed: p99_latency_max FAIL: measured 61.2 ms, bound 50 ms, window event: p99 write"
    assert "\n" not in message
    assert outcome.failure_message([bad]) == bad.line()
    assert outcome.failures([ok, bad]) == [bad]
    assert outcome.summary([ok, bad]).count("\n") == 1


def test_every_criterion_declares_its_evidence_and_a_bound_its_params_hold() -> None:
    for name, entry in registry.REGISTRY.items():
        assert entry.evidence, name
        assert entry.bound.key is None or entry.bound.key in entry.params.model_fields, (name, entry.bound.key)


def test_the_lists_kept_by_name_elsewhere_are_read_from_the_declarations() -> None:
    """families.py's evidence sets and calibrate's tables, as they were written by hand before (worked out from
    each criterion's statement: a floor is a minimum, a drop / rise / deviation is a change in %)."""
    import sys
    from pathlib import Path

    from iogate.judging import families

    assert families.ON_RUN == {"throughput_min", "latency_bound", "no_io_errors"}
    assert families.CURVE_CRITERIA == {"iops_at_latency", "knee"}
    assert families.ON_EVENT == {"throughput_min", "latency_bound"}
    assert families.AGAINST_BASELINE == {"throughput_impact", "latency_delta"}
    assert families.ON_TARGETS == {"target_iops_held"}
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    try:
        import calibrate
    finally:
        sys.path.pop(0)
    assert calibrate.LOWER_BOUNDS == {"throughput_min", "iops_at_latency", "knee", "scaling_efficiency", "target_iops_held"}
    assert calibrate.POINTS == {"throughput_impact", "latency_delta", "relative_to_baseline"}
    assert calibrate.NOT_PROPOSED == {"target_iops_held", "steady_state", "no_io_errors", "no_stall"}
    assert calibrate.BOUND_KEY == {"throughput_min": "minimum", "latency_bound": "max_latency_ns", "latency_delta": "max_rise_pct",
                                   "throughput_impact": "max_drop_pct", "iops_at_latency": "min_iops", "knee": "min_knee_iops",
                                   "relative_to_baseline": "tolerance_pct", "scaling_efficiency": "min_efficiency_pct"}
    assert calibrate.SHOWN_BOUND == {"target_iops_held": ("min_fraction", 100.0), "steady_state": ("max_rounds", 1.0),
                                     "no_io_errors": ("max_errors", 1.0)}
    assert calibrate.DEFAULT_FAMILIES == ("baseline", "sweep", "tiles", "kpi", "protocols", "events")


def test_the_spec_loader_knows_the_families_the_judge_has() -> None:
    from iogate.judging import families, spec

    assert spec.FAMILIES == tuple(families.USES)
