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
           "family_rules", "cases", "judge", "evidence"}


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
