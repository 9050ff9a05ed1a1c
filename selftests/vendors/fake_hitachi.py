"""A fake Hitachi VSP Configuration Manager REST API with state, and its contract from
../shared/specs/hitachi/endpoints.md (section A; Hitachi publishes no OpenAPI file).

The contract reads the document's tables: a row's method cell and its backticked `.../path`
tokens (placeholders `<id>` match one segment, commas stay literal), the calls written inline
(`GET .../jobs/<jobId>`, "list `GET ...`", "delete `...`", "list `?key=`"), the body fields
the row names (its request cell and the `{...}` tokens of its path cell) and its query keys
(`?key=` in its paths, plus the filters of the "list paging" convention). A request is valid
when some row has its method and path, its JSON body uses only fields those rows name (nested
too), its query keys are documented, and it carries the conventions' headers: Basic
credentials for the login, `Session <token>` for every later call, `Content-Type:
application/json` with a body. A response is valid when a write (POST/PUT/PATCH/DELETE other
than the login) answers 202 with a job whose fields are the conventions' job fields, a read
answers 200, and an error body uses the conventions' error fields.
"""

from __future__ import annotations

import base64
import itertools
import re
import secrets as pysecrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selftests.vendors.server import Reply, Request

SPEC = Path("/work/shared/specs/hitachi/endpoints.md")
BASE = "/ConfigurationManager/v1/objects"
JOB_FIELDS = {"jobId", "self", "status", "state", "affectedResources", "error"}  # conventions: async jobs
ERROR_FIELDS = {"errorSource", "messageId", "message", "cause", "solution", "errorCode", "SSB1", "SSB2"}  # conventions: error body
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


@dataclass
class Row:
    what: str
    method: str
    template: str
    regex: re.Pattern[str]
    fields: set[str] = field(default_factory=set)
    query_keys: set[str] = field(default_factory=set)


def _template(path: str) -> str:
    """`.../ldevs/<id>` or `/ConfigurationManager/v1/objects/storages` -> `/ldevs/<id>`, `/storages`."""
    path = path.split("?", 1)[0].removeprefix("...")
    return path.removeprefix(BASE).removeprefix("/objects")


def _regex(template: str) -> re.Pattern[str]:
    return re.compile("^" + "[^/]+".join(re.escape(part) for part in re.split(r"<[^>]+>", template)) + "$")


def _identifiers(tokens: list[str]) -> set[str]:
    return {word for token in tokens for word in re.findall(r"[A-Za-z][A-Za-z0-9]*", token)}


def _query_keys(path: str) -> set[str]:
    return set(re.findall(r"[?&]([A-Za-z]+)=", path))


def parse(text: str) -> tuple[list[Row], set[str]]:
    """The calls of section A and the query keys the paging convention allows on any list."""
    section = text.split("## A.", 1)[1].split("## B.", 1)[0]
    rows: list[Row] = []
    paging_keys: set[str] = set()

    def add(what: str, method: str, path: str, fields: set[str], query: set[str]) -> None:
        template = _template(path)
        if template.startswith("/") and "<object url>" not in path:
            rows.append(Row(what, method, template, _regex(template), set(fields), query | _query_keys(path)))

    for line in section.splitlines():
        if not line.startswith("|") or set(line) <= {"|", "-", " "}:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        what = cells[0]
        if what in ("what", "topic"):
            continue
        if what == "list paging":
            keys_only = re.sub(r"(`ldevOption`) =[^;]*;", r"\1;", line)  # the values ldevOption takes are not keys
            paging_keys = {t.split("=", 1)[0] for t in re.findall(r"`([^`]+)`", keys_only) if re.fullmatch(r"[A-Za-z]+(=.*)?", t)}
        # Calls written inline: `GET .../jobs/<jobId>`
        for method, path in re.findall(r"`(GET|POST|PUT|PATCH|DELETE) ([^` ]+)`", line):
            add(what, method, path, set(), set())
        for verb, path in re.findall(r"\b(list|delete) `(\.\.\.[^`]+)`", line):
            add(what, "GET" if verb == "list" else "DELETE", path, set(), set())
        if len(cells) < 4 or not re.search(r"\b(GET|POST|PUT|PATCH|DELETE)\b", cells[1]):
            continue
        methods = re.findall(r"\b(GET|POST|PUT|PATCH|DELETE)\b", cells[1])
        path_tokens = re.findall(r"`([^`]+)`", cells[2])
        paths = [t for t in path_tokens if t.startswith(".../")]
        fields = _identifiers(re.findall(r"`([^`]+)`", cells[3])) | _identifiers([t for t in path_tokens if t.startswith("{")])
        listed = {t.lstrip("?").split("=", 1)[0] for t in path_tokens if t.startswith("?")}
        for path in paths:
            for method in methods:
                add(what, method, path, fields, set())
        if listed and paths:  # "list `?nvmSubsystemId=`": a GET of the row's collection
            add(what, "GET", paths[0], set(), listed)
    return rows, paging_keys


