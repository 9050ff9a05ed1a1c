"""The Engine protocol: run a plan, return one RunResult in the shared records."""

from __future__ import annotations

import threading
import time
from typing import Protocol

from iogate.engines.workload import RunPlan
from iogate.metrics.types import RunResult


class StartSignal:
    """Set by an engine when the load generator is really running (epoch ms).

    Things timed against the load (events) anchor on it rather than on the call:
    on a slow host (a TCG guest over SSH) fio starts seconds after it is asked to.
    """

    def __init__(self) -> None:
        self._set = threading.Event()
        self.epoch_ms: int | None = None

    def set(self, epoch_ms: int | None = None) -> None:
        if not self._set.is_set():
            self.epoch_ms = epoch_ms if epoch_ms is not None else int(time.time() * 1000)
            self._set.set()

    def wait(self, timeout_s: float) -> int | None:
        """The start time, or None if the load did not start within timeout_s."""
        return self.epoch_ms if self._set.wait(timeout_s) else None


class Engine(Protocol):
    name: str

    def run_plan(self, plan: RunPlan, started: StartSignal | None = None) -> RunResult:
        """Run every job of the plan at once (setting `started` once the load runs);
        raise EngineError/HostError on failure."""
