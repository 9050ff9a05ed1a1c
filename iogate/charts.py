"""Charts for the report, rendered to PNG bytes with matplotlib's Agg backend.

Three pictures a reviewer signs off on:
- `timeline_png`: IOPS and latency over time (two stacked axes sharing the time
  axis, seconds from measurement start) with event spans (snapshot, dedupe ...)
  shaded and labelled;
- `knee_png`: a sweep's IOPS-vs-latency curve with the knee ("I/O before
  saturation") marked;
- `vm_targets_png`: per-VM target vs actual IOPS bars (the Hitachi tile criterion).

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
from matplotlib.patches import Patch

from iogate.metrics.types import Dir, Series

EventSpan = tuple[str, int, int]  # (label, start_ms, end_ms) on the epoch clock samples use

_DPI = 100
_DIRECTION_COLOURS = {Dir.READ: "#1f77b4", Dir.WRITE: "#d62728", Dir.TRIM: "#7f7f7f"}
_MAX_VM_LABELS = 50
_MET, _MISSED = "#2ca02c", "#d62728"
_EVENT_COLOURS = ("#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf")


@dataclass(frozen=True)
class LatencyScale:
    """Latency axis unit picked from the data so ticks read as 250 us or 1.2 ms, not 1.2e6 ns."""

    unit: str
    ns_per_unit: float

    @classmethod
    def for_max_ns(cls, max_ns: float) -> LatencyScale:
        if max_ns >= 1_000_000:
            return cls("ms", 1_000_000.0)
        if max_ns >= 1_000:
            return cls("us", 1_000.0)
        return cls("ns", 1.0)


def _png(figure: Figure) -> bytes:
    canvas = FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    canvas.print_png(buffer)
    return buffer.getvalue()


def timeline_png(series: Series, events: Sequence[EventSpan] = (), *, start_ms: int | None = None, title: str = "") -> bytes:
    """IOPS (top) and mean completion latency (bottom) per interval and direction.

    Intervals are every job's expected grid merged by time (Series.totals): a
    second in which fio logged nothing plots as 0 IOPS, its latency as a gap.

    `start_ms` is the measurement start (RunResult.start_ms); by default the start
    of the first interval. Event spans outside the plotted range are clipped.
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


def knee_png(points: Sequence[tuple[float, float]], knee_index: int | None = None, *,
             point_labels: Sequence[str] = (), title: str = "") -> bytes:
    """A sweep's (IOPS, mean latency ns) points in load order, the knee circled.

    `point_labels` (e.g. "32 thr") annotate each point; `knee_index` indexes `points`.
    """
    if knee_index is not None and not 0 <= knee_index < len(points):
        raise ValueError(f"knee index {knee_index} outside the {len(points)} sweep points")
    scale = LatencyScale.for_max_ns(max((lat for _, lat in points), default=0.0))
    iops = [p[0] for p in points]
    latency = [p[1] / scale.ns_per_unit for p in points]

    figure = Figure(figsize=(8, 5), dpi=_DPI, layout="constrained")
    axes = figure.subplots()
    axes.plot(iops, latency, marker="o", color="#1f77b4", linewidth=1.2)
    for label, x, y in zip(point_labels, iops, latency, strict=False):
        axes.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    if knee_index is not None:
        x, y = iops[knee_index], latency[knee_index]
        axes.plot([x], [y], marker="o", markersize=14, markerfacecolor="none", markeredgecolor="#d62728", markeredgewidth=2)
        axes.annotate(f"knee: {x:,.0f} IOPS @ {y:.3g} {scale.unit}", (x, y), textcoords="offset points", xytext=(-10, 14),
                      fontsize=9, color="#d62728", horizontalalignment="right")
    axes.set_xlabel("IOPS")
    axes.set_ylabel(f"mean latency ({scale.unit})")
    axes.set_xlim(left=0)
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)
    if title:
        axes.set_title(title)
    return _png(figure)


def vm_targets_png(rows: Sequence[tuple[str, float, float]], *, tolerance_pct: float = 0.0, title: str = "") -> bytes:
    """Per-VM (name, target IOPS, actual IOPS) bars; a VM below target - tolerance is drawn red."""
    names = [r[0] for r in rows]
    targets = [r[1] for r in rows]
    actuals = [r[2] for r in rows]
    missed = [actual < target * (1 - tolerance_pct / 100.0) for _, target, actual in rows]

    width_in = min(4 + 0.35 * len(rows), 30)  # 250 VMs must still render in one picture
    figure = Figure(figsize=(width_in, 5), dpi=_DPI, layout="constrained")
    axes = figure.subplots()
    positions = range(len(rows))
    axes.bar([p - 0.2 for p in positions], targets, width=0.4, color="#c7c7c7")
    axes.bar([p + 0.2 for p in positions], actuals, width=0.4, color=[_MISSED if m else _MET for m in missed])
    # Tick labels dominate render time with hundreds of VMs: label at most ~_MAX_VM_LABELS of them.
    step = max(1, -(-len(rows) // _MAX_VM_LABELS))
    axes.set_xticks(list(positions)[::step], names[::step], rotation=90 if len(rows) > 12 else 0, fontsize=7)
    axes.set_ylabel("IOPS")
    # Head room above the tallest bar keeps the legend off the bars.
    axes.set_ylim(0, max([*targets, *actuals, 1.0]) * 1.3)
    axes.grid(True, axis="y", alpha=0.3)
    handles = [Patch(color="#c7c7c7", label="target IOPS"), Patch(color=_MET, label="actual, target met"),
               Patch(color=_MISSED, label="actual, below target")]
    axes.legend(handles=handles, loc="upper center", ncols=3, fontsize=8,
                title=f"{sum(missed)} of {len(rows)} VMs below target" if rows else None)
    if title:
        axes.set_title(title)
    return _png(figure)
