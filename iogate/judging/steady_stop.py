"""Steady-state early stop (opt-in per profile): the SNIA PTS rule over rounds, while the point runs.

A profile's `stop: {mode: steady, min_s: 20, max_s: 300, round_s: 5}` lets a
run point end once it is steady: over the last `window_rounds` rounds (each
`round_s` of whole intervals, all hosts merged by time as the final judge
merges them), IOPS **and** mean latency, reads and writes apart, each have
range <= max_range_pct of the window's mean and slope excursion <=
max_slope_pct of it (iogate/judging/steady_state.py, the SNIA rule). The
point stops when the rule holds at or after min_s; at max_s it stops and says
it never reached steady state. min_s exists because arrays change after their
write buffer fills: a procurement spec keeps fixed durations (no `stop:`),
a nightly profile may stop early.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from iogate.judging.steady_state import check_window
from iogate.metrics.types import Dir, Interval, Series


class SteadyStop(BaseModel):
    """The `stop:` key of a profile."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["fixed", "steady"] = "fixed"
    min_s: float = Field(20, gt=0)  # never stop before this much measured time
    max_s: float | None = Field(None, gt=0)  # stop here if never steady (default: the planned runtime)
    round_s: float = Field(5, gt=0)
    window_rounds: int = Field(5, ge=2)
    max_range_pct: float = Field(20.0, gt=0)
    max_slope_pct: float = Field(10.0, gt=0)

    @model_validator(mode="after")
    def _fits(self) -> SteadyStop:
        if self.max_s is not None and self.max_s < self.min_s:
            raise ValueError(f"stop: max_s {self.max_s:g} is below min_s {self.min_s:g}")
        return self

    @property
    def steady(self) -> bool:
        return self.mode == "steady"


def rounds(totals: list[Interval], per_round: int) -> tuple[list[float], list[float | None]]:
    """Whole rounds of `per_round` intervals: mean IOPS and IOPS-weighted mean latency (None: unknown)."""
    iops: list[float] = []
    latency: list[float | None] = []
    for k in range(len(totals) // per_round):
        members = totals[k * per_round:(k + 1) * per_round]
        iops.append(sum(v for _, v, _ in members) / per_round)
        known = [(v, lat) for _, v, lat in members if lat is not None and v > 0]
        weight = sum(v for v, _ in known)
        latency.append(sum(v * lat for v, lat in known) / weight if weight else None)
    return iops, latency


def judge(series: Series, rule: SteadyStop) -> tuple[bool, int, str]:
    """Whether the last window of rounds is steady on every tracked figure; the round count; a sentence."""
    per_round = max(round(rule.round_s * 1000 / series.interval_ms), 1)
    worst: dict[str, float] = {"IOPS range": 0.0, "IOPS slope": 0.0, "latency range": 0.0, "latency slope": 0.0}
    steady = True
    count = 0
    tracked = 0
    for direction in (Dir.READ, Dir.WRITE):
        part = series.where(dir=direction)
        if not part.samples:
            continue
        iops, latency = rounds(part.totals(), per_round)
        if not any(iops):
            continue  # a direction the load does not do (vdbench reports a read-only run's writes as 0)
        count = max(count, len(iops))
        if len(iops) < rule.window_rounds:
            return False, len(iops), f"{len(iops)} rounds, a window needs {rule.window_rounds}"
        tracked += 1
        window_lat = latency[-rule.window_rounds:]
        figures = [("IOPS", iops[-rule.window_rounds:])]
        if all(v is not None for v in window_lat):
            figures.append(("latency", [float(v) for v in window_lat if v is not None]))
        else:
            steady = False  # an unknown round's latency is not a steady one
        for name, values in figures:
            row = check_window(values, rule.max_range_pct, rule.max_slope_pct)
            steady = steady and bool(row["steady"])
            worst[f"{name} range"] = max(worst[f"{name} range"], float(row["range_pct"]))
            worst[f"{name} slope"] = max(worst[f"{name} slope"], float(row["slope_excursion_pct"]))
    if not tracked:
        return False, 0, "no intervals yet"
    figures_text = ", ".join(f"{k} {v:.1f} %" for k, v in worst.items())
    return steady, count, f"round {count}: {figures_text} (bounds: range {rule.max_range_pct:g} %, slope {rule.max_slope_pct:g} %)"
