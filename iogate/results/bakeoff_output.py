"""The bake-off matrix as the files people read: CSV, XLSX, a standalone HTML page, an Allure attachment.

Every output is written from the same flat rows (`flat_rows`), so the CSV, the
XLSX and the HTML page carry the same figures, formatted once here: a figure
rounded to FIGURE_DIGITS decimals; "missing" for a row a run lacks and "no
data" for a figure the store does not hold (never an empty cell that reads as 0).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from iogate.report.table import html_table
from iogate.results.bakeoff import INVALID, MISSING, NO_DATA, NOT_AVAILABLE, Bakeoff, best_of, better_of, cell_of, relative_pct
from iogate.results.export import to_csv, to_xlsx

FIGURE_DIGITS = 4  # decimals kept: 0.1 us in a latency in ms, 0.0001 IOPS
PCT_DIGITS = 1  # reference = 100, to a tenth as the seeds print it
CSV_NAME, XLSX_NAME, HTML_NAME = "bakeoff.csv", "bakeoff.xlsx", "bakeoff.html"
_STATUS_COLOUR = {"PASS": "#c8e6c9", "FAIL": "#ffcdd2", INVALID: "#ffe0b2", MISSING: "#eeeeee", NO_DATA: "#eeeeee"}


def _figure_text(value: float | None, status: str) -> float | str:
    if status == MISSING or status.startswith(NOT_AVAILABLE):
        return status  # "n/a: <driver> has no latency counters": the sentence, never a blank read as 0
    return NO_DATA if value is None else round(value, FIGURE_DIGITS)


def flat_rows(bakeoff: Bakeoff) -> list[dict[str, Any]]:
    """One dict per matrix row: the row's names, then per array its figure, verdict, % of the reference and the
    verdict's detail, then the best."""
    flat = []
    for row in bakeoff.rows:
        out: dict[str, Any] = {"family": row.family, "test": row.test, "protocol": row.protocol, "kind": row.kind,
                               "check": row.check, "window": row.window, "unit": row.unit, "better": better_of(row) or ""}
        for label in bakeoff.labels:
            cell = cell_of(row, label)
            relative = relative_pct(row, label, bakeoff.reference)
            out[label] = _figure_text(cell.value, cell.status)
            out[f"{label} verdict"] = cell.status
            out[f"{label} % of {bakeoff.reference}"] = "" if relative is None else round(relative, PCT_DIGITS)
            out[f"{label} detail"] = cell.detail  # the verdict's own words: "N IOPS @ mean L ms", why invalid
        out["best"] = best_of(row, bakeoff.labels)
        flat.append(out)
    return flat


def context_rows(bakeoff: Bakeoff) -> list[dict[str, Any]]:
    """The runs compared and what judged them: the report's first table."""
    rows = []
    for c in bakeoff.contenders:
        ctx = c.context
        rows.append({"array": c.label, "run": c.run_id, "reference": "yes" if c.label == bakeoff.reference else "",
                     "spec": ctx.spec if ctx else "", "profile": ctx.profile if ctx else "",
                     "engine": f"{ctx.engine} {ctx.engine_version}" if ctx else "", "points": len(c.points)})
    return rows


def difference_rows(bakeoff: Bakeoff) -> list[dict[str, Any]]:
    return [{"differs without changing the workload": line} for line in bakeoff.differences] or [
        {"differs without changing the workload": "nothing"}]


def write_csv(bakeoff: Bakeoff, out_dir: Path) -> Path:
    return to_csv(flat_rows(bakeoff), out_dir / CSV_NAME)


def write_xlsx(bakeoff: Bakeoff, out_dir: Path) -> Path:
    return to_xlsx({"bakeoff": flat_rows(bakeoff), "runs": context_rows(bakeoff), "differences": difference_rows(bakeoff)},
                   out_dir / XLSX_NAME)


def _cell_html(name: str, value: Any) -> str:
    text = html.escape("" if value is None else str(value))
    status = MISSING if str(value).startswith(NOT_AVAILABLE) else str(value)  # "n/a: ..." greyed like "missing"
    colour = _STATUS_COLOUR.get(status) if name.endswith(" verdict") else None
    return f"<span style='background:{colour}'>{text}</span>" if colour else text


def _table(rows: Sequence[dict[str, Any]], caption: str) -> str:
    header = list(rows[0]) if rows else []
    page = html_table(header, ([_cell_html(k, r.get(k)) for k in header] for r in rows), caption)
    return page.removeprefix("<html><body>").removesuffix("</body></html>")


def _chart_html(title: str, png: bytes) -> str:
    data = base64.b64encode(png).decode()
    return f"<h2 style='font-family:sans-serif'>{html.escape(title)}</h2><img alt='{html.escape(title)}' " \
           f"src='data:image/png;base64,{data}'>"


def html_page(bakeoff: Bakeoff, charts: Mapping[str, bytes] | None = None) -> str:
    """A standalone page: the runs, what differs between them, the matrix, then the charts (PNG embedded)."""
    title = f"Bake-off: {', '.join(bakeoff.labels)} (reference {bakeoff.reference} = 100)"
    parts = [f"<h1 style='font-family:sans-serif'>{html.escape(title)}</h1>",
             _table(context_rows(bakeoff), "runs compared"), "<br>",
             _table(difference_rows(bakeoff), "differences that do not change the workload"), "<br>",
             _table(flat_rows(bakeoff), "the matrix: IOPS @ latency first, then event impacts, checks, curve points"),
             *(_chart_html(title, png) for title, png in (charts or {}).items())]
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head><body>" \
           f"{''.join(parts)}</body></html>"


def write_html(bakeoff: Bakeoff, out_dir: Path, charts: Mapping[str, bytes] | None = None) -> Path:
    target = out_dir / HTML_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html_page(bakeoff, charts), encoding="utf-8")
    return target


def page_charts(bakeoff: Bakeoff, out_dir: Path) -> dict[str, bytes]:
    """The page's charts: the knee overlays, then IOPS over time overlaid per run point where the runs' series
    were kept beside the exports (iogate/results/bakeoff_series.py)."""
    from iogate.results.bakeoff_charts import knee_charts  # matplotlib: only when the page is written
    from iogate.results.bakeoff_series import timeline_charts

    return {**{f"knee: {t}": png for t, png in knee_charts(bakeoff).items()}, **timeline_charts(bakeoff, out_dir)}


def write_all(bakeoff: Bakeoff, out_dir: Path) -> list[Path]:
    """CSV, XLSX and the HTML page with the knee and IOPS-over-time overlays."""
    return [write_csv(bakeoff, out_dir), write_xlsx(bakeoff, out_dir), write_html(bakeoff, out_dir, page_charts(bakeoff, out_dir))]


def attach_to_allure(bakeoff: Bakeoff, name: str = "bake-off", charts: Mapping[str, bytes] | None = None) -> None:
    """The page as an HTML attachment of the current Allure test or fixture (the lead's session hook calls this)."""
    import allure  # here, not at import: the CLI and exports work without allure installed

    allure.attach(html_page(bakeoff, charts), name=name, attachment_type=allure.attachment_type.HTML)
