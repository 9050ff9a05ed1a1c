"""Run a plan under a live judge: the engine feeds it intervals and stops when it asks (iogate/judging/live.py).

Engine-agnostic: any engine that publishes whole intervals on LoadControl
(fio here and over client/server; vdbench from its interval lines) can be
stopped early; one that publishes nothing simply runs its planned time.
"""

from __future__ import annotations

from iogate.engines.base import Engine, LoadControl
from iogate.engines.workload import RunPlan
from iogate.judging.live import PointWatch
from iogate.metrics.types import RunResult


def run_watched(engine: Engine, plan: RunPlan, watch: PointWatch, control: LoadControl | None = None) -> RunResult:
    """engine.run_plan(plan) with `watch` listening (beside whatever else shares `control`); the result with its RunStop."""
    control = control if control is not None else LoadControl()
    if control.live is None:
        control.live = watch
    return watch.finish(engine.run_plan(plan, control))
