"""The headline figures of a run point: total IOPS, and per direction its IOPS, mean and p99 latency.

They are the run's Allure summary (JSON) and parameters.
"""

from __future__ import annotations

import math

from iogate.metrics.types import Dir, RunResult
from iogate.units import ns_to_ms


def summary(result: RunResult) -> dict[str, float]:
    """Headline figures of a run point: "iops", then for each direction that did I/O
    "<dir>_iops", "<dir>_mean_ms" and "<dir>_p99_ms" (from the merged histogram, in the scheme of the
    engine that measured it; left out when there is no histogram or p99 lies in vdbench's open top bucket).

    A latency without samples is absent, never 0.0: a direction that did I/O while no latency was
    recorded (latency disabled, a report that says nothing of it) has no "<dir>_mean_ms" key."""
    figures: dict[str, float] = {"iops": round(result.total_iops, 1)}
    for direction in (Dir.READ, Dir.WRITE):
        total = result.total(direction)
        if total.active:
            hist = total.clat.histogram
            figures[f"{direction}_iops"] = round(total.iops, 1)
            if total.clat.samples:
                figures[f"{direction}_mean_ms"] = round(ns_to_ms(total.clat.mean_ns), 3)
            p99 = hist.percentile_ns(99) if hist is not None and hist.total else math.nan
            if math.isfinite(p99):
                figures[f"{direction}_p99_ms"] = round(ns_to_ms(p99), 3)
    return figures
