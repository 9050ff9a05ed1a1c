"""Criterion name -> evaluator, its bounds model, the evidence it accepts and its bound.

Adding a criterion = one module (NAME, EVIDENCE, BOUND, Params, evaluate) + one line here. What is kept by
name elsewhere is read from here: which criteria judge a run, a window, a curve ... (families.py), which bound
calibration proposes and how (tools/calibrate.py)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from iogate.judging.params import Bound, CriterionParams, Evidence
from iogate.verdict import Verdict

# One line per criterion: the module iogate/judging/<name>.py with NAME, EVIDENCE, BOUND, Params and evaluate().
_MODULE_NAMES: tuple[str, ...] = (
    "throughput_min",
    "latency_bound",
    "latency_delta",
    "throughput_impact",
    "target_iops_held",
    "iops_at_latency",
    "knee",
    "relative_to_baseline",
    "steady_state",
    "scaling_efficiency",
    "no_io_errors",
    "no_stall",
)
_MODULES: tuple[ModuleType, ...] = tuple(importlib.import_module(f"iogate.judging.{name}") for name in _MODULE_NAMES)


@dataclass(frozen=True)
class Criterion:
    name: str
    evaluate: Callable[..., Verdict]
    params: type[CriterionParams]
    summary: str  # first line of the module docstring
    evidence: tuple[Evidence, ...]  # what a test hands evaluate()
    bound: Bound


REGISTRY: dict[str, Criterion] = {
    m.NAME: Criterion(m.NAME, m.evaluate, m.Params, (m.__doc__ or "").strip().splitlines()[0], m.EVIDENCE, m.BOUND) for m in _MODULES
}


def accepting(*kinds: Evidence) -> frozenset[str]:
    """The criteria that accept any of these kinds of evidence."""
    return frozenset(name for name, c in REGISTRY.items() if set(kinds) & set(c.evidence))


def get(name: str) -> Criterion:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown criterion {name!r}; known: {', '.join(sorted(REGISTRY))}") from None
