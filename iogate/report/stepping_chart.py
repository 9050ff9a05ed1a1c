"""The client-stepping curve as a chart (PNG bytes, matplotlib Agg, never pyplot), for the Allure report.

Top: the incremental series, the cluster's aggregate against the number of hosts
(2, 4 ... N, or 10, 20 ... 100 under the smoke profile), with linear scaling
(k x the mean host alone) dashed and the data path's declared limit dotted.
Bottom: the constant steps, each host alone, with their median and, when given,
the slow-host line (the median less the spec's tolerance): a slow host is the
dot under it.

>>> from iogate.procedures.scaling import Figures, Step, StepResult
>>> def step(mode, hosts, mb):
...     f = Figures(mb, mb * 1e6)
...     return StepResult(Step(mode, hosts), {h: f for h in hosts}, Figures(mb * len(hosts), mb * len(hosts) * 1e6), 1e6)
>>> results = [step("constant", (h,), 5.0) for h in ("h1", "h2", "h3", "h4")] + [step("incremental", ("h1", "h2"), 5.0)]
>>> stepping_png(results, limit_bytes_per_s=20e6, slow_below_pct=10)[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""

from __future__ import annotations

import io
import statistics
from collections.abc import Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from iogate.procedures.scaling import Metric, StepResult

_DPI = 100
_UNITS = {"mb_per_s": "MB/s", "iops": "IOPS"}


def stepping_png(results: Sequence[StepResult], *, metric: Metric = "mb_per_s", limit_bytes_per_s: float | None = None,
                 slow_below_pct: float | None = None, title: str = "") -> bytes:
    """The stepping curve (incremental) above the hosts alone (constant); either panel says when it has no steps."""
    unit = _UNITS[metric]
    incremental = sorted((len(r.step.hosts), r.cluster.of(metric)) for r in results if r.step.mode == "incremental")
    alone = [(r.step.hosts[0], r.cluster.of(metric)) for r in results if r.step.mode == "constant"]
    single = statistics.fmean(v for _, v in alone) if alone else None

    figure = Figure(figsize=(10, 7.5), dpi=_DPI, layout="constrained")
    top, bottom = figure.subplots(2, 1, height_ratios=(3, 2))
    if title:
        figure.suptitle(title)

    if incremental:
        counts = [k for k, _ in incremental]
        values = [v for _, v in incremental]
        top.plot(counts, values, "o-", color="#1f77b4", label=f"aggregate of k hosts ({unit})")
        if single:
            top.plot([0, counts[-1]], [0, counts[-1] * single], "--", color="#7f7f7f",
                     label=f"linear: k x {single:.3g} {unit} (mean host alone)")
            for k, value in incremental:
                top.annotate(f"{100 * value / (k * single):.0f} %", (k, value), textcoords="offset points", xytext=(0, 7),
                             ha="center", fontsize=8)
        if limit_bytes_per_s and metric == "mb_per_s":
            top.axhline(limit_bytes_per_s / 1e6, linestyle=":", color="#d62728",
                        label=f"data path limit {limit_bytes_per_s / 1e6:.4g} MB/s")
        top.set_xlim(0, counts[-1] * 1.03 + 1)
        top.set_ylim(bottom=0)
        top.legend(loc="upper left", fontsize=8)
    else:
        top.text(0.5, 0.5, "no incremental step measured", ha="center", va="center", transform=top.transAxes)
    top.set_xlabel("hosts running together")
    top.set_ylabel(unit)
    top.set_title("incremental steps: aggregate vs hosts (% = of linear scaling)", fontsize=10)
    top.grid(alpha=0.3)

    if alone:
        xs = list(range(1, len(alone) + 1))
        values = [v for _, v in alone]
        median = statistics.median(values)
        line = median * (1 - slow_below_pct / 100) if slow_below_pct is not None else None
        colours = ["#d62728" if line is not None and v < line else "#2ca02c" for v in values]
        bottom.scatter(xs, values, s=14 if len(alone) > 20 else 30, c=colours, zorder=3)
        bottom.axhline(median, color="#7f7f7f", linestyle="--", label=f"median {median:.3g} {unit}")
        if line is not None:
            bottom.axhline(line, color="#d62728", linestyle=":", label=f"slow host below {line:.3g} {unit} (median - {slow_below_pct:g} %)")
        if len(alone) <= 20:
            bottom.set_xticks(xs, [h for h, _ in alone], fontsize=8)
        bottom.set_ylim(bottom=0, top=max(values) * 1.25 or 1)
        bottom.legend(loc="lower right", fontsize=8)
    else:
        bottom.text(0.5, 0.5, "no constant step measured", ha="center", va="center", transform=bottom.transAxes)
    bottom.set_xlabel("host (lab order), each alone" if len(alone) > 20 else "host, each alone")
    bottom.set_ylabel(unit)
    bottom.set_title("constant steps: each host alone", fontsize=10)
    bottom.grid(alpha=0.3)

    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer)
    return buffer.getvalue()
