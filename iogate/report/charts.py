"""Charts for the report, rendered to PNG bytes with matplotlib's Agg backend.

`timeline_png`: IOPS and latency over time (two stacked axes sharing the time
axis, seconds from measurement start) with event spans (snapshot, dedupe ...)
shaded and labelled.

Figures are built with `matplotlib.figure.Figure` on a private Agg canvas, never
pyplot: headless by construction (no display, no global backend switch), no
global figure registry to leak, safe to call from worker threads.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from iogate.metrics.types import Dir, RunStop, Series
from iogate.units import NS_PER_MS, NS_PER_US

EventSpan = tuple[str, int, int]  # (label, start_ms, end_ms) on the epoch clock samples use

_DPI = 100
_DIRECTION_COLOURS = {Dir.READ: "#1f77b4", Dir.WRITE: "#d62728", Dir.TRIM: "#7f7f7f"}
_EVENT_COLOURS = ("#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf")


@dataclass(frozen=True)
class LatencyScale:
    """Latency axis unit picked from the data so ticks read as 250 us or 1.2 ms, not 1.2e6 ns."""

    unit: str
    ns_per_unit: float

    @classmethod
    def for_max_ns(cls, max_ns: float) -> LatencyScale:
        if max_ns >= NS_PER_MS:
            return cls("ms", NS_PER_MS)
        if max_ns >= NS_PER_US:
            return cls("us", NS_PER_US)
        return cls("ns", 1.0)


def _png(figure: Figure) -> bytes:
    canvas = FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    canvas.print_png(buffer)
    return buffer.getvalue()


def timeline_png(series: Series, events: Sequence[EventSpan] = (), *, start_ms: int | None = None, title: str = "",
                 stop: RunStop | None = None) -> bytes:
    """IOPS (top) and mean completion latency (bottom) per interval and direction.

    Intervals are every job's expected grid merged by time (Series.totals): a
    second in which fio logged nothing plots as 0 IOPS, its latency as a gap.

    `start_ms` is the measurement start (RunResult.start_ms); by default the start
    of the first interval. Event spans outside the plotted range are clipped.
    `stop`: where and why a live judge ended the point (iogate/judging/live.py), a marked vertical line.
    """
    per_direction = {d: series.where(dir=d).totals() for d in Dir}
    per_direction = {d: rows for d, rows in per_direction.items() if rows}
    if start_ms is None:
        first_end_ms = min((rows[0][0] for rows in per_direction.values()), default=0)
        start_ms = first_end_ms - series.interval_ms
    max_latency_ns = max((lat for rows in per_direction.values() for _, _, lat in rows if lat is not None), default=0.0)
    scale = LatencyScale.for_max_ns(max_latency_ns)

    figure = Figure(figsize=(10, 6), dpi=_DPI, layout="constrained")
    iops_axes, latency_axes = figure.subplots(2, 1, sharex=True)
    for direction, rows in per_direction.items():
        seconds = [(t_ms - start_ms) / 1000.0 for t_ms, _, _ in rows]
        colour = _DIRECTION_COLOURS[direction]
        iops_axes.plot(seconds, [iops for _, iops, _ in rows], color=colour, linewidth=1.2, label=f"{direction} IOPS")
        # An interval without a known latency is a gap in the line, never a dip to 0.
        latency = [math.nan if lat is None else lat / scale.ns_per_unit for _, _, lat in rows]
        latency_axes.plot(seconds, latency, color=colour, linewidth=1.2,
                          label=f"{direction} mean latency")

    for index, (label, event_start_ms, event_end_ms) in enumerate(events):
        colour = _EVENT_COLOURS[index % len(_EVENT_COLOURS)]
        begin_s, end_s = (event_start_ms - start_ms) / 1000.0, (event_end_ms - start_ms) / 1000.0
        for axes in (iops_axes, latency_axes):
            axes.axvspan(begin_s, end_s, color=colour, alpha=0.15, linewidth=0)
        # Label in axes-fraction height so it stays inside the plot whatever the IOPS scale.
        iops_axes.annotate(label, (begin_s, 0.97), xycoords=iops_axes.get_xaxis_transform(), xytext=(3, 0),
                           textcoords="offset points", fontsize=8, color=colour, verticalalignment="top", annotation_clip=False)

    if stop is not None and stop.kind != "full":
        for axes in (iops_axes, latency_axes):
            axes.axvline(stop.at_s, color="black", linestyle="--", linewidth=1.0)
        words = {"fail_fast": "fail-fast", "steady": "steady", "never_steady": "never steady"}.get(stop.kind, stop.kind)
        iops_axes.annotate(f"stopped at {stop.at_s:g} s of {stop.planned_s:g} s: {words}", (stop.at_s, 0.97),
                           xycoords=iops_axes.get_xaxis_transform(), xytext=(-3, 0), textcoords="offset points", fontsize=8,
                           horizontalalignment="right", verticalalignment="top", annotation_clip=False)

    iops_axes.set_ylabel("IOPS")
    iops_axes.set_ylim(bottom=0)
    latency_axes.set_ylabel(f"latency ({scale.unit})")
    latency_axes.set_ylim(bottom=0)
    latency_axes.set_xlabel("time from measurement start (s)")
    for axes in (iops_axes, latency_axes):
        axes.grid(True, alpha=0.3)
        if per_direction:
            axes.legend(loc="lower right", fontsize=8)
    if title:
        figure.suptitle(title)
    return _png(figure)

