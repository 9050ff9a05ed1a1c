"""PowerStore contract: the paths, methods, request fields and status codes of
../shared/specs/dell-powerstore/endpoints.md (Dell publishes no OpenAPI file).

Each table row gives a method, one or more backticked paths, the backticked
request fields (query `key=...` tokens give the query keys) and the response
codes. A request is valid when some row has its method and path, its JSON body
uses only fields that row names (nested objects too), and its query keys are
`select`, a key the row names, or a documented filter `<field>=eq.<value>` over
a field the document names somewhere. A response is valid when its status is
one the row lists (or, for a row listing none, a 2xx the conventions table allows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selftests.vendors.server import Reply, Request

SPEC = Path("/work/shared/specs/dell-powerstore/endpoints.md")
BASE = "/api/rest"
SDK_SUCCESS = {200, 201, 202, 204, 206, 207}  # the conventions table: codes the SDK accepts


@dataclass
class Row:
    what: str
    method: str
    template: str
    regex: re.Pattern[str]
    fields: set[str] = field(default_factory=set)
    query_keys: set[str] = field(default_factory=set)
    statuses: set[int] = field(default_factory=set)


def _ticks(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def parse(text: str) -> list[Row]:
    rows: list[Row] = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or cells[1] in ("Method", "---") or set(cells[1]) <= {"-"}:
            continue
        what, methods, paths, request, response = cells[:5]
        request_ticks = _ticks(request)
        fields = {t for t in request_ticks if re.fullmatch(r"[a-z_]+", t)}
        query = {t.split("=", 1)[0] for t in request_ticks if "=" in t}
        statuses = {int(code) for code in re.findall(r"\b([2-5]\d\d)\b", response)}
        for path in _ticks(paths):
            if not path.startswith("/") or path.count("/") < 1:
                continue
            template = path.split("?", 1)[0]
            for method in re.findall(r"\b(GET|POST|PATCH|DELETE|PUT)\b", methods):
                regex = re.compile("^" + "[^/]+".join(re.escape(part) for part in re.split(r"\{[^}]+\}", template)) + "$")
                rows.append(Row(what, method, template, regex, set(fields), set(query), set(statuses)))
            if "?" in path:  # "/host?name=eq.<n>": a documented query key of the same path
                rows[-1].query_keys.add(path.split("?", 1)[1].split("=", 1)[0])
    return rows


class PowerStoreContract:
    def __init__(self, text: str | None = None) -> None:
        text = text if text is not None else SPEC.read_text()
        self.rows = parse(text)
        # Field names: backticked tokens and the words of every "select: a,b,..." list.
        selects = " ".join(re.findall(r"select[=:]\s*([A-Za-z_,()… ]+)", text))
        self.known_fields = {t.split("=", 1)[0] for t in re.findall(r"`([^`]+)`", text)} | set(re.findall(r"[a-z_]+", selects))

    def _rows(self, request: Request) -> list[Row]:
        path = request.path.removeprefix(BASE)
        return [row for row in self.rows if row.method == request.method and row.regex.match(path)]

    def check_request(self, request: Request) -> list[str]:
        if not request.path.startswith(BASE + "/"):
            return [f"not under {BASE}"]
        rows = self._rows(request)
        if not rows:
            return ["no such call in endpoints.md"]
        problems: list[str] = []
        allowed = set().union(*(row.fields for row in rows))
        for name in _field_names(request.body):
            if name not in allowed:
                problems.append(f"body field {name!r} is not one endpoints.md gives for {rows[0].what}")
        keys = set().union(*(row.query_keys for row in rows)) | {"select"}
        for key, values in request.query.items():
            if key in keys:
                continue
            documented = key in self.known_fields or key.split("->>")[0] in self.known_fields
            if documented and all(v.startswith("eq.") for v in values):
                continue
            problems.append(f"query {key}={values} is neither select, a key of {rows[0].what} nor an eq. filter on a documented field")
        return problems

    def check_response(self, request: Request, reply: Reply) -> list[str]:
        rows = self._rows(request)
        if not rows or reply.status >= 400:
            return []
        if request.method == "GET" and reply.status == 206:
            # The paging row of the conventions table: any collection GET may answer 206 Partial Content with
            # `content-range: a-b/<total>` (to a `Range: a-b` request, or of its first page without one).
            asked = next((v for k, v in request.headers.items() if k.lower() == "range"), None)
            said = next((v for k, v in reply.headers.items() if k.lower() == "content-range"), "")
            problems = [] if asked is None or re.fullmatch(r"\d+-\d+", asked) else [f"Range {asked!r} is not a-b"]
            if not re.fullmatch(r"\d+-\d+/\d+", said):
                problems.append(f"206 without a content-range a-b/<total> ({said!r})")
            return problems
        documented = set().union(*(row.statuses for row in rows)) or SDK_SUCCESS
        if reply.status not in documented:
            return [f"status {reply.status} is not one endpoints.md gives ({sorted(documented)})"]
        return []


def _field_names(body: Any) -> list[str]:
    names: list[str] = []
    if isinstance(body, dict):
        for key, value in body.items():
            names.append(key)
            names.extend(_field_names(value))
    elif isinstance(body, list):
        for item in body:
            names.extend(_field_names(item))
    return names
