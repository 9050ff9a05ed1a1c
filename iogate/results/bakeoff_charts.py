"""Knee curves of a bake-off: each array's sweep points, IOPS against mean latency, overlaid per test and direction.

Built from the stored points (so the chart can be rebuilt with the matrix): a
test with at least two points is a curve. A point whose measurement is invalid,
or that has no IOPS or no mean latency stored, is left out of its array's curve
(a gap, never a point at 0). Rendered like iogate/report/charts.py: a private
Agg canvas, never pyplot.
"""

from __future__ import annotations

import io

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from iogate.results.bakeoff import Bakeoff, test_node
from iogate.results.bakeoff_guard import comparable_id
from iogate.results.store import RunPoint
from iogate.units import NS_PER_MS

Curve = list[tuple[float, float]]  # (IOPS, mean latency ms), by IOPS
_MIN_POINTS = 2  # one point is a figure, not a curve


def knee_curves(bakeoff: Bakeoff) -> dict[str, dict[str, Curve]]:
    """Per "test direction" title, per array label, its valid (IOPS, mean ms) points sorted by IOPS."""
    curves: dict[str, dict[str, Curve]] = {}
    for contender in bakeoff.contenders:
        by_test: dict[str, list[RunPoint]] = {}
        for point in contender.points:
            by_test.setdefault(test_node(comparable_id(point)), []).append(point)
        for node, points in by_test.items():
            if len(points) < _MIN_POINTS:
                continue
            for direction in sorted({d for p in points for d in p.metrics}):
                valid = [(m["iops"], m["mean_ns"] / NS_PER_MS) for p in points if not p.measurement_invalid
                         for m in [p.metrics.get(direction, {})] if m.get("iops") is not None and m.get("mean_ns") is not None]
                title = f"{node.split('::', 1)[-1]} {direction}"
                curves.setdefault(title, {})[contender.label] = sorted(valid)
    return curves


def finish_png(figure: Figure, axes: Axes, *, xlabel: str, ylabel: str, legend: str, title: str) -> bytes:
    """The bake-off charts' common tail: labels, axes from 0 where the figures start, grid, legend, title, PNG bytes."""
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)
    axes.legend(loc=legend, fontsize=8)
    figure.suptitle(title)
    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer)
    return buffer.getvalue()


def knee_png(title: str, curves: dict[str, Curve]) -> bytes:
    figure = Figure(figsize=(8, 5), dpi=100, layout="constrained")
    axes = figure.subplots()
    for label, points in curves.items():
        axes.plot([iops for iops, _ in points], [ms for _, ms in points], marker="o", linewidth=1.2, label=label)
    axes.set_xlim(left=0)
    return finish_png(figure, axes, xlabel="IOPS", ylabel="mean latency (ms)", legend="upper left", title=f"knee: {title}")


def knee_charts(bakeoff: Bakeoff) -> dict[str, bytes]:
    """Each curve title's overlay as PNG bytes."""
    return {title: knee_png(title, curves) for title, curves in knee_curves(bakeoff).items()}
