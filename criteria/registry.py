"""Criterion name -> evaluator and its bounds model. Adding a criterion = one module + one line here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from criteria import (
    iops_at_latency,
    knee,
    latency_bound,
    latency_delta,
    no_io_errors,
    relative_to_baseline,
    scaling_efficiency,
    steady_state,
    target_iops_held,
    throughput_impact,
    throughput_min,
)
from criteria.params import CriterionParams
from iogate.verdict import Verdict

_MODULES: tuple[ModuleType, ...] = (
    throughput_min,
    latency_bound,
    latency_delta,
    throughput_impact,
    target_iops_held,
    iops_at_latency,
    knee,
    relative_to_baseline,
    steady_state,
    scaling_efficiency,
    no_io_errors,
)


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
