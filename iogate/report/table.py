"""The one HTML table of the report's attachments: a plain page the Allure attachment viewer shows as is.

`html_table` lays out a header and rows of cells that are HTML already (the
verdict table colours its PASS/FAIL); `rows_table` is the common case, a list
of dicts shown as text, one column per key.

>>> page = rows_table([{"step": "hosts-2", "iops": 1234.5678, "p99": None}], float_format=".4g")
>>> page[page.index("<tr>"):page.index("</table>")]
'<tr><th>step</th><th>iops</th><th>p99</th></tr><tr><td>hosts-2</td><td>1235</td><td></td></tr>'
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_TABLE = "<table border='1' cellpadding='4' style='border-collapse:collapse;font-family:sans-serif'>"
EMPTY_PAGE = "<html><body>no rows</body></html>"


def html_table(header: Sequence[str], rows: Iterable[Sequence[str]], caption: str = "") -> str:
    """A page with one table: header and caption are text (escaped here), each row's cells are HTML."""
    head = "".join(f"<th>{html.escape(name)}</th>" for name in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    top = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<html><body>{_TABLE}{top}<tr>{head}</tr>{body}</table></body></html>"


def text_cell(value: Any, float_format: str = "") -> str:
    """A value as an escaped cell: None is empty; a float in float_format when one is given."""
    if value is None:
        return ""
    return html.escape(format(value, float_format) if float_format and isinstance(value, float) else str(value))


def rows_table(rows: Sequence[Mapping[str, Any]], caption: str = "", float_format: str = "") -> str:
    """Dicts as a table: a column per key (in first-seen order over all rows), a missing key an empty cell.

    No rows: a page that says so.
    """
    if not rows:
        return EMPTY_PAGE
    keys = list(dict.fromkeys(key for row in rows for key in row))
    return html_table(keys, ([text_cell(row.get(key), float_format) for key in keys] for row in rows), caption)


def table_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as CSV text, the first row's keys the header ("" for no rows): the CSV twin of rows_table."""
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return out.getvalue()
