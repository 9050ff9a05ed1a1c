"""A fake ONTAP REST API (/api) with state, for the contract tests: one SVM, one FlexVol."""

from __future__ import annotations

import base64
import datetime
import itertools
import math
import uuid as uuidlib
from typing import Any
from urllib.parse import urlencode

from selftests.vendors.server import Reply, Request

# interval -> (the span back from now it covers, its sampling step in seconds, the samples' duration), as the swagger says.
METRIC_INTERVALS = {
    "1h": (datetime.timedelta(hours=1), 15, "PT15S"),
    "1d": (datetime.timedelta(days=1), 300, "PT5M"),
    "1w": (datetime.timedelta(weeks=1), 1800, "PT30M"),
    "1m": (datetime.timedelta(days=30), 7200, "PT2H"),
    "1y": (datetime.timedelta(days=365), 86400, "P1D"),
}

COLLECTIONS = {
    "/api/storage/luns": "luns",
    "/api/protocols/san/igroups": "igroups",
    "/api/storage/namespaces": "namespaces",
    "/api/protocols/nvme/subsystems": "subsystems",
}


def _get(obj: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        obj = obj.get(part, {}) if isinstance(obj, dict) else {}
    return obj


class FakeOntap:
    def __init__(self, username: str, password: str) -> None:
        self.auth = "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()
        self.svm = {"name": "svm1", "uuid": str(uuidlib.uuid4())}
        self.flexvol = {
            "uuid": str(uuidlib.uuid4()),
            "name": "iogate_vol",
            "svm": self.svm,
            "efficiency": {"dedupe": "background", "compression": "none", "scanner": {"state": "idle"}},
        }
        self.licences = ["base", "iscsi", "nvme_of", "snapmirror", "snaprestore"]
        self.licence_states: dict[str, str | None] = {}  # a package's state when not "compliant" (None: left out)
        self.objects: dict[str, dict[str, dict[str, Any]]] = {k: {} for k in ("luns", "igroups", "namespaces", "subsystems")}
        self.lun_maps: list[dict[str, Any]] = []
        self.snapshots: dict[str, dict[str, Any]] = {}
        self._serials = itertools.count(1)
        self.jobs: dict[str, dict[str, Any]] = {}
        self.ns_maps: list[dict[str, Any]] = []
        self.relationships = [
            {"uuid": str(uuidlib.uuid4()), "source": {"path": "svm1:iogate_vol"}, "destination": {"path": "svm1_dr:iogate_vol_dst"}}
        ]
        self.transfers: dict[str, dict[str, Any]] = {}
        self.scanner_polls_until_idle = 2  # GETs that still see the scanner active after it was started
        self.lun_born: dict[str, datetime.datetime] = {}  # a LUN has performance samples from its creation on
        self.metrics_intervals: list[str] = []  # the `interval` of each metrics query
        self.metric_status = "ok"
        # The cluster's clock for its performance samples: None follows this machine's. A test that pages through
        # the samples freezes it, or a 15 s step passing between two pages shifts every record by one.
        self.metrics_now: datetime.datetime | None = None
        self.clock_ahead = datetime.timedelta(0)  # how far the nodes' clocks run ahead of this machine's
        self.tz = datetime.timezone(datetime.timedelta(hours=-4))  # the cluster's time zone (the swagger's example)
        # Paging, as the swagger's notes describe it: a collection GET ends a page after max_records (or
        # the cluster's own threshold, `max_page` here) and links the next page as _links.next, whose href
        # carries the query again plus a start.<key> (here an opaque start.record index).
        self.max_page = 10_000
        # A misbehaving cluster, for the fail-closed tests: "num_records_off" (a later page says one record
        # more than it holds), "next_loops" (the second page links back to itself).
        self.paging_lie: str | None = None
        self.pages_served: list[tuple[str, int, int]] = []  # (path, first index, records) of every collection page

    def _job(self, description: str) -> Reply:
        """ONTAP runs long operations as jobs: 202 with the job, polled at /cluster/jobs/{uuid}."""
        job = {"uuid": str(uuidlib.uuid4()), "state": "success", "description": description, "code": 0, "message": "success"}
        self.jobs[job["uuid"]] = job
        return Reply(202, {"job": {"uuid": job["uuid"], "_links": {"self": {"href": f"/api/cluster/jobs/{job['uuid']}"}}}})

    def _error(self, status: int, message: str) -> Reply:
        return Reply(status, {"error": {"message": message, "code": "4"}})

    def _find_in(self, items: list[dict[str, Any]], query: dict[str, list[str]]) -> list[dict[str, Any]]:
        skip = {"fields", "return_records", "return_timeout", "max_records", "interval"}
        return [i for i in items if all(str(_get(i, k)) == v[0] for k, v in query.items() if k not in skip and not k.startswith("start."))]

    def _page(self, request: Request, body: dict[str, Any]) -> dict[str, Any]:
        records = body["records"]
        q = request.query
        first = int(q.get("start.record", ["0"])[0])
        size = min(int(q["max_records"][0]) if q.get("max_records") else self.max_page, self.max_page)
        page = records[first : first + size]
        self.pages_served.append((request.path, first, len(page)))
        paged: dict[str, Any] = {**body, "records": page, "num_records": len(page)}
        if first + size < len(records):
            again = {k: v[0] for k, v in q.items() if k != "start.record"}
            following = first if self.paging_lie == "next_loops" and first > 0 else first + size
            paged["_links"] = {"next": {"href": f"{request.path}?{urlencode({**again, 'start.record': following})}"}}
        if self.paging_lie == "num_records_off" and first > 0:
            paged["num_records"] = len(page) + 1
        return paged

    def _records(self, items: list[dict[str, Any]]) -> Reply:
        return Reply(200, {"records": items, "num_records": len(items)})

    def __call__(self, request: Request) -> Reply:
        reply = self._route(request)
        if request.method == "GET" and reply.status == 200 and isinstance(reply.body, dict) and "records" in reply.body:
            reply.body = self._page(request, reply.body)
        return reply

    def _route(self, request: Request) -> Reply:
        if request.headers.get("Authorization") != self.auth:
            return self._error(401, "not authorized")
        path, method, body = request.path, request.method, request.body or {}
        if path == "/api/cluster":
            return Reply(
                200,
                {
                    "name": "cluster1",
                    "uuid": "6b2ff8c4-0000-4000-8000-000000000001",
                    "version": {"full": "NetApp Release 9.8.0", "generation": 9, "major": 8, "minor": 0},
                },
            )
        if path.startswith("/api/cluster/jobs/"):
            return Reply(200, self.jobs[path.rsplit("/", 1)[1]])
        if path == "/api/cluster/nodes":
            return self._records(
                [
                    {
                        "uuid": str(uuidlib.uuid4()),
                        "name": f"cluster1-0{i}",
                        "model": "AFF-A400",
                        "serial_number": f"72190000{i}",
                        # "wall clock" time, whole seconds in the cluster's time zone, `clock_ahead` ahead of ours
                        "date": (datetime.datetime.now(self.tz) + self.clock_ahead).replace(microsecond=0).isoformat(),
                    }
                    for i in (1, 2)
                ]
            )
        if path == "/api/cluster/licensing/licenses":
            states = {n: self.licence_states.get(n, "compliant") for n in self.licences}
            return self._records([{"name": n} | ({"state": s} if s else {}) for n, s in states.items()])
        if path == "/api/storage/volumes":
            return self._records(self._find_in([self.flexvol], request.query))
        if path == f"/api/storage/volumes/{self.flexvol['uuid']}":
            if method == "PATCH":
                self.flexvol["efficiency"] = {**self.flexvol["efficiency"], **body.get("efficiency", {})}
                self._scanner_polls = self.scanner_polls_until_idle
                return self._job(f"PATCH {path}")
            if getattr(self, "_scanner_polls", None) is not None:
                self._scanner_polls -= 1
                self.flexvol["efficiency"]["scanner"] = {"state": "active" if self._scanner_polls >= 0 else "idle"}
            return Reply(200, {**self.flexvol, "space": {"used": 4096 * len(self.objects["luns"]), "size": 1 << 40}})
        if path == "/api/protocols/san/iscsi/services":
            return self._records([{"svm": self.svm, "target": {"name": "iqn.1992-08.com.netapp:sn.0123456789abcdef:vs.3"}}])
        if path == f"/api/storage/volumes/{self.flexvol['uuid']}/snapshots" or path.startswith(
            f"/api/storage/volumes/{self.flexvol['uuid']}/snapshots/"
        ):
            return self._snapshots(request)
        if path.startswith("/api/protocols/nvme/subsystem-maps"):
            return self._ns_maps(request)
        if path.startswith("/api/snapmirror/relationships"):
            return self._snapmirror(request)
        if path.startswith("/api/protocols/san/lun-maps"):
            return self._lun_maps(request)
        if path.startswith("/api/storage/luns/") and path.endswith("/metrics"):
            return self._lun_metrics(request, path.split("/")[4])
        for prefix, kind in COLLECTIONS.items():
            if path == prefix or path.startswith(prefix + "/"):
                return self._collection(request, kind, path.removeprefix(prefix).strip("/"))
        return self._error(404, f"no {path}")

    def _lun_metrics(self, request: Request, lun_uuid: str) -> Reply:
        """Samples of the `interval` asked (the most recent span, at its step), only since the LUN was
        created, newest first; each reads 1000 + k read IOPS (k: its step's index since the epoch)."""
        if lun_uuid not in self.objects["luns"]:
            return self._error(404, "lun not found")
        interval = request.query.get("interval", ["1h"])[0]
        self.metrics_intervals.append(interval)
        span, step, duration = METRIC_INTERVALS[interval]
        now = self.metrics_now or datetime.datetime.now(datetime.UTC)
        born = max(self.lun_born[lun_uuid], now - span)
        first, last = math.ceil(born.timestamp() / step), math.floor(now.timestamp() / step)
        records = []
        for k in range(last, first - 1, -1):
            stamp = datetime.datetime.fromtimestamp(k * step, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            records.append(
                {
                    "timestamp": stamp,
                    "duration": duration,
                    "status": self.metric_status,
                    "iops": {"read": 1000 + k % 100, "write": 500, "other": 0, "total": 1500 + k % 100},
                    "latency": {"read": 250, "write": 400, "other": 0, "total": 300},
                }
            )
        return self._records(records)

    def _collection(self, request: Request, kind: str, key: str) -> Reply:
        store, body = self.objects[kind], request.body or {}
        if request.method == "POST":
            if any(o["name"] == body["name"] for o in store.values()):
                return self._error(409, f"{kind[:-1]} {body['name']} exists")
            obj = {**body, "uuid": str(uuidlib.uuid4()), "svm": self.svm}
            if kind == "luns":
                obj["serial_number"] = f"wD{next(self._serials):010d}"[-12:]
                self.lun_born[obj["uuid"]] = datetime.datetime.now(datetime.UTC)
            if kind == "subsystems":
                obj["target_nqn"] = f"nqn.1992-08.com.netapp:sn.0123456789abcdef:subsystem.{body['name']}"
            store[obj["uuid"]] = obj
            return Reply(201, {"num_records": 1, "records": [obj]}, {"Location": f"{request.path}/{obj['uuid']}"})
        if not key:
            return self._records(
                [{"uuid": o["uuid"], "name": o["name"], "svm": o["svm"]} for o in self._find_in(list(store.values()), request.query)]
            )
        obj = store.get(key)
        if obj is None:
            return self._error(404, f"{kind[:-1]} {key} not found")
        if request.method == "DELETE":
            if kind in ("namespaces", "subsystems") and any(
                m["namespace"]["uuid"] == key or m["subsystem"]["uuid"] == key for m in self.ns_maps
            ):
                return self._error(409, f"{kind[:-1]} {obj['name']} is mapped")
            if kind in ("luns", "igroups") and any(m["lun"]["uuid"] == key or m["igroup"]["uuid"] == key for m in self.lun_maps):
                return self._error(409, f"{kind[:-1]} {obj['name']} is mapped")
            del store[key]
            return Reply(200)
        return Reply(200, obj)

    def _lun_maps(self, request: Request) -> Reply:
        body = request.body or {}
        if request.method == "POST":
            lun = next(o for o in self.objects["luns"].values() if o["name"] == body["lun"]["name"])
            group = next(o for o in self.objects["igroups"].values() if o["name"] == body["igroup"]["name"])
            self.lun_maps.append(
                {
                    "svm": self.svm,
                    "lun": {"uuid": lun["uuid"], "name": lun["name"]},
                    "igroup": {"uuid": group["uuid"], "name": group["name"]},
                    "logical_unit_number": len(self.lun_maps),
                }
            )
            return Reply(201, {})
        parts = request.path.removeprefix("/api/protocols/san/lun-maps").strip("/").split("/")
        if len(parts) == 2:
            found = [m for m in self.lun_maps if m["lun"]["uuid"] == parts[0] and m["igroup"]["uuid"] == parts[1]]
            if request.method == "DELETE":
                self.lun_maps = [m for m in self.lun_maps if m not in found]
                return Reply(200)
            return Reply(200, found[0]) if found else self._error(404, "no such map")
        return self._records(self._find_in(self.lun_maps, request.query))

    def _snapshots(self, request: Request) -> Reply:
        key = request.path.rsplit("/snapshots", 1)[1].strip("/")
        if request.method == "POST":
            snap = {
                "uuid": str(uuidlib.uuid4()),
                "name": (request.body or {})["name"],
                "volume": {"uuid": self.flexvol["uuid"], "name": self.flexvol["name"]},
            }
            self.snapshots[snap["uuid"]] = snap
            reply = self._job(f"POST {request.path}")
            reply.headers["Location"] = f"{request.path}/{snap['uuid']}"
            return reply
        if not key:
            return self._records(self._find_in(list(self.snapshots.values()), request.query))
        if request.method == "DELETE":
            self.snapshots.pop(key, None)
            return self._job(f"DELETE {request.path}")
        return Reply(200, self.snapshots[key])

    def _ns_maps(self, request: Request) -> Reply:
        body = request.body or {}
        if request.method == "POST":
            ns = next(o for o in self.objects["namespaces"].values() if o["name"] == body["namespace"]["name"])
            sub = next(o for o in self.objects["subsystems"].values() if o["name"] == body["subsystem"]["name"])
            self.ns_maps.append(
                {
                    "svm": self.svm,
                    "namespace": {"uuid": ns["uuid"], "name": ns["name"]},
                    "subsystem": {"uuid": sub["uuid"], "name": sub["name"]},
                    "nsid": str(len(self.ns_maps) + 1),
                }
            )
            return Reply(201, None, {"Location": f"/api/protocols/nvme/subsystem-maps/{sub['uuid']}/{ns['uuid']}"})
        parts = request.path.removeprefix("/api/protocols/nvme/subsystem-maps").strip("/").split("/")
        if len(parts) == 2:
            found = [m for m in self.ns_maps if m["subsystem"]["uuid"] == parts[0] and m["namespace"]["uuid"] == parts[1]]
            if request.method == "DELETE":
                self.ns_maps = [m for m in self.ns_maps if m not in found]
                return Reply(200)
            return Reply(200, found[0]) if found else self._error(404, "no such map")
        return self._records(self._find_in(self.ns_maps, request.query))

    def _snapmirror(self, request: Request) -> Reply:
        parts = request.path.removeprefix("/api/snapmirror/relationships").strip("/").split("/")
        if parts == [""]:
            return self._records(self._find_in(self.relationships, request.query))
        if len(parts) == 2 and request.method == "POST":
            transfer = {"uuid": str(uuidlib.uuid4()), "state": "transferring", "relationship": {"uuid": parts[0]}, "bytes_transferred": 0}
            self.transfers[transfer["uuid"]] = transfer
            return Reply(201, None, {"Location": f"{request.path}/{transfer['uuid']}"})
        if len(parts) == 3:
            transfer = self.transfers[parts[2]]
            transfer.update(state="success", bytes_transferred=1 << 20)  # done by the first look after the start
            return Reply(200, transfer)
        return self._error(404, f"no {request.path}")
