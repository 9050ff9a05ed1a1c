"""A fake FlashArray REST 2.56 API with state, for the contract tests."""

from __future__ import annotations

import base64
import itertools
import secrets as pysecrets
import time
import uuid as uuidlib
from typing import Any

from selftests.vendors.server import Reply, Request

V = "/api/2.56"


def _names(query: dict[str, list[str]], key: str = "names") -> list[str]:
    return [n for value in query.get(key, []) for n in value.split(",") if n]


class FakePure:
    def __init__(self, api_token: str) -> None:
        self.api_token = api_token
        self.tokens: set[str] = set()
        self.volumes: dict[str, dict[str, Any]] = {}
        self.destroyed: set[str] = set()
        self.hosts: dict[str, dict[str, Any]] = {}
        self.connections: list[dict[str, Any]] = []
        self.snapshots: dict[str, dict[str, Any]] = {}
        self.pgroups: dict[str, dict[str, Any]] = {
            "pg-dr": {"name": "pg-dr", "target_count": 1, "members": [], "targets": [{"name": "fa-dr", "allowed": True}]}
        }
        self.pgroup_snapshots: dict[str, dict[str, Any]] = {}
        self.array_connections = [{"name": "fa-dr", "id": str(uuidlib.uuid4()), "status": "connected", "type": "async-replication"}]
        self.transfer_polls_until_done = 1
        self.performance_queries: list[dict[str, list[str]]] = []
        self.volume_born_ms: dict[str, int] = {}
        self.performance_slop_ms = 0  # a misbehaving array: samples this far either side of the window asked
        self.sent_outside_window = False
        self.restores: list[tuple[str, str]] = []  # (volume, the snapshot or volume copied over it)
        self._ids = itertools.count(1)
        # Paging, as FA 2.x documents it: a list answers at most `max_page` items per page (the array's
        # "system maximum limit", which caps `limit` too), with more_items_remaining and a continuation_token
        # while items remain; total_item_count only when asked for (total_item_count=true), else null.
        self.max_page = 10_000
        # A misbehaving array, for the fail-closed tests: "no_more_flag" (a first page without
        # more_items_remaining, its token kept), "empty_page" (a later page empty though items remain),
        # "total_short_of_items" (total_item_count counts one more item than the pages hold).
        self.paging_lie: str | None = None
        self.pages_served: list[tuple[str, int, int]] = []  # (path, first index, items) of every page of a list
        self.expire_after_first_page = False

    def expire_sessions(self) -> None:
        self.tokens.clear()

    @staticmethod
    def _items(items: list[dict[str, Any]]) -> Reply:
        return Reply(200, {"items": items, "more_items_remaining": False, "total_item_count": len(items), "continuation_token": None})

    def _page(self, request: Request, body: dict[str, Any]) -> dict[str, Any]:
        """One page of a list answer: from the continuation_token (an opaque index) or offset, at most
        limit (capped at max_page) items; limit=0 gives the count only."""
        q = request.query
        items = body["items"]
        token = q.get("continuation_token", [""])[0]
        first = int(base64.b64decode(token).decode()) if token else int(q.get("offset", ["0"])[0])
        asked = int(q["limit"][0]) if q.get("limit") else self.max_page
        size = min(asked, self.max_page)
        page = items[first : first + size]
        more = first + size < len(items)
        self.pages_served.append((request.path, first, len(page)))
        if self.expire_after_first_page and first == 0 and more:
            self.expire_after_first_page = False
            self.tokens.clear()  # the session ends between two pages of a list
        lie = self.paging_lie
        if lie == "empty_page" and first > 0:
            page, more = [], True
        counted = q.get("total_item_count", ["false"])[0] == "true"
        total = len(items) + (1 if lie == "total_short_of_items" else 0)
        paged = {
            **body,
            "items": page,
            "more_items_remaining": None if lie == "no_more_flag" and first == 0 else more,
            "total_item_count": total if counted else None,
            # Hardware pages by offset only: its GET takes no continuation_token (FA 2.56).
            "continuation_token": base64.b64encode(str(first + size).encode()).decode()
            if more and "hardware" not in request.path
            else None,
        }
        return paged

    @staticmethod
    def _error(status: int, context: str, message: str) -> Reply:
        return Reply(status, {"errors": [{"context": context, "message": message}]})

    def __call__(self, request: Request) -> Reply:
        path, q = request.path, request.query
        if path == "/api/api_version":
            return Reply(200, {"version": ["2.0", "2.55", "2.56"]})
        if path == f"{V}/login":
            if request.headers.get("api-token") != self.api_token:
                return self._error(401, "login", "invalid API token")
            token = str(uuidlib.uuid4())
            self.tokens.add(token)
            return Reply(200, {"items": [{"username": "pureuser"}]}, {"x-auth-token": token})
        if path == f"{V}/logout":
            self.tokens.discard(request.headers.get("x-auth-token", ""))
            return Reply(200)
        if request.headers.get("x-auth-token") not in self.tokens:
            return self._error(401, "session", "session expired")
        if path == f"{V}/volumes/performance":
            reply = self._volumes_performance(q)
            if reply.status == 200:
                reply.body = self._page(request, reply.body)
            return reply
        handler = getattr(self, "_" + path.removeprefix(V + "/").replace("-", "_").replace("/", "__"), None)
        if handler is None:
            return self._error(404, path, "no such path in the fake")
        reply: Reply = handler(request, q)
        if request.method == "GET" and reply.status == 200 and isinstance(reply.body, dict) and "items" in reply.body:
            reply.body = self._page(request, reply.body)
        if request.method != "GET" and isinstance(reply.body, dict):
            # Only list (GET) answers page: a write's answer is {"items": [...]} (the *Response schemas).
            for key in ("more_items_remaining", "total_item_count", "continuation_token"):
                reply.body.pop(key, None)
        return reply

    def _volumes_performance(self, q: dict[str, list[str]]) -> Reply:
        """Samples at the resolution asked, stamped at its multiples within [start_time, end_time] and
        since the volume was created; each reads 2000 + k reads/s (k: its step's index since the epoch)."""
        self.performance_queries.append(q)
        resolution = int(q.get("resolution", ["30000"])[0])
        if resolution not in (30000, 300000, 1800000, 7200000, 28800000, 86400000):
            return self._error(400, "resolution", "Invalid resolution.")
        now_ms = int(time.time() * 1000)
        end = min(int(q.get("end_time", [str(now_ms)])[0]), now_ms)
        items = []
        for name in _names(q):
            if name not in self.volumes:
                return self._error(400, name, "Volume does not exist.")
            start = max(int(q.get("start_time", [str(end - resolution)])[0]), self.volume_born_ms[name])
            start, end = start - self.performance_slop_ms, min(end + self.performance_slop_ms, now_ms)
            asked = (int(q.get("start_time", ["0"])[0]), int(q.get("end_time", [str(now_ms)])[0]))
            for k in range(-(-start // resolution), end // resolution + 1):
                self.sent_outside_window |= not asked[0] <= k * resolution <= asked[1]
                items.append(
                    {
                        "name": name,
                        "time": k * resolution,
                        "reads_per_sec": 2000 + k % 100,
                        "writes_per_sec": 1000,
                        "usec_per_read_op": 180,
                        "usec_per_write_op": 220,
                    }
                )
        return self._items(items)

    def _arrays(self, request: Request, q: dict[str, list[str]]) -> Reply:
        return self._items([{"name": "fa-poc", "id": "5e8f3f4c-0000-4000-8000-000000000001", "os": "Purity//FA", "version": "6.7.1"}])

    def _controllers(self, request: Request, q: dict[str, list[str]]) -> Reply:
        return self._items(
            [
                {"name": f"CT{i}", "model": "FA-X70R4", "version": "6.7.1", "status": "ready", "mode": m}
                for i, m in enumerate(("primary", "secondary"))
            ]
        )

    def _hardware(self, request: Request, q: dict[str, list[str]]) -> Reply:
        return self._items([{"name": "CH0", "type": "chassis", "status": "ok", "model": "FA-X70R4", "serial": "PCHFL2110000A"}])

    def _array_connections(self, request: Request, q: dict[str, list[str]]) -> Reply:
        return self._items(self.array_connections)

    def _protection_groups(self, request: Request, q: dict[str, list[str]]) -> Reply:
        found = [{"name": g["name"], "target_count": g["target_count"]} for n, g in self.pgroups.items() if n in _names(q)]
        return self._items(found) if found else self._error(400, ",".join(_names(q)), "Protection group does not exist.")

    def _protection_groups__targets(self, request: Request, q: dict[str, list[str]]) -> Reply:
        group = self.pgroups[_names(q, "group_names")[0]]
        return self._items(
            [
                {"group": {"name": group["name"]}, "member": {"name": target["name"]}, "allowed": target["allowed"]}
                for target in group["targets"]
            ]
        )

    def _protection_groups__volumes(self, request: Request, q: dict[str, list[str]]) -> Reply:
        group = self.pgroups[_names(q, "group_names")[0]]
        members = _names(q, "member_names")
        if request.method == "POST":
            group["members"] += members
        elif request.method == "DELETE":
            group["members"] = [m for m in group["members"] if m not in members]
        else:
            return self._items([{"group": {"name": group["name"]}, "member": {"name": m}} for m in group["members"] if m in members])
        return (
            self._items([{"group": {"name": group["name"]}, "member": {"name": m}} for m in members])
            if request.method == "POST"
            else Reply(200)
        )

    def _volumes(self, request: Request, q: dict[str, list[str]]) -> Reply:
        names = _names(q)
        if request.method == "POST":
            name = names[0]
            source = (request.body or {}).get("source", {}).get("name")
            if name in self.volumes and source is not None and q.get("overwrite") == ["true"]:
                # A copy over an existing volume: its content becomes the source's; name, serial and connections stay.
                if source not in self.snapshots and source not in self.volumes:
                    return self._error(400, source, "Source volume or snapshot does not exist.")
                self.restores.append((name, source))
                return self._items([self.volumes[name]])
            if name in self.volumes:
                return self._error(400, name, "Volume already exists.")
            serial = pysecrets.token_hex(12).upper()
            self.volumes[name] = {
                "name": name,
                "id": str(uuidlib.uuid4()),
                "serial": serial,
                "provisioned": request.body["provisioned"],
                "destroyed": False,
            }
            self.volume_born_ms[name] = int(time.time() * 1000)  # a volume has performance samples from its creation on
            return self._items([self.volumes[name]])
        missing = [n for n in names if n not in self.volumes]
        if missing:
            return self._error(400, missing[0], "Volume does not exist.")
        if request.method == "PATCH":
            for n in names:
                self.volumes[n]["destroyed"] = bool(request.body.get("destroyed"))
            return self._items([self.volumes[n] for n in names])
        if request.method == "DELETE":
            for n in names:
                if not self.volumes[n]["destroyed"]:
                    return self._error(400, n, "Volume must be destroyed before it can be eradicated.")
                if any(c["volume"]["name"] == n for c in self.connections):
                    return self._error(400, n, "Volume has host connections.")
                del self.volumes[n]
            return Reply(200)
        return self._items([self.volumes[n] for n in names] if names else list(self.volumes.values()))

    def _hosts(self, request: Request, q: dict[str, list[str]]) -> Reply:
        names = _names(q)
        if request.method == "POST":
            self.hosts[names[0]] = {"name": names[0], "iqns": request.body.get("iqns", []), "nqns": request.body.get("nqns", [])}
            return self._items([self.hosts[names[0]]])
        missing = [n for n in names if n not in self.hosts]
        if missing:
            return self._error(400, missing[0], "Host does not exist.")
        if request.method == "DELETE":
            if any(c["host"]["name"] in names for c in self.connections):
                return self._error(400, names[0], "Host has connected volumes.")
            for n in names:
                del self.hosts[n]
            return Reply(200)
        return self._items([self.hosts[n] for n in names])

    def _connections(self, request: Request, q: dict[str, list[str]]) -> Reply:
        hosts, volumes = _names(q, "host_names"), _names(q, "volume_names")
        if request.method == "POST":
            conn = {"host": {"name": hosts[0]}, "volume": {"name": volumes[0]}, "lun": len(self.connections) + 1}
            self.connections.append(conn)
            return self._items([conn])
        found = [c for c in self.connections if c["host"]["name"] in hosts and c["volume"]["name"] in volumes]
        if request.method == "DELETE":
            self.connections = [c for c in self.connections if c not in found]
            return Reply(200)
        return self._items(found)

    def _volume_snapshots(self, request: Request, q: dict[str, list[str]]) -> Reply:
        if request.method == "POST":
            source = _names(q, "source_names")[0]
            name = f"{source}.{request.body['suffix']}"
            self.snapshots[name] = {"name": name, "source": {"name": source}, "serial": pysecrets.token_hex(12).upper(), "destroyed": False}
            return self._items([self.snapshots[name]])
        names = _names(q)
        missing = [n for n in names if n not in self.snapshots]
        if missing:
            return self._error(400, missing[0], "Snapshot does not exist.")
        if request.method == "PATCH":
            for n in names:
                self.snapshots[n]["destroyed"] = True
            return self._items([self.snapshots[n] for n in names])
        if request.method == "DELETE":
            for n in names:
                del self.snapshots[n]
            return Reply(200)
        return self._items([self.snapshots[n] for n in names])

    def _protection_group_snapshots(self, request: Request, q: dict[str, list[str]]) -> Reply:
        if request.method == "POST":
            group = _names(q, "source_names")[0]
            name = f"{group}.{request.body['suffix']}"
            self.pgroup_snapshots[name] = {
                "name": name,
                "source": {"name": group},
                "destroyed": False,
                "polls": self.transfer_polls_until_done,
            }
            return self._items([{k: v for k, v in self.pgroup_snapshots[name].items() if k != "polls"}])
        names = _names(q)
        missing = [n for n in names if n not in self.pgroup_snapshots]
        if missing:
            return self._error(400, missing[0], "Protection group snapshot does not exist.")
        if request.method == "PATCH":
            for n in names:
                self.pgroup_snapshots[n]["destroyed"] = True
            return self._items([{k: v for k, v in self.pgroup_snapshots[n].items() if k != "polls"} for n in names])
        if request.method == "DELETE":
            for n in names:
                del self.pgroup_snapshots[n]
            return Reply(200)
        return self._items([{k: v for k, v in self.pgroup_snapshots[n].items() if k != "polls"} for n in names])

    def _protection_group_snapshots__transfer(self, request: Request, q: dict[str, list[str]]) -> Reply:
        items = []
        for name in _names(q):
            snap = self.pgroup_snapshots[name]
            snap["polls"] -= 1
            done = snap["polls"] < 0
            items.append(
                {
                    "name": name,
                    "source": {"name": snap["source"]["name"]},
                    "destroyed": False,
                    "progress": 1.0 if done else 0.5,
                    "completed": 1763900000000 if done else None,
                    "data_transferred": 1 << 20 if done else 0,
                }
            )
        return self._items(items)