NAS_BASE = re.compile(r"^/v[78]/storage(/.*)$")
NAS_ERROR_FIELDS = {"errorMsg", "errorDetail", "message"}  # section C: errors
NAS_SUCCESS = {200, 201, 204}


def parse_nas(text: str) -> list[Row]:
    """The calls of section C (HNAS / VSP One File): paths relative to /v7|v8/storage/."""
    section = text.split("## C.", 1)[1]
    rows: list[Row] = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 4 or not re.search(r"\b(GET|POST|PUT|PATCH|DELETE)\b", cells[1]):
            continue
        methods = re.findall(r"\b(GET|POST|PUT|PATCH|DELETE)\b", cells[1])
        fields = _identifiers(re.findall(r"`([^`]+)`", cells[3]))
        paths: list[tuple[str, str | None, set[str]]] = []  # (path, the one method it is listed for or None, query keys)
        last = ""
        for match in re.finditer(r"(\(|list )?`([^`]+)`", cells[2]):
            before, token = match.group(1), match.group(2)
            if token.startswith("{"):
                fields |= _identifiers([token])
            elif before == "(" and token.startswith("?") and paths:
                paths[-1][2].update(_query_keys(token))
            elif before == "(":
                fields.add(token)  # "/format (`blockSize`)": a field of the call before it
            else:
                path = (last.rsplit("/", 1)[0] + token) if token.startswith("/") else token
                last = path.split("?", 1)[0]
                for alternative in _alternatives(last):
                    paths.append((alternative, "GET" if before == "list " else None, _query_keys(path)))
        for path, only, query in paths:
            for method in [only] if only else methods:
                rows.append(Row(cells[0], method, "/" + path, _regex("/" + path), set(fields), set(query)))
    return rows


def _alternatives(path: str) -> list[str]:
    """`virtual-servers/<id>/enable|disable` -> both paths."""
    head, _, tail = path.rpartition("/")
    return [f"{head}/{t}" if head else t for t in tail.split("|")]


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


def _header(request: Request, name: str) -> str:
    return next((v for k, v in request.headers.items() if k.lower() == name.lower()), "")


