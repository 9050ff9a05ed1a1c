"""The Engine protocol: run a plan, return one RunResult in the shared records."""

from __future__ import annotations

from typing import Protocol

from iogate.engines.workload import RunPlan
from iogate.metrics.types import RunResult


class Engine(Protocol):
    name: str

    def run_plan(self, plan: RunPlan) -> RunResult:
        """Run every job of the plan at once; raise EngineError/HostError on failure."""
