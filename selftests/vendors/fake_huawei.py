"""A fake Huawei OceanStor / Dorado DeviceManager REST API with state, and its contract from endpoints.md.

The contract (HuaweiContract) is built from ../shared/specs/huawei-oceanstor/endpoints.md (Huawei
publishes no machine-readable description). Every table row gives calls: a backticked `METHOD /path`,
or a backticked path in the row's path column under the row's methods (`.../x` is relative to the
row's previous path). Body fields are the backticked identifiers of the row and the names inside its
`{...}` bodies ("same body" takes the previous row's). A request is valid when:

- its path is /deviceManager/rest/<deviceId>/<a documented path> (login: POST .../xx/sessions), and it
  carries the iBaseToken header once logged in, and Content-Type application/json;
- its JSON body uses only fields the rows of that call name;
- its query keys are those of the call's rows or of the conventions (range, filter, selectFields,
  PARENTID, vstoreId); `range` is `[a-b]` with b - a = 100 (the paging convention), `filter` is
  `FIELD::value` over a field the document names. A GET with those query keys on any documented
  collection path is a list (the filters convention: "used by all three clients").

A response is valid when it is HTTP 200 with an `error` object whose `code` is an integer (the envelope
convention) and a paged list holds at most 100 items.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets as pysecrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selftests.vendors.server import Reply, Request

SPEC = Path("/work/shared/specs/huawei-oceanstor/endpoints.md")
BASE = "/deviceManager/rest"
PAGE = 100
METHODS = ("GET", "POST", "PUT", "DELETE")
_CALL = re.compile(r"^(GET|POST|PUT|DELETE)\s+(/\S*)")
_IDENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class Call:
    what: str
    method: str
    template: str
    regex: re.Pattern[str]
    fields: set[str] = field(default_factory=set)
    query_keys: set[str] = field(default_factory=set)


def _cells(line: str) -> list[str]:
    protected = re.sub(r"`[^`]*`", lambda m: m.group(0).replace("|", "\x00"), line)  # `a|b` inside a tick is not a cell border
    return [c.strip().replace("\x00", "|") for c in protected.strip().strip("|").split("|")]


def _ticks(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def _relative(path: str) -> str:
    """A documented path relative to the device: /deviceManager/rest/xx/sessions and /<deviceId>/sessions -> /sessions."""
    for head in (BASE + "/xx", "/<deviceId>"):
        if path.startswith(head + "/"):
            return path[len(head) :]
    return path


def _regex(template: str) -> re.Pattern[str]:
    return re.compile("^" + "[^/]+".join(re.escape(part) for part in re.split(r"<[^>]+>", template)) + "$")


def _fields(ticks: list[str]) -> set[str]:
    names: set[str] = set()
    for tick in ticks:
        body = tick[tick.index("{") :] if _CALL.match(tick) and "{" in tick else tick  # `POST /hostgroup {NAME}`: a call with its body
        if body.startswith("{"):
            for part in body.strip("{}").split(","):
                match = _IDENT.match(part.strip())
                if match:
                    names.add(match.group(1))
        elif not tick.startswith(("/", ".")) and not _CALL.match(tick):
            match = _IDENT.match(tick)
            if match:
                names.add(match.group(1))
    return names


def _query_keys(ticks: list[str]) -> set[str]:
    keys: set[str] = set()
    for tick in ticks:
        query = tick.split("?", 1)[1] if "?" in tick else tick
        keys.update(re.findall(r"(?:^|&)([A-Za-z_][A-Za-z0-9_]*)=", query))
    return keys


def parse(text: str) -> tuple[list[Call], set[str]]:
    """The calls of the tables, and the conventions' query keys (paging and filters rows)."""
    calls: list[Call] = []
    global_keys: set[str] = set()
    previous_fields: set[str] = set()
    header: list[str] = []
    for line in text.splitlines():
        if not line.startswith("|"):
            header = []
            continue
        cells = _cells(line)
        if not header:
            header = cells  # the table's first row names its columns
            continue
        if len(cells) < 3 or set(cells[1]) <= {"-", " "}:
            continue
        # Body fields come from the path and request columns where the table has one (not the response's fields),
        # else from every column but the source (which names functions of the clients, not fields).
        named = [c for c, title in zip(cells, header, strict=False) if title != "source"]
        request_cells = [c for c, title in zip(cells, header, strict=False) if title in ("path", "request fields", "request")]
        ticks = _ticks(" ".join(named))
        if cells[0] in ("paging", "filters"):
            global_keys |= _query_keys(ticks)
        fields = _fields(_ticks(" ".join(request_cells)) if request_cells else ticks)
        if "same body" in line:
            fields |= previous_fields
        keys = _query_keys(ticks)
        row_methods = re.findall(r"\b(GET|POST|PUT|DELETE)\b", cells[1]) if "`" not in cells[1] else []  # "DELETE (with body)"
        found: list[tuple[str, str]] = []
        last = ""
        for index, cell in enumerate(cells):
            for tick in _ticks(cell):
                explicit = _CALL.match(tick)
                if explicit:
                    last = _relative(explicit.group(2).split("?")[0])
                    found.append((explicit.group(1), last))
                elif tick.startswith(".../") and last:
                    path = last.rsplit("/", 1)[0] + tick[3:]
                    found += [(m, path) for m in row_methods]
                elif tick.startswith("/") and index == 2 and row_methods:
                    last = _relative(tick.split("?")[0])
                    found += [(m, last) for m in row_methods]
        for method, path in found:
            calls.append(Call(cells[0], method, path, _regex(path), set(fields), set(keys)))
        previous_fields = fields
    return calls, global_keys