class HitachiContract:
    def __init__(self, text: str | None = None) -> None:
        text = text if text is not None else SPEC.read_text()
        self.rows, self.paging_keys = parse(text)
        self.nas_rows = parse_nas(text)

    def _nas_rows(self, request: Request) -> list[Row] | None:
        """The section C rows of an HNAS request; None for a request that is not one."""
        match = NAS_BASE.match(request.path)
        if match is None:
            return None
        return [r for r in self.nas_rows if r.method == request.method and r.regex.match(match.group(1))]

    def _check_nas(self, request: Request, rows: list[Row]) -> list[str]:
        if not rows:
            return ["no such call in endpoints.md (HNAS)"]
        problems: list[str] = []
        if not (_header(request, "X-Api-Key") or (_header(request, "X-Subsystem-User") and _header(request, "X-Subsystem-Password"))):
            problems.append("neither X-Api-Key nor X-Subsystem-User and X-Subsystem-Password")
        if request.body is not None and not _header(request, "Content-Type").startswith("application/json"):
            problems.append("a body without Content-Type: application/json")
        allowed = set().union(*(r.fields for r in rows))
        unknown = [n for n in _field_names(request.body) if n not in allowed]
        problems += [f"body field {n!r} is not one endpoints.md gives for {rows[0].what}" for n in unknown]
        keys = set().union(*(r.query_keys for r in rows))
        problems += [f"query key {k!r} is not one endpoints.md gives for {rows[0].what}" for k in request.query if k not in keys]
        return problems

    def _path(self, request: Request) -> str | None:
        if not request.path.startswith(BASE + "/"):
            return None
        path = request.path.removeprefix(BASE)
        # A Configuration Manager server addresses the array: /storages/<storageDeviceId>/<object>...
        return re.sub(r"^/storages/(?!instance$)[^/]+(?=/)", "", path)

    def _rows(self, request: Request) -> list[Row]:
        path = self._path(request)
        return [r for r in self.rows if path is not None and r.method == request.method and r.regex.match(path)]

    def check_request(self, request: Request) -> list[str]:
        nas = self._nas_rows(request)
        if nas is not None:
            return self._check_nas(request, nas)
        if self._path(request) is None:
            return [f"not under {BASE}"]
        rows = self._rows(request)
        if not rows:
            return ["no such call in endpoints.md"]
        problems: list[str] = []
        login = request.method == "POST" and rows[0].template == "/sessions"
        auth = _header(request, "Authorization")
        if login and not auth.startswith("Basic "):
            problems.append("the login does not send Basic credentials")
        if not login and not auth.startswith("Session "):
            problems.append("Authorization is not `Session <token>`")
        if request.body is not None and not _header(request, "Content-Type").startswith("application/json"):
            problems.append("a body without Content-Type: application/json")
        allowed = set().union(*(r.fields for r in rows))
        for name in _field_names(request.body):
            if name not in allowed:
                problems.append(f"body field {name!r} is not one endpoints.md gives for {rows[0].what}")
        keys = set().union(*(r.query_keys for r in rows)) | (self.paging_keys if request.method == "GET" else set())
        for key in request.query:
            if key not in keys:
                problems.append(f"query key {key!r} is not one endpoints.md gives for {rows[0].what}")
        return problems

    def check_response(self, request: Request, reply: Reply) -> list[str]:
        nas = self._nas_rows(request)
        if nas is not None:
            if not nas:
                return []
            if reply.status >= 400:
                extra = set(reply.body or {}) - NAS_ERROR_FIELDS if isinstance(reply.body, dict) else set()
                return [f"error body fields {sorted(extra)} are not section C's"] if extra else []
            return [] if reply.status in NAS_SUCCESS else [f"status {reply.status} is not one of section C's {sorted(NAS_SUCCESS)}"]
        rows = self._rows(request)
        if not rows:
            return []
        body = reply.body if isinstance(reply.body, dict) else {}
        if reply.status >= 400:
            extra = set(_field_names(body)) - ERROR_FIELDS - {"errorCode"}
            return [f"error body fields {sorted(extra)} are not the conventions' error fields"] if extra else []
        if rows[0].template in ("/sessions", "/sessions/<sessionId>"):
            return []  # the login answers {token, sessionId}; the table gives no status for the session calls
        if request.method == "GET":
            return [] if reply.status == 200 else [f"status {reply.status} for a read"]
        problems = [] if reply.status == 202 else [f"status {reply.status}: a write answers 202 with a job"]
        if set(body) - JOB_FIELDS or "jobId" not in body:
            problems.append(f"job fields {sorted(body)} are not the conventions' {sorted(JOB_FIELDS)}")
        return problems


def _error(status: int, message_id: str, message: str, ssb: tuple[str, str] | None = None) -> Reply:
    body: dict[str, Any] = {"errorSource": "/ConfigurationManager/v1/objects", "messageId": message_id, "message": message,
                            "cause": "", "solution": ""}
    if ssb:
        body["errorCode"] = {"SSB1": ssb[0], "SSB2": ssb[1]}
    return Reply(status, body)


def gone(what: str) -> Reply:
    return _error(404, "KART30013-E", f"The specified object ({what}) does not exist.")


@dataclass
class JobRule:
    """Jobs of writes matching (method, path regex) end Failed with this error (nothing changes) or never end."""

    method: str
    path_regex: str
    fail: tuple[str, str] | None = None  # (SSB1, SSB2)
    stuck: bool = False
    times: int = 1


