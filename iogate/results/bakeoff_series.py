"""IOPS over time of a bake-off's arrays, overlaid per run point, with the events that ran during it.

The results store keeps each point's figures, not its per-second series; the session keeps the series beside
its exports (`save_series`: exports/<run>/series/<lab>/<digest>.json: the point's total IOPS per interval, seconds
from the measurement start, and the event spans (label, start s, end s) of an events test). `timeline_charts`
reads them back for each column of a bake-off (exports/<column's run>/series/<column's lab>) and draws, per run
point two or more arrays ran, one IOPS line per array with each array's events marked (shaded spans, labelled).
A point without a kept series is left out of the chart (never drawn at 0); an invalid point is drawn, its
label says "INVALID".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iogate.metrics.types import RunResult
from iogate.results.bakeoff import Bakeoff
from iogate.results.bakeoff_guard import comparable_test_id

SERIES_DIR = "series"
Spans = Sequence[tuple[str, int, int]]  # (label, start_ms, end_ms), epoch ms


def series_path(exports_run_dir: Path, lab: str, comparable: str) -> Path:
    digest = hashlib.sha1(comparable.encode()).hexdigest()[:16]
    return exports_run_dir / SERIES_DIR / lab / f"{digest}.json"


def series_record(test_id: str, lab: str, result: RunResult, events: Spans = ()) -> dict[str, Any]:
    start = result.start_ms
    return {
        "test_id": comparable_test_id(test_id, lab), "lab": lab, "point": result.name,
        "interval_ms": result.series.interval_ms,
        "iops": [[round((t_ms - start) / 1000.0, 3), round(iops, 3)] for t_ms, iops, _ in result.series.totals()],
        "events": [[label, round((s - start) / 1000.0, 3), round((e - start) / 1000.0, 3)] for label, s, e in events],
    }


def save_series(exports_run_dir: Path, test_id: str, lab: str, result: RunResult, events: Spans = ()) -> Path:
    record = series_record(test_id, lab, result, events)
    path = series_path(exports_run_dir, lab, record["test_id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def load_series(exports_run_dir: Path, lab: str) -> dict[str, dict[str, Any]]:
    """comparable test id -> its kept series record (empty: none kept)."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((exports_run_dir / SERIES_DIR / lab).glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a torn file is a missing series, never a zero line
        found[str(record.get("test_id"))] = record
    return found


def overlays(bakeoff: Bakeoff, out_dir: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Per comparable run point, per column label, its series record: points two or more arrays kept."""
    exports = out_dir.parent
    per_point: dict[str, dict[str, dict[str, Any]]] = {}
    for contender in bakeoff.contenders:
        invalid = {comparable_test_id(p.test_id, p.lab) for p in contender.points if p.measurement_invalid}
        for test_id, record in load_series(exports / contender.run_id, contender.lab).items():
            per_point.setdefault(test_id, {})[contender.label] = {**record, "invalid": test_id in invalid}
    return {test_id: by_label for test_id, by_label in per_point.items() if len(by_label) >= 2}


def overlay_png(title: str, by_label: dict[str, dict[str, Any]]) -> bytes:
    from matplotlib.figure import Figure

    from iogate.results.bakeoff_charts import finish_png  # matplotlib: only when a chart is drawn

    figure = Figure(figsize=(10, 4.5), dpi=100, layout="constrained")
    axes = figure.subplots()
    colours = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00"]
    for index, (label, record) in enumerate(by_label.items()):
        colour = colours[index % len(colours)]
        points = record.get("iops") or []
        name = f"{label}{' (INVALID)' if record.get('invalid') else ''}"
        axes.plot([t for t, _ in points], [v for _, v in points], color=colour, linewidth=1.2, label=name)
        for event_label, start_s, end_s in record.get("events") or []:
            axes.axvspan(start_s, max(end_s, start_s + 0.2), color=colour, alpha=0.12)
            axes.axvline(start_s, color=colour, linestyle="--", linewidth=0.8)
            axes.annotate(f"{event_label} ({label})", (start_s, 0), xytext=(2, 4 + 12 * index), textcoords="offset points",
                          fontsize=7, color=colour)
    return finish_png(figure, axes, xlabel="seconds from the measurement start", ylabel="IOPS (all jobs, all directions)",
                      legend="upper right", title=f"IOPS over time: {title}")


def timeline_charts(bakeoff: Bakeoff, out_dir: Path) -> dict[str, bytes]:
    """"IOPS over time: <test point>" -> PNG, for every run point two or more arrays kept a series of."""
    return {f"IOPS over time: {test_id.split('::', 1)[-1]}": overlay_png(test_id.split("::", 1)[-1], by_label)
            for test_id, by_label in overlays(bakeoff, out_dir).items()}