class HuaweiContract:
    def __init__(self, text: str | None = None) -> None:
        text = text if text is not None else SPEC.read_text()
        self.calls, self.global_keys = parse(text)
        self.known_fields = {m.group(1) for t in _ticks(text) for m in [_IDENT.match(t.strip("{"))] if m}
        self.collections = {c.template for c in self.calls if "<" not in c.template}

    def _matching(self, method: str, path: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and c.regex.match(path)]

    def check_request(self, request: Request) -> list[str]:
        if not request.path.startswith(BASE + "/"):
            return [f"not under {BASE}"]
        device, _, rest = request.path.removeprefix(BASE + "/").partition("/")
        path = "/" + rest
        calls = self._matching(request.method, path)
        listing = request.method == "GET" and not calls and path in self.collections
        if not calls and not listing:
            return ["no such call in endpoints.md"]
        problems: list[str] = []
        login = request.method == "POST" and path == "/sessions"
        if login and device != "xx":
            problems.append("login is POST /deviceManager/rest/xx/sessions")
        headers = {k.lower(): v for k, v in request.headers.items()}
        if not login and not headers.get("ibasetoken"):
            problems.append("no iBaseToken header")
        if request.body is not None and "application/json" not in headers.get("content-type", ""):
            problems.append("a body without Content-Type application/json")
        allowed = set().union(*(c.fields for c in calls)) if calls else set()
        for name in _field_names(request.body):
            if name not in allowed:
                problems.append(f"body field {name!r} is not one endpoints.md gives for {calls[0].what if calls else path}")
        keys = set().union(*(c.query_keys for c in calls)) | self.global_keys if calls else self.global_keys
        for key, values in request.query.items():
            if key not in keys:
                problems.append(f"query {key} is not one endpoints.md gives for {calls[0].what if calls else path}")
                continue
            for value in values:
                problems += self._check_value(key, value)
        return problems

    def _check_value(self, key: str, value: str) -> list[str]:
        if key == "range":
            match = re.fullmatch(r"\[(\d+)-(\d+)\]", value)
            if match is None or int(match.group(2)) - int(match.group(1)) != PAGE:
                return [f"range={value} is not [a-b] with {PAGE} items (the paging convention)"]
        if key == "filter":
            match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)::?(.+)", value)
            if match is None or match.group(1) not in self.known_fields:
                return [f"filter={value} is not FIELD::value over a documented field"]
        return []

    def check_response(self, request: Request, reply: Reply) -> list[str]:
        if reply.status != 200:
            return [f"HTTP {reply.status}: every DeviceManager reply is HTTP 200 (the envelope convention)"]
        body = reply.body if isinstance(reply.body, dict) else {}
        error = body.get("error")
        if not isinstance(error, dict) or not isinstance(error.get("code"), int):
            return ["no error object with an integer code (the envelope convention)"]
        data = body.get("data")
        if "range" in request.query and isinstance(data, list) and len(data) > PAGE:
            return [f"a page of {len(data)} items, more than {PAGE}"]
        return []


