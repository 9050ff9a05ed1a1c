"""Run profiles: how long and how wide each family runs.

smoke  = the whole suite on the local lab in minutes (few points, seconds each);
quick  = a lunch-break regression; full = the published procedures' values
(60 s per point after 20 s warmup, 6 h tiles). Every value can be overridden
from the command line (--runtime, --ramp) or a YAML (--profile-file).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from iogate.judging.steady_stop import SteadyStop
from iogate.lab.yamlfile import load_model

EVENT_PHASES = 3  # an event run's phases: baseline, event, recovery (iogate.events.load.phase_s)


@dataclass(frozen=True)
class Profile:
    name: str
    runtime_s: float  # measured time of one run point
    ramp_s: float  # warmup before measuring (fio ramp_time)
    tile_runtime_s: float  # tiles and events: a longer steady load
    prefill: bool  # sequential 256 KiB write of every volume before the first test
    grid: str  # which points of a sweep grid run: "corners", "reduced" or "all"
    # Events during load: the longest a data-service action (a resync, a dedupe pass) may take
    # before the run ends without it; the load itself ends once its phases are done.
    event_budget_s: float = 600
    # Grids a profile file replaces, by catalog key (sweep, kpi_parallelism, netapp): see iogate.procedures.
    grids: Mapping[str, Any] = field(default_factory=dict)
    # Early stop (iogate/judging/live.py): a run point whose monotonic check can no longer pass stops (on by default;
    # --no-fail-fast or a profile file's `fail_fast: false` runs every point its planned time).
    # `stop` (a profile file's `stop: {mode: steady, min_s, max_s, round_s}`) lets a point end once steady.
    fail_fast: bool = True
    stop: SteadyStop | None = None

    def with_overrides(self, **overrides: Any) -> Profile:
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def with_min_window(self, window_s: float | None) -> Profile:
        """At least window_s measured per run point and per phase of an event run (its tile time holds
        EVENT_PHASES of them), for a lab whose figures only repeat over windows that long (Lab.min_window_s)."""
        if window_s is None:
            return self
        return replace(self, runtime_s=max(self.runtime_s, window_s), tile_runtime_s=max(self.tile_runtime_s, EVENT_PHASES * window_s))


PROFILES = {
    "smoke": Profile("smoke", runtime_s=4, ramp_s=1, tile_runtime_s=8, prefill=True, grid="corners"),
    "quick": Profile("quick", runtime_s=20, ramp_s=5, tile_runtime_s=120, prefill=True, grid="reduced", event_budget_s=1800),
    "full": Profile("full", runtime_s=60, ramp_s=20, tile_runtime_s=6 * 3600, prefill=True, grid="all", event_budget_s=4 * 3600),
}


class ProfileFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base: str = "quick"
    runtime_s: float | None = None
    ramp_s: float | None = None
    tile_runtime_s: float | None = None
    prefill: bool | None = None
    grid: str | None = None
    event_budget_s: float | None = None
    grids: dict[str, Any] | None = None
    fail_fast: bool | None = None
    stop: SteadyStop | None = None


def resolve_profile(name: str, path: Path | None = None, **overrides: Any) -> Profile:
    """A named profile, then a profile YAML's values, then command-line overrides."""
    if path is not None:
        spec = load_model(ProfileFile, path)
        profile = PROFILES[spec.base].with_overrides(**spec.model_dump(exclude={"base", "stop"}), stop=spec.stop)
    else:
        if name not in PROFILES:
            raise ValueError(f"unknown profile {name!r} (smoke, quick, full)")
        profile = PROFILES[name]
    return profile.with_overrides(**overrides)
