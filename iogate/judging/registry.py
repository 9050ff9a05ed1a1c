"""Criterion name -> evaluator and its bounds model. Adding a criterion = one module + one line here."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from iogate.judging.params import CriterionParams
from iogate.verdict import Verdict

# One line per criterion: the module criteria/<name>.py with NAME, Params and evaluate().
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


REGISTRY: dict[str, Criterion] = {
    m.NAME: Criterion(m.NAME, m.evaluate, m.Params, (m.__doc__ or "").strip().splitlines()[0]) for m in _MODULES
}


def get(name: str) -> Criterion:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown criterion {name!r}; known: {', '.join(sorted(REGISTRY))}") from None