def _field_names(body: Any) -> list[str]:
    if isinstance(body, dict):
        return [str(k) for k in body] + [n for v in body.values() if isinstance(v, dict) for n in _field_names(v)]
    return []


# -- the fake array --------------------------------------------------------------------------------------
NOT_FOUND = 1077948996
PARAMETER_ERROR = 50331651


def ok(data: Any = None) -> Reply:
    return Reply(200, {"data": data if data is not None else {}, "error": {"code": 0, "description": "0"}})


def fail(code: int, description: str) -> Reply:
    return Reply(200, {"data": {}, "error": {"code": code, "description": description}})


class FakeHuawei:
    """A DeviceManager with LUNs, hosts, initiators, both mapping models, snapshots, filesystems and shares."""

    def __init__(self, username: str, password: str, serial: str = "2102354JTB10N1000007") -> None:
        self.username, self.password, self.serial = username, password, serial
        self.tokens: set[str] = set()
        self.logins = 0
        self.logouts = 0
        self._ids = itertools.count(1)
        self.pools = [{"ID": "0", "NAME": "StoragePool001", "TYPE": 216, "USAGETYPE": "1"}]
        self.luns: dict[str, dict[str, Any]] = {}
        self.hosts: dict[str, dict[str, Any]] = {}
        self.initiators: dict[str, dict[str, dict[str, Any]]] = {"iscsi_initiator": {}, "fc_initiator": {}, "nvme_over_tcp_initiator": {}}
        self.mappings: list[dict[str, str]] = []  # direct model
        self.hostgroups: dict[str, dict[str, Any]] = {}
        self.lungroups: dict[str, dict[str, Any]] = {}
        self.views: dict[str, dict[str, Any]] = {}
        self.snapshots: dict[str, dict[str, Any]] = {}
        self.filesystems: dict[str, dict[str, Any]] = {}
        self.shares: dict[str, dict[str, Any]] = {}
        self.clients: dict[str, dict[str, Any]] = {}
        self.perf_switch = "1"
        self.sample: dict[str, Any] | None = None  # what cur_statistic_data answers
        self.fail_next: dict[tuple[str, str], int] = {}  # (method, path) -> an error.code to answer once
        self.rollback_polls = 2  # GETs of a rolling-back snapshot before it reports 100
        self.ranges_asked: list[tuple[str, str]] = []
        self.writes: list[str] = []

    def expire_sessions(self) -> None:
        self.tokens.clear()

    def bound(self) -> dict[str, str]:
        """initiator -> host id, of every initiator bound to a host."""
        return {i: o["PARENTID"] for kind in self.initiators.values() for i, o in kind.items() if o.get("PARENTID")}

    def _id(self) -> str:
        return str(next(self._ids))

    def __call__(self, request: Request) -> Reply:
        device, _, rest = request.path.removeprefix(BASE + "/").partition("/")
        path = "/" + rest
        if request.method == "POST" and path == "/sessions" and device == "xx":
            body = request.body or {}
            if body.get("username") != self.username or body.get("password") != self.password or body.get("scope") != "0":
                return fail(1077987870, "the user name or password is incorrect")
            token = pysecrets.token_hex(16)
            self.tokens.add(token)
            self.logins += 1
            return ok({"deviceid": self.serial, "iBaseToken": token, "accountstate": "1", "username": self.username})
        token = next((v for k, v in request.headers.items() if k.lower() == "ibasetoken"), "")
        if token not in self.tokens:
            return fail(-401, "unauthorized")
        if device != self.serial:
            return fail(PARAMETER_ERROR, f"no device {device}")
        if request.method != "GET":
            self.writes.append(f"{request.method} {path}")  # every write that reached the array with a valid session
        code = self.fail_next.pop((request.method, path), None)
        if code is not None:
            return fail(code, "injected error")
        query = {k: v[0] for k, v in request.query.items()}
        parts = path.strip("/").split("/")
        handler = getattr(self, f"_{parts[0].lower()}", None)
        if handler is None:
            return fail(PARAMETER_ERROR, f"no {path}")
        reply: Reply = handler(request.method, parts[1:], request.body or {}, query)
        return reply

    # -- listing ------------------------------------------------------------------------------
    def _list(self, path: str, items: list[dict[str, Any]], query: dict[str, str]) -> Reply:
        wanted = query.get("filter")
        if wanted:
            key, _, value = wanted.partition("::")
            items = [i for i in items if str(i.get(key)) == value]
        if "PARENTID" in query:
            items = [i for i in items if str(i.get("PARENTID")) == query["PARENTID"]]
        asked = query.get("range", "[0-100]")
        self.ranges_asked.append((path, asked))
        first, last = (int(n) for n in asked.strip("[]").split("-"))
        return ok(items[first : min(last, first + PAGE)])

    # -- system ---------------------------------------------------------------------------------
    def _system(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        return ok({"ID": self.serial, "NAME": "fake", "PRODUCTMODE": "811", "PRODUCTVERSION": "V600R005C03", "SECTORSIZE": "512"})

    def _storagepool(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        return self._list("/storagepool", self.pools, query)

    def _performance_statistic_switch(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        return ok({"CMO_PERFORMANCE_SWITCH": self.perf_switch})

    def _performance_statistic_strategy(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        return ok({"CMO_STATISTIC_INTERVAL": "60", "CMO_STATISTIC_ARCHIVE_SWITCH": "1"})

    def _performace_statistic(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        uuid = query.get("CMO_STATISTIC_UUID", "")
        if not uuid.startswith("11:") or uuid[3:] not in self.luns:
            return fail(NOT_FOUND, f"no object {uuid}")
        return ok([self.sample] if self.sample else [])

    # -- LUNs -------------------------------------------------------------------------------------
    def _lun(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        if rest == ["associate"]:
            return self._lun_associate(query)
        if not rest:
            if method == "POST":
                if any(lun["NAME"] == body["NAME"] for lun in self.luns.values()):
                    return fail(1077948993, f"name {body['NAME']} exists")
                if len(body["NAME"]) > 31 or not isinstance(body["CAPACITY"], int):
                    return fail(PARAMETER_ERROR, "NAME longer than 31 or CAPACITY not a sector count")
                lun_id = self._id()
                self.luns[lun_id] = {
                    "ID": lun_id, "NAME": body["NAME"], "TYPE": 11, "PARENTID": body["PARENTID"], "CAPACITY": str(body["CAPACITY"]),
                    "SECTORSIZE": "512", "ALLOCTYPE": str(body.get("ALLOCTYPE", 1)), "HEALTHSTATUS": "1", "RUNNINGSTATUS": "27",
                    "WWN": f"6{pysecrets.token_hex(15)}", "NGUID": pysecrets.token_hex(16),
                    "ENABLESMARTDEDUP": body.get("ENABLESMARTDEDUP", "false"), "ENABLECOMPRESSION": body.get("ENABLECOMPRESSION", "false"),
                    "DEDUPSAVEDRATIO": "1.50", "COMPRESSIONSAVEDRATIO": "2.00", "TOTALSAVEDRATIO": "3.00",
                    "DEDUPSAVEDCAPACITY": "1024", "COMPRESSIONSAVEDCAPACITY": "2048", "TOTALSAVEDCAPACITY": "3072",
                }
                return ok(self.luns[lun_id])
            return self._list("/lun", list(self.luns.values()), query)
        lun = self.luns.get(rest[0])
        if lun is None:
            return fail(1077936859, f"LUN {rest[0]} does not exist")
        if method == "DELETE":
            if any(m["lunId"] == lun["ID"] for m in self.mappings) or any(lun["ID"] in g["luns"] for g in self.lungroups.values()):
                return fail(1077936862, "the LUN is mapped")
            if any(s["PARENTID"] == lun["ID"] for s in self.snapshots.values()):
                return fail(PARAMETER_ERROR, "the LUN has snapshots")
            del self.luns[lun["ID"]]
            return ok()
        return ok(lun)

    def _lun_associate(self, query: dict[str, str]) -> Reply:
        kind, target = query.get("ASSOCIATEOBJTYPE"), query.get("ASSOCIATEOBJID", "")
        if kind == "256":
            group = self.lungroups.get(target)
            members = [self.luns[i] for i in (group or {}).get("luns", []) if i in self.luns]
        elif kind == "21":
            members = []
            for view in self.views.values():
                hostgroup = self.hostgroups.get(view.get("hostgroup", ""), {})
                if target in hostgroup.get("hosts", []):
                    for hlu, lun_id in enumerate(self.lungroups.get(view.get("lungroup", ""), {}).get("luns", []), start=1):
                        members.append({**self.luns[lun_id], "ASSOCIATEMETADATA": json.dumps({"HostLUNID": hlu})})
        else:
            return fail(PARAMETER_ERROR, f"ASSOCIATEOBJTYPE {kind}")
        return self._list("/lun/associate", members, query)

    # -- hosts and initiators -------------------------------------------------------------------------
    def _host(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        if rest == ["associate"]:
            group = self.hostgroups.get(query.get("ASSOCIATEOBJID", ""), {"hosts": []})
            return self._list("/host/associate", [self.hosts[h] for h in group["hosts"] if h in self.hosts], query)
        if not rest:
            if method == "POST":
                if any(h["NAME"] == body["NAME"] for h in self.hosts.values()) or len(body["NAME"]) > 31:
                    return fail(1077948993, f"name {body['NAME']} exists or is too long")
                host_id = self._id()
                self.hosts[host_id] = {"ID": host_id, "NAME": body["NAME"], "TYPE": 21, "OPERATIONSYSTEM": body.get("OPERATIONSYSTEM")}
                return ok(self.hosts[host_id])
            return self._list("/host", list(self.hosts.values()), query)
        host = self.hosts.get(rest[0])
        if host is None:
            return fail(1077937498, f"host {rest[0]} does not exist")
        if method == "DELETE":
            if host["ID"] in self.bound().values() or any(m["hostId"] == host["ID"] for m in self.mappings):
                return fail(PARAMETER_ERROR, "the host has initiators or mappings")
            if any(host["ID"] in g["hosts"] for g in self.hostgroups.values()):
                return fail(PARAMETER_ERROR, "the host is in a host group")
            del self.hosts[host["ID"]]
            return ok()
        return ok(host)

    def _initiator(self, collection: str, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        known = self.initiators[collection]
        if not rest:
            if method == "POST":
                if body["ID"] in known:
                    return fail(1077948997, "the initiator exists")
                known[body["ID"]] = {"ID": body["ID"], "PARENTID": ""}
                return ok(known[body["ID"]])
            return self._list(f"/{collection}", list(known.values()), query)
        action = rest[0]
        if action in ("remove_iscsi_from_host", "remove_fc_from_host", "remove_associate"):
            found = known.get(body["ID"])
            if found is None:
                return fail(NOT_FOUND, "no such initiator")
            if not found["PARENTID"] or ("PARENTID" in body and body["PARENTID"] != found["PARENTID"]):
                return fail(1077950342, "the initiator is not in the host")
            found["PARENTID"] = ""
            return ok()
        target = body["ID"] if action == "create_associate" else action
        found = known.get(target)
        if found is None:
            return fail(NOT_FOUND, "no such initiator")
        if body.get("PARENTID") not in self.hosts or str(body.get("PARENTTYPE")) != "21":
            return fail(PARAMETER_ERROR, "PARENTID is not a host")
        if found["PARENTID"] and found["PARENTID"] != body["PARENTID"]:
            return fail(PARAMETER_ERROR, "the initiator belongs to another host")
        found["PARENTID"] = body["PARENTID"]
        return ok()

    def _iscsi_initiator(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        return self._initiator("iscsi_initiator", method, rest, body, query)

    def _fc_initiator(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        return self._initiator("fc_initiator", method, rest, body, query)

    def _nvme_over_tcp_initiator(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        return self._initiator("nvme_over_tcp_initiator", method, rest, body, query)

    # -- mapping: direct -----------------------------------------------------------------------------
    def _mapping(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        key = {"hostId": body.get("hostId"), "lunId": body.get("lunId")}
        if key["hostId"] not in self.hosts or key["lunId"] not in self.luns:
            return fail(NOT_FOUND, "no such host or LUN")
        present = key in [{"hostId": m["hostId"], "lunId": m["lunId"]} for m in self.mappings]
        if method == "POST":
            if present:
                return fail(1073804588, "already mapped")
            self.mappings.append({"hostId": key["hostId"], "lunId": key["lunId"]})
            return ok()
        if not present:
            return fail(1073804587, "no such mapping")
        self.mappings = [m for m in self.mappings if m != key]
        return ok()

    # -- mapping: views ------------------------------------------------------------------------------
    def _group(self, table: dict[str, dict[str, Any]], members: str, gone: int, method: str, rest: list[str], body: dict[str, Any],
               query: dict[str, str]) -> Reply:
        if not rest:
            if method == "POST":
                if any(g["NAME"] == body["NAME"] for g in table.values()) or len(body["NAME"]) > 31:
                    return fail(1077948993, f"name {body['NAME']} exists or is too long")
                group_id = self._id()
                table[group_id] = {"ID": group_id, "NAME": body["NAME"], members: []}
                return ok(table[group_id])
            return self._list("/group", list(table.values()), query)
        if rest == ["associate"]:
            source = body if method == "POST" else query
            group = table.get(str(source.get("ID")))
            if group is None:
                return fail(gone, "no such group")
            member = str(source.get("ASSOCIATEOBJID"))
            if method == "POST":
                if member in group[members]:
                    return fail(1077936862, "already in the group")
                group[members].append(member)
            elif member in group[members]:
                group[members].remove(member)
            else:
                return fail(NOT_FOUND, "not in the group")
            return ok()
        group = table.get(rest[0])
        if group is None:
            return fail(gone, "no such group")
        if method == "DELETE":
            if group[members] or any(group["ID"] in (v["hostgroup"], v["lungroup"]) for v in self.views.values()):
                return fail(PARAMETER_ERROR, "the group is not empty or is in a mapping view")
            del table[group["ID"]]
            return ok()
        return ok(group)

    def _hostgroup(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        return self._group(self.hostgroups, "hosts", 1077937500, method, rest, body, query)

    def _lungroup(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        return self._group(self.lungroups, "luns", NOT_FOUND, method, rest, body, query)

    def _mappingview(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        if not rest:
            if method == "POST":
                view_id = self._id()
                self.views[view_id] = {"ID": view_id, "NAME": body["NAME"], "hostgroup": "", "lungroup": ""}
                return ok(self.views[view_id])
            return self._list("/mappingview", list(self.views.values()), query)
        if rest[0] in ("create_associate", "remove_associate"):
            view = self.views.get(str(body.get("ID")))
            if view is None:
                return fail(1077951819, "no such mapping view")
            slot = {14: "hostgroup", 256: "lungroup"}.get(int(body["ASSOCIATEOBJTYPE"]))
            if slot is None:
                return fail(PARAMETER_ERROR, "ASSOCIATEOBJTYPE")
            view[slot] = str(body["ASSOCIATEOBJID"]) if rest[0] == "create_associate" else ""
            return ok()
        view = self.views.get(rest[0])
        if view is None:
            return fail(1077951819, "no such mapping view")
        if view["hostgroup"] or view["lungroup"]:
            return fail(PARAMETER_ERROR, "the mapping view still has groups")
        del self.views[view["ID"]]
        return ok()

    # -- snapshots -------------------------------------------------------------------------------------
    def _snapshot(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        if not rest:
            if method == "POST":
                if body["PARENTID"] not in self.luns or len(body["NAME"]) > 31:
                    return fail(PARAMETER_ERROR, "no such LUN or the name is too long")
                snap_id = self._id()
                self.snapshots[snap_id] = {"ID": snap_id, "NAME": body["NAME"], "PARENTID": body["PARENTID"], "TYPE": 27,
                                           "HEALTHSTATUS": "1", "RUNNINGSTATUS": "inactive", "ROLLBACKRATE": "-1", "ROLLBACKENDTIME": "-1"}
                return ok(self.snapshots[snap_id])
            return self._list("/snapshot", list(self.snapshots.values()), query)
        if rest == ["activate"]:
            for snap_id in body["SNAPSHOTLIST"]:
                self.snapshots[snap_id]["RUNNINGSTATUS"] = "active"
            return ok()
        if rest[0] in ("stop", "rollback"):
            snap = self.snapshots.get(str(body.get("ID")))
            if snap is None:
                return fail(1077937880, "no such snapshot")
            if rest[0] == "stop":
                snap["RUNNINGSTATUS"] = "inactive"
            else:
                if snap["RUNNINGSTATUS"] != "active" or not 1 <= int(body["ROLLBACKSPEED"]) <= 4:
                    return fail(PARAMETER_ERROR, "the snapshot is not active or the speed is out of range")
                snap["ROLLBACKRATE"], snap["polls_left"] = "0", self.rollback_polls
                self.luns[snap["PARENTID"]]["rolled_back_to"] = snap["NAME"]
            return ok()
        snap = self.snapshots.get(rest[0])
        if snap is None:
            return fail(1077937880, "no such snapshot")
        if method == "DELETE":
            if snap["RUNNINGSTATUS"] == "active":
                return fail(PARAMETER_ERROR, "stop the snapshot first")
            del self.snapshots[snap["ID"]]
            return ok()
        if "polls_left" in snap:
            snap["polls_left"] -= 1
            if snap["polls_left"] <= 0:
                snap["ROLLBACKRATE"] = "100"
                del snap["polls_left"]
            else:
                snap["ROLLBACKRATE"] = "50"
        return ok({k: v for k, v in snap.items() if k != "polls_left"})

    # -- filesystems and NFS --------------------------------------------------------------------------------
    def _filesystem(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        if method == "POST":
            fs_id = self._id()
            self.filesystems[fs_id] = {"ID": fs_id, "NAME": body["NAME"], "CAPACITY": str(body["CAPACITY"]), "TYPE": 40}
            return ok(self.filesystems[fs_id])
        if method == "DELETE":
            fs = self.filesystems.get(str(body.get("ID")))
            if fs is None:
                return fail(1073752065, "no such filesystem")
            if any(s["FSID"] == fs["ID"] for s in self.shares.values()):
                return fail(PARAMETER_ERROR, "the filesystem is shared")
            del self.filesystems[fs["ID"]]
            return ok()
        return self._list("/filesystem", list(self.filesystems.values()), query)

    def _nfshare(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        if method == "POST":
            if body["FSID"] not in self.filesystems:
                return fail(1073752065, "no such filesystem")
            share_id = self._id()
            self.shares[share_id] = {"ID": share_id, "SHAREPATH": body["SHAREPATH"], "FSID": body["FSID"]}
            return ok(self.shares[share_id])
        if method == "DELETE":
            self.shares.pop(rest[0], None)
            self.clients = {k: c for k, c in self.clients.items() if c["PARENTID"] != rest[0]}
            return ok()
        return self._list("/NFSHARE", list(self.shares.values()), query)

    def _nfs_share_auth_client(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        if body.get("PARENTID") not in self.shares:
            return fail(PARAMETER_ERROR, "no such share")
        client_id = self._id()
        self.clients[client_id] = {"ID": client_id, **body}
        return ok(self.clients[client_id])

    def _sessions(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        self.logouts += 1
        return ok()