class FakeHitachi:
    """A VSP as CMREST shows it: LDEVs, ports, host groups, LUNs, an NVM subsystem, Thin Image pairs, jobs."""

    SERIAL = 0x22B3F1

    def __init__(self, username: str, password: str, storage_device_id: str = "886000420211", api_key: str = "") -> None:
        self.auth = "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()
        self.api_key = api_key or password
        self.filesystems: dict[str, dict[str, Any]] = {}
        self.nfs_exports: dict[str, dict[str, Any]] = {}
        self._nas_ids = itertools.count(1)
        self.storage_device_id = storage_device_id
        self.tokens: set[str] = set()
        self.logins = 0
        self.ldevs: dict[int, dict[str, Any]] = {}
        self.contents: dict[int, str] = {}  # what an LDEV holds (the fake's stand-in for its blocks)
        self.pools = {
            10: {"poolId": 10, "poolName": "dp10", "poolType": "DP", "dataReductionRate": 3, "compressionRate": 2, "duplicationRate": 45,
                 "dataReductionCapacity": 300, "dataReductionBeforeCapacity": 900},
            20: {"poolId": 20, "poolName": "hti20", "poolType": "HTI"},
        }
        self.ports = {
            "CL1-A": {"portId": "CL1-A", "portType": "FIBRE", "wwn": "50060e8012345600"},
            "CL2-A": {"portId": "CL2-A", "portType": "FIBRE", "wwn": "50060e8012345610"},
            "CL1-B": {"portId": "CL1-B", "portType": "ISCSI", "ipv4Address": "192.0.2.81", "tcpPort": 3260},
        }
        self.host_groups: dict[tuple[str, int], dict[str, Any]] = {}
        self.host_wwns: list[dict[str, Any]] = []
        self.host_iscsis: list[dict[str, Any]] = []
        self.luns: dict[tuple[str, int, int], int] = {}  # (port, group, lun) -> ldevId
        self.subsystem_id = 5
        self.host_nqns: list[str] = []
        self.namespaces: dict[int, int] = {}  # nsid -> ldevId
        self.namespace_paths: set[tuple[str, int]] = set()  # (hostNqn, nsid)
        self.snapshots: dict[tuple[int, int], dict[str, Any]] = {}
        self.captured: dict[tuple[int, int], str] = {}
        self.restores: list[str] = []
        self.jobs: dict[int, dict[str, Any]] = {}
        self.job_rules: list[JobRule] = []
        self.polls_until_done = 1  # a job reads "Initializing" this many times before it is Completed
        self._job_ids = itertools.count(1)
        self.efficiency = {
            "isCalculated": True, "totalRatio": "4.20", "compressionRatio": "1.90", "snapshotRatio": "12.00",
            "provisioningRate": "300", "calculationStartTime": "2026-11-27T22:00:00Z", "calculationEndTime": "2026-11-27T22:10:00Z",
            "dedupeAndCompression": {"totalRatio": "2.70", "compressionRatio": "1.50", "dedupeRatio": "1.80", "reclaimRatio": "1.00"},
        }

    def expire_sessions(self) -> None:
        self.tokens.clear()

    def naa(self, ldev_id: int) -> str:
        return f"60060e80{self.SERIAL:06x}0000{ldev_id:014x}"

    # -- dispatch ------------------------------------------------------------------
    def __call__(self, request: Request) -> Reply:
        nas = NAS_BASE.match(request.path)
        if nas:
            return self._nas(request, [p for p in nas.group(1).strip("/").split("/") if p])
        path = request.path.removeprefix(BASE)
        addressed = re.match(r"^/storages/(?!instance$)([^/]+)(?=/)", path)
        if addressed and addressed.group(1) != self.storage_device_id:
            return gone(f"storage {addressed.group(1)}")
        path = re.sub(rf"^/storages/{self.storage_device_id}(?=/)", "", path)
        parts = [p for p in path.strip("/").split("/") if p]
        if parts == ["sessions"] and request.method == "POST":
            if _header(request, "Authorization") != self.auth:
                return _error(401, "KART40047-E", "authentication failed")
            token = pysecrets.token_hex(16)
            self.tokens.add(token)
            self.logins += 1
            return Reply(200, {"token": token, "sessionId": self.logins})
        if _header(request, "Authorization").removeprefix("Session ") not in self.tokens:
            return _error(401, "KART40046-E", "the session is not valid (expired)")
        if parts[0] == "sessions":
            self.tokens.discard(_header(request, "Authorization").removeprefix("Session "))
            return self._job(request, [])
        if request.method == "GET":
            return self._read(parts, request.query)
        for rule in self.job_rules:
            if rule.times > 0 and rule.method == request.method and re.search(rule.path_regex, path):
                rule.times -= 1
                if rule.stuck:
                    return self._job(request, [], stuck=True)
                return self._job(request, [], fail=rule.fail)
        handler = getattr(self, f"_{request.method.lower()}_{parts[0].replace('-', '_')}", None)
        if handler is None:
            return _error(400, "KART00000-E", f"no {request.method} {path}")
        result = handler(parts[1:], request.body or {})
        if isinstance(result, Reply):
            return result
        return self._job(request, result)

    def _job(self, request: Request, affected: list[str], fail: tuple[str, str] | None = None, stuck: bool = False) -> Reply:
        job_id = next(self._job_ids)
        job = {"jobId": job_id, "self": f"{BASE}/jobs/{job_id}", "status": "Initializing", "state": "Queued",
               "affectedResources": [f"{BASE}/{a}" for a in affected], "error": None}
        self.jobs[job_id] = {"job": job, "polls": 0 if stuck else self.polls_until_done, "stuck": stuck, "fail": fail}
        if not stuck and self.polls_until_done == 0:
            self._finish(job_id)
        return Reply(202, dict(job))

    def _finish(self, job_id: int) -> None:
        entry = self.jobs[job_id]
        entry["job"]["status"] = "Completed"
        if entry["fail"]:
            ssb1, ssb2 = entry["fail"]
            entry["job"]["state"] = "Failed"
            entry["job"]["affectedResources"] = []
            entry["job"]["error"] = {"messageId": "KART40022-E", "message": "The operation failed on the storage system.",
                                     "errorCode": {"SSB1": ssb1, "SSB2": ssb2}}
        else:
            entry["job"]["state"] = "Succeeded"

    def _read(self, parts: list[str], query: dict[str, list[str]]) -> Reply:
        q = {k: v[0] for k, v in query.items()}
        kind = parts[0]
        if kind == "jobs":
            entry = self.jobs.get(int(parts[1]))
            if entry is None:
                return gone(f"job {parts[1]}")
            if not entry["stuck"] and entry["job"]["status"] != "Completed":
                entry["polls"] -= 1
                if entry["polls"] <= 0:
                    self._finish(int(parts[1]))
            return Reply(200, dict(entry["job"]))
        if parts == ["storages", "instance"]:
            return Reply(200, {"storageDeviceId": self.storage_device_id, "model": "VSP E990", "serialNumber": self.SERIAL,
                               "dkcMicroVersion": "93-06-21-80/00"})
        if parts == ["storages"]:
            return Reply(200, {"data": [{"storageDeviceId": self.storage_device_id, "model": "VSP E990", "serialNumber": self.SERIAL,
                                         "dkcMicroVersion": "93-06-21-80/00"}]})
        if parts == ["total-efficiencies", "instance"]:
            return Reply(200, dict(self.efficiency))
        if kind == "pools" and len(parts) == 2:
            pool = self.pools.get(int(parts[1]))
            return Reply(200, dict(pool)) if pool else gone(f"pool {parts[1]}")
        if kind == "ports" and len(parts) == 2:
            port = self.ports.get(parts[1])
            return Reply(200, dict(port)) if port else gone(f"port {parts[1]}")
        if kind == "ldevs" and len(parts) == 2:
            ldev_id = int(parts[1])
            return Reply(200, self._ldev_view(ldev_id))
        if kind == "ldevs":
            head, count = int(q.get("headLdevId", 0)), int(q.get("count", 100))
            if q.get("ldevOption") == "undefined":
                free = [i for i in range(head, 65280) if i not in self.ldevs][:count]
                return Reply(200, {"data": [{"ldevId": i, "emulationType": "NOT DEFINED"} for i in free]})
            return Reply(200, {"data": [self._ldev_view(i) for i in sorted(self.ldevs) if i >= head][:count]})
        if kind == "host-groups" and len(parts) == 2:
            port, number = parts[1].split(",")
            group = self.host_groups.get((port, int(number)))
            return Reply(200, dict(group)) if group else gone(f"host group {parts[1]}")
        if kind == "host-groups":
            return Reply(200, {"data": [dict(g) for (p, _), g in sorted(self.host_groups.items()) if p == q.get("portId", p)]})
        if kind == "luns":
            found = [{"lunId": f"{p},{g},{lun}", "portId": p, "hostGroupNumber": g, "lun": lun, "ldevId": ldev}
                     for (p, g, lun), ldev in sorted(self.luns.items())
                     if p == q.get("portId", p) and str(g) == q.get("hostGroupNumber", str(g))]
            return Reply(200, {"data": found})
        if kind == "host-nqns":
            ours = q.get("nvmSubsystemId", str(self.subsystem_id)) == str(self.subsystem_id)
            return Reply(200, {"data": [{"hostNqnId": f"{self.subsystem_id},{n}", "nvmSubsystemId": self.subsystem_id, "hostNqn": n}
                                        for n in self.host_nqns if ours]})
        if kind == "snapshots":
            found = [dict(s) for (pvol, _), s in sorted(self.snapshots.items()) if str(pvol) == q.get("pvolLdevId", str(pvol))]
            return Reply(200, {"data": found})
        return _error(400, "KART00000-E", f"the fake has no GET /{'/'.join(parts)}")

    def _ldev_view(self, ldev_id: int) -> dict[str, Any]:
        ldev = self.ldevs.get(ldev_id)
        if ldev is None:
            return {"ldevId": ldev_id, "emulationType": "NOT DEFINED"}
        ports = [{"portId": p, "hostGroupNumber": g, "hostGroupName": self.host_groups[(p, g)]["hostGroupName"], "lun": lun}
                 for (p, g, lun), i in self.luns.items() if i == ldev_id]
        view = {**ldev, "numOfPorts": len(ports), "ports": ports, "naaId": self.naa(ldev_id)}
        nsid = next((n for n, i in self.namespaces.items() if i == ldev_id), None)
        if nsid is not None:
            view |= {"namespaceId": nsid, "nvmSubsystemId": self.subsystem_id}
        return view

    # -- writes (each returns the affected resources of its job, or an error Reply) ---------------
    def _post_ldevs(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        ldev_id = int(body["ldevId"])
        if ldev_id in self.ldevs:
            return _error(409, "KART40022-E", f"LDEV {ldev_id} is already defined", ("2E22", "0001"))
        if body.get("poolId") not in self.pools:
            return _error(400, "KART40022-E", f"no pool {body.get('poolId')}")
        self.ldevs[ldev_id] = {"ldevId": ldev_id, "label": "", "status": "NML", "emulationType": "OPEN-V-CVS",
                               "blockCapacity": int(body["blockCapacity"]), "poolId": body["poolId"],
                               "dataReductionMode": body.get("dataReductionMode", "disabled"),
                               "dataReductionStatus": "ENABLED" if body.get("dataReductionMode", "disabled") != "disabled" else "DISABLED",
                               "attributes": ["CVS", "HDP"]}
        self.contents[ldev_id] = "zeros"
        return [f"ldevs/{ldev_id}"]

    def _put_ldevs(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        ldev = self.ldevs.get(int(rest[0]))
        if ldev is None:
            return gone(f"ldev {rest[0]}")
        ldev.update({k: v for k, v in body.items() if k in ("label", "dataReductionMode")})
        return [f"ldevs/{rest[0]}"]

    def _delete_ldevs(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        ldev_id = int(rest[0])
        if ldev_id not in self.ldevs:
            return gone(f"ldev {ldev_id}")
        if any(i == ldev_id for i in self.luns.values()) or ldev_id in self.namespaces.values():
            return _error(409, "KART40022-E", f"LDEV {ldev_id} has a path", ("B958", "0947"))
        if any(pvol == ldev_id for pvol, _ in self.snapshots):
            return _error(409, "KART40022-E", f"LDEV {ldev_id} is a snapshot pair member")
        del self.ldevs[ldev_id]
        del self.contents[ldev_id]
        return [f"ldevs/{ldev_id}"]

    def _post_host_groups(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        port = body["portId"]
        if port not in self.ports:
            return gone(f"port {port}")
        if any(g["hostGroupName"] == body["hostGroupName"] for (p, _), g in self.host_groups.items() if p == port):
            return _error(409, "KART40022-E", f"host group {body['hostGroupName']} exists on {port}")
        number = next(n for n in itertools.count(1) if (port, n) not in self.host_groups)
        group = {"hostGroupId": f"{port},{number}", "portId": port, "hostGroupNumber": number, "hostGroupName": body["hostGroupName"],
                 "hostMode": "LINUX/IRIX"}
        if self.ports[port]["portType"] == "ISCSI":
            group["iscsiName"] = body.get("iscsiName") or f"iqn.1994-04.jp.co.hitachi:rsd.h8m.t.{self.SERIAL:05x}.1b{number:03x}"
        self.host_groups[(port, number)] = group
        return [f"host-groups/{port},{number}"]

    def _put_host_groups(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        port, number = rest[0].split(",")
        group = self.host_groups.get((port, int(number)))
        if group is None:
            return gone(f"host group {rest[0]}")
        group.update(body)
        return [f"host-groups/{rest[0]}"]

    def _delete_host_groups(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        port, number = rest[0].split(",")
        key = (port, int(number))
        if key not in self.host_groups:
            return gone(f"host group {rest[0]}")
        if any((p, g) == key for p, g, _ in self.luns):
            return _error(409, "KART40022-E", f"host group {rest[0]} has LUNs")
        del self.host_groups[key]
        self.host_wwns = [w for w in self.host_wwns if (w["portId"], w["hostGroupNumber"]) != key]
        self.host_iscsis = [w for w in self.host_iscsis if (w["portId"], w["hostGroupNumber"]) != key]
        return [f"host-groups/{rest[0]}"]

    def _post_host_wwns(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        if (body["portId"], body["hostGroupNumber"]) not in self.host_groups:
            return gone(f"host group {body['portId']},{body['hostGroupNumber']}")
        if any(w["portId"] == body["portId"] and w["hostWwn"] == body["hostWwn"] for w in self.host_wwns):
            return _error(409, "KART40022-E", f"WWN {body['hostWwn']} is in another host group of {body['portId']}")
        self.host_wwns.append(dict(body))
        return [f"host-wwns/{body['portId']},{body['hostGroupNumber']},{body['hostWwn']}"]

    def _post_host_iscsis(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        if (body["portId"], body["hostGroupNumber"]) not in self.host_groups:
            return gone(f"host group {body['portId']},{body['hostGroupNumber']}")
        self.host_iscsis.append(dict(body))
        return [f"host-iscsis/{body['portId']},{body['hostGroupNumber']},{body['iscsiName']}"]

    def _post_luns(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        port, group, ldev_id = body["portId"], int(body["hostGroupNumber"]), int(body["ldevId"])
        if (port, group) not in self.host_groups or ldev_id not in self.ldevs:
            return gone(f"host group {port},{group} or ldev {ldev_id}")
        lun = next(n for n in itertools.count(0) if (port, group, n) not in self.luns)
        self.luns[(port, group, lun)] = ldev_id
        return [f"luns/{port},{group},{lun}"]

    def _delete_luns(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        port, group, lun = rest[0].split(",")
        key = (port, int(group), int(lun))
        if key not in self.luns:
            return gone(f"lun {rest[0]}")
        del self.luns[key]
        return [f"luns/{rest[0]}"]

    def _post_host_nqns(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        if body["nvmSubsystemId"] != self.subsystem_id:
            return gone(f"NVM subsystem {body['nvmSubsystemId']}")
        if body["hostNqn"] in self.host_nqns:
            return _error(409, "KART40022-E", f"host NQN {body['hostNqn']} is registered")
        self.host_nqns.append(body["hostNqn"])
        return [f"host-nqns/{self.subsystem_id},{body['hostNqn']}"]

    def _delete_host_nqns(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        nqn = rest[0].split(",", 1)[1]
        if nqn not in self.host_nqns:
            return gone(f"host nqn {rest[0]}")
        if any(n == nqn for n, _ in self.namespace_paths):
            return _error(409, "KART40022-E", f"host NQN {nqn} has namespace paths")
        self.host_nqns.remove(nqn)
        return [f"host-nqns/{rest[0]}"]

    def _post_namespaces(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        ldev_id = int(body["ldevId"])
        if ldev_id not in self.ldevs or ldev_id in self.namespaces.values():
            return _error(409, "KART40022-E", f"LDEV {ldev_id} cannot be a namespace")
        nsid = next(n for n in itertools.count(1) if n not in self.namespaces)
        self.namespaces[nsid] = ldev_id
        return [f"namespaces/{self.subsystem_id},{nsid}"]

    def _delete_namespaces(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        nsid = int(rest[0].split(",")[1])
        if nsid not in self.namespaces:
            return gone(f"namespace {rest[0]}")
        if any(n == nsid for _, n in self.namespace_paths):
            return _error(409, "KART40022-E", f"namespace {nsid} has paths")
        del self.namespaces[nsid]
        return [f"namespaces/{rest[0]}"]

    def _post_namespace_paths(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        nqn, nsid = body["hostNqn"], int(body["namespaceId"])
        if nqn not in self.host_nqns or nsid not in self.namespaces:
            return gone(f"host nqn {nqn} or namespace {nsid}")
        self.namespace_paths.add((nqn, nsid))
        return [f"namespace-paths/{self.subsystem_id},{nqn},{nsid}"]

    def _delete_namespace_paths(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        _, remainder = rest[0].split(",", 1)
        nqn, nsid = remainder.rsplit(",", 1)
        if (nqn, int(nsid)) not in self.namespace_paths:
            return gone(f"namespace path {rest[0]}")
        self.namespace_paths.discard((nqn, int(nsid)))
        return [f"namespace-paths/{rest[0]}"]

    def _post_snapshots(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        pvol = int(body["pvolLdevId"])
        if pvol not in self.ldevs or self.pools.get(body.get("snapshotPoolId"), {}).get("poolType") != "HTI":
            return _error(400, "KART40022-E", f"no LDEV {pvol} or no Thin Image pool {body.get('snapshotPoolId')}")
        mu = next(n for n in itertools.count(3) if (pvol, n) not in self.snapshots)
        self.snapshots[(pvol, mu)] = {"snapshotId": f"{pvol},{mu}", "snapshotGroupName": body["snapshotGroupName"], "pvolLdevId": pvol,
                                      "muNumber": mu, "snapshotPoolId": body["snapshotPoolId"],
                                      "status": "PSUS" if body.get("autoSplit") else "PAIR"}
        self.captured[(pvol, mu)] = self.contents[pvol]
        return [f"snapshots/{pvol},{mu}"]

    def _put_snapshots(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        pvol, mu = (int(n) for n in rest[0].split(","))
        pair = self.snapshots.get((pvol, mu))
        if pair is None:
            return gone(f"snapshot {rest[0]}")
        if rest[1:] != ["actions", "restore", "invoke"]:
            return _error(400, "KART00000-E", f"the fake has no action {'/'.join(rest[1:])}")
        if pair["status"] != "PSUS":
            return _error(409, "KART40022-E", f"pair {rest[0]} is {pair['status']}, not split")
        self.contents[pvol] = self.captured[(pvol, mu)]
        self.restores.append(rest[0])
        pair["status"] = "PSUS" if (body.get("parameters") or {}).get("autoSplit") else "PAIR"
        return [f"snapshots/{rest[0]}"]

    def _delete_snapshots(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        pvol, mu = (int(n) for n in rest[0].split(","))
        if (pvol, mu) not in self.snapshots:
            return gone(f"snapshot {rest[0]}")
        del self.snapshots[(pvol, mu)]
        del self.captured[(pvol, mu)]
        return [f"snapshots/{rest[0]}"]

    # -- HNAS / VSP One File ---------------------------------------------------------------------
    def _nas(self, request: Request, parts: list[str]) -> Reply:
        if _header(request, "X-Api-Key") != self.api_key:
            return Reply(401, {"errorMsg": "Unauthorized", "errorDetail": {"message": "invalid API key"}})
        body, q = request.body or {}, {k: v[0] for k, v in request.query.items()}
        if parts == ["filesystems"] and request.method == "GET":
            return Reply(200, {"filesystems": [dict(f) for f in self.filesystems.values() if f["label"] == q.get("label", f["label"])]})
        if parts == ["filesystems"] and request.method == "POST":
            if any(f["label"] == body["label"] for f in self.filesystems.values()):
                return _nas_error(409, f"file system {body['label']} exists")
            fs_id = f"fs{next(self._nas_ids):04d}"
            self.filesystems[fs_id] = {"objectId": fs_id, "label": body["label"], "virtualServerId": body["virtualServerId"],
                                       "storagePoolId": body["storagePoolId"], "capacity": body["capacity"], "isMounted": False}
            return Reply(201, {"filesystem": dict(self.filesystems[fs_id])})
        if parts[0] == "filesystems":
            fs = self.filesystems.get(parts[1])
            if fs is None:
                return _nas_error(404, f"no file system {parts[1]}")
            action = parts[2] if len(parts) > 2 else ""
            if action in ("mount", "unmount") and request.method == "POST":
                if action == "unmount" and any(e["filesystemId"] == fs["objectId"] for e in self.nfs_exports.values()):
                    return _nas_error(409, f"file system {fs['label']} is exported")
                fs["isMounted"] = action == "mount"
                return Reply(204)
            if action == "" and request.method == "DELETE":
                if fs["isMounted"]:
                    return _nas_error(409, f"file system {fs['label']} is mounted")
                del self.filesystems[fs["objectId"]]
                return Reply(204)
        if parts == ["filesystem-shares", "nfs"] and request.method == "POST":
            fs = self.filesystems.get(body["filesystemId"])
            if fs is None or not fs["isMounted"]:
                return _nas_error(409, f"file system {body['filesystemId']} is not mounted")
            share_id = f"nfs{next(self._nas_ids):04d}"
            self.nfs_exports[share_id] = {"objectId": share_id, "name": body["name"], "virtualServerId": body["virtualServerId"],
                                          "filesystemId": body["filesystemId"], "filesystemPath": body["filesystemPath"]}
            return Reply(201, {"filesystemShare": dict(self.nfs_exports[share_id])})
        if parts[:2] == ["filesystem-shares", "nfs"] and request.method == "DELETE":
            if self.nfs_exports.pop(parts[2], None) is None:
                return _nas_error(404, f"no NFS export {parts[2]}")
            return Reply(204)
        if parts[0] == "virtual-servers" and parts[2:] == ["nfs"] and request.method == "GET":
            found = [dict(e) for e in self.nfs_exports.values()
                     if e["virtualServerId"] == parts[1] and e["name"] == q.get("name", e["name"])]
            return Reply(200, {"nfsExports": found})
        return _nas_error(400, f"the fake has no {request.method} {'/'.join(parts)}")


def _nas_error(status: int, message: str) -> Reply:
    return Reply(status, {"errorMsg": message, "errorDetail": {"message": message}})
