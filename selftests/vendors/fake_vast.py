"""A fake VAST VMS for the contract tests: the objects the vast driver makes (view policies, views and their
directories, quotas, block volumes, block hosts, mappings with their async tasks, snapshots), answered as
the VMS 5.5 OpenAPI description models them, with the paged envelope VAST's clients read.

`VastContract` is contract_openapi's check with what the description leaves to VAST's clients: a list asked
with page_size answers `{count, next, previous, results}` (go-vast-client core/iterator.go), whose
`results` are checked as the described array; errors are `ErrorResponse {detail}`.
"""

from __future__ import annotations

import base64
import functools
import json
import secrets as pysecrets
from pathlib import Path
from typing import Any

from selftests.vendors.contract_openapi import OpenApiContract
from selftests.vendors.server import Reply, Request

SPEC = Path("/work/shared/specs/vast-data/vms-api-5.5-go-vast-client-3ce13e9.json")
SPEC_530 = Path("/work/shared/specs/vast-data/vms-api-5.3.0-terraform-provider-0b20f07.json")
BASE = "/api/latest"
ENVELOPE = {"count", "next", "previous", "results"}


@functools.cache
def load_json_spec(path: Path) -> dict[str, Any]:
    with path.open() as handle:
        return json.load(handle)


class VastContract(OpenApiContract):
    def __init__(self, spec: Path = SPEC) -> None:
        super().__init__(load_json_spec(spec), base_path=BASE, error_schema="#/components/schemas/ErrorResponse")

    def check_response(self, request: Request, reply: Reply) -> list[str]:
        body = reply.body
        if request.method == "GET" and "page_size" in request.query and reply.status == 200 and isinstance(body, dict):
            problems = [f"field response.{key} is not in the paged envelope" for key in body if key not in ENVELOPE]
            return problems + super().check_response(request, Reply(reply.status, body.get("results")))
        return super().check_response(request, reply)


def _q(request: Request, key: str) -> str | None:
    values = request.query.get(key)
    return values[0] if values else None


class FakeVast:
    """The array: state by kind, keyed by id; faults and lies switched on by the tests."""

    def __init__(self, password: str, user: str = "admin", version: str = "5.5") -> None:
        self.version = version  # 5.3.0: a Volume has no state or full_path
        self.basic = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.token = f"Api-Token {password}"
        self.credentials_valid = True
        self.next_id = 100
        self.cluster = {
            "id": 1,
            "name": "vast-lab",
            "sw_version": "5.5.0-sp10",
            "build": "release-5.5.0-1234",
            "psnt": "VA2241001",
            "guid": "3f1e0c1e-7b5a-4f36-9f8e-0c7a1c9d2b11",
            "drr": 3.2,
            "drr_text": "1:3.2",
            "logical_space_in_use": 32 << 40,
            "physical_space_in_use": 10 << 40,
        }
        self.vippools = [
            {"id": 3, "name": "other", "ip_ranges": [["198.51.100.1", "198.51.100.4"]], "subnet_cidr": 24},
            {"id": 7, "name": "protocols", "ip_ranges": [["192.0.2.50", "192.0.2.57"]], "subnet_cidr": 24, "role": "PROTOCOLS"},
        ]
        self.policies: dict[int, dict[str, Any]] = {}
        self.views: dict[int, dict[str, Any]] = {}
        self.folders: set[str] = set()
        self.quotas: dict[int, dict[str, Any]] = {}
        self.volumes: dict[int, dict[str, Any]] = {}
        self.hosts: dict[int, dict[str, Any]] = {}
        self.mappings: list[tuple[int, int]] = []  # (volume id, block host id)
        self.snapshots: dict[int, dict[str, Any]] = {}
        self.tasks: dict[int, dict[str, Any]] = {}
        self.task_polls = 1  # a task is RUNNING this many looks, then ends
        self.fail_tasks = False  # the next mapping task ends FAILED (nothing mapped)
        self.nguid_later = False  # a new volume is CREATING without its NGUID until it is looked at once
        self.max_page = 1000  # the array's largest page, whatever page_size asks
        self.paging_lie: str | None = None  # "lost_page": next is null before the count; "count_short": count below the items
        self.pages_served: list[tuple[str, int, int]] = []  # (path, page, items on it)

    # -- plumbing -------------------------------------------------------------------------
    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _error(self, status: int, detail: str) -> Reply:
        return Reply(status, {"detail": detail})

    def _json(self, status: int, body: Any) -> Reply:
        if self.version == "5.3.0":
            body = [self._v530(b) for b in body] if isinstance(body, list) else self._v530(body)
        return Reply(status, body)  # the server sends Content-Type: application/json with any body

    @staticmethod
    def _v530(body: Any) -> Any:
        return {k: v for k, v in body.items() if k not in ("state", "full_path")} if isinstance(body, dict) and "nguid" in body else body

    def _list(self, request: Request, items: list[dict[str, Any]]) -> Reply:
        if "page_size" not in request.query:
            return self._json(200, items)
        size = min(int(_q(request, "page_size") or 1), self.max_page)
        page = int(_q(request, "page") or 1)
        chunk = items[(page - 1) * size : page * size]
        more = page * size < len(items)
        self.pages_served.append((request.path, page, len(chunk)))
        count = len(items)
        if self.paging_lie == "lost_page" and page == 2:
            more = False  # the array ends the list early: the count says more
        if self.paging_lie == "count_short":
            count = max(0, len(items) - 1)
        url = f"https://vms{request.path}?page={page + 1}&page_size={size}" if more else None
        return self._json(200, {"count": count, "next": url, "previous": None, "results": chunk})

    def __call__(self, request: Request) -> Reply:
        auth = request.headers.get("Authorization") or request.headers.get("authorization")
        if not self.credentials_valid or auth not in (self.basic, self.token):
            return self._error(401, "Authentication credentials were not provided or are invalid.")
        if not request.path.startswith(BASE + "/"):
            return self._error(404, "Not found.")
        parts = [p for p in request.path[len(BASE) :].split("/") if p]
        handler = getattr(self, f"_{parts[0]}", None)
        if handler is None:
            return self._error(404, f"no fake for {parts[0]}")
        return handler(request, parts[1:])

    # -- read-only ---------------------------------------------------------------------------
    def _clusters(self, request: Request, rest: list[str]) -> Reply:
        return self._list(request, [self.cluster])

    def _vippools(self, request: Request, rest: list[str]) -> Reply:
        return self._list(request, self.vippools)

    def _vtasks(self, request: Request, rest: list[str]) -> Reply:
        task = self.tasks[int(rest[0])]
        task["looks"] += 1
        if task["looks"] > self.task_polls:
            task["state"] = task["ends"]
            if task["ends"] == "COMPLETED":
                task["apply"]()
        shown = {k: task[k] for k in ("id", "name", "state", "messages")}
        return self._json(200, shown)

    # -- objects ------------------------------------------------------------------------------
    def _viewpolicies(self, request: Request, rest: list[str]) -> Reply:
        if request.method == "POST":
            body = request.body
            if any(p["name"] == body["name"] for p in self.policies.values()):
                return self._error(400, "view policy with this name already exists.")
            made = {"id": self._id(), **body}
            self.policies[made["id"]] = made
            return self._json(201, made)
        if rest:
            pid = int(rest[0])
            if pid not in self.policies:
                return self._error(404, "Not found.")
            if request.method == "DELETE":
                if any(v["policy_id"] == pid for v in self.views.values()):
                    return self._error(400, "policy is in use by a view")
                del self.policies[pid]
                return self._json(204, None)
        name = _q(request, "name")
        return self._list(request, [p for p in self.policies.values() if name is None or p["name"] == name])

    def _views(self, request: Request, rest: list[str]) -> Reply:
        if request.method == "POST":
            body = request.body
            if body["policy_id"] not in self.policies:
                return self._error(400, "policy does not exist")
            if any(v["path"] == body["path"] for v in self.views.values()):
                return self._error(409, "a view with this path already exists")
            made = {"id": self._id(), **body, "logical_capacity": 0, "physical_capacity": 0}
            if "BLOCK" in body["protocols"]:
                made["nqn"] = f"nqn.2024-08.com.vastdata:{self.cluster['guid']}:{made['id']}"
            if body.get("create_dir"):
                self.folders.add(body["path"])
            elif body["path"] not in self.folders:
                return self._error(400, "path does not exist")
            self.views[made["id"]] = made
            return self._json(201, made)
        if rest:
            vid = int(rest[0])
            if vid not in self.views:
                return self._error(404, "Not found.")
            if request.method == "DELETE":
                if any(v["view_id"] == vid for v in self.volumes.values()):
                    return self._error(400, "subsystem view still holds volumes")
                del self.views[vid]
                return self._json(204, None)
            return self._json(200, self.views[vid])
        path = _q(request, "path")
        return self._list(request, [v for v in self.views.values() if path is None or v["path"] == path])

    def _folders(self, request: Request, rest: list[str]) -> Reply:
        path = request.body["path"]
        if path not in self.folders:
            return self._error(404, "path does not exist")
        self.folders.discard(path)
        return self._json(200, None)

    def _quotas(self, request: Request, rest: list[str]) -> Reply:
        if request.method == "POST":
            made = {"id": self._id(), **request.body}
            self.quotas[made["id"]] = made
            return self._json(201, made)
        if rest:
            del self.quotas[int(rest[0])]
            return self._json(204, None)
        name = _q(request, "name")
        return self._list(request, [q for q in self.quotas.values() if name is None or q["name"] == name])

    def _volumes(self, request: Request, rest: list[str]) -> Reply:
        if request.method == "POST":
            body = request.body
            view = self.views.get(body["view_id"])
            if view is None or "BLOCK" not in view["protocols"]:
                return self._error(400, "view is not a block subsystem")
            made = {"id": self._id(), **body, "state": "CREATED", "full_path": f"{view['path']}/{body['name']}"}
            made["nguid"] = pysecrets.token_hex(16)
            self.volumes[made["id"]] = made
            if self.nguid_later:
                return self._json(201, {k: v for k, v in made.items() if k != "nguid"} | {"state": "CREATING"})
            return self._json(201, made)
        if rest:
            vid = int(rest[0])
            if vid not in self.volumes:
                return self._error(404, "Not found.")
            if len(rest) == 2 and rest[1] == "update_hosts":
                return self._update_hosts(vid, request.body)
            if request.method == "DELETE":
                if any(v == vid for v, _ in self.mappings):
                    return self._error(400, "volume is mapped to hosts")
                del self.volumes[vid]
                return self._json(204, None)
            return self._json(200, self.volumes[vid])
        name, view_id = _q(request, "name"), _q(request, "view__id")
        found = [
            v for v in self.volumes.values() if (name is None or v["name"] == name) and (view_id is None or str(v["view_id"]) == view_id)
        ]
        return self._list(request, found)

    def _update_hosts(self, vid: int, body: dict[str, Any]) -> Reply:
        adds, removes = body.get("ids_to_add", []), body.get("ids_to_remove", [])
        if any(h not in self.hosts for h in adds + removes):
            return self._error(400, "block host does not exist")

        def apply() -> None:
            self.mappings += [(vid, h) for h in adds if (vid, h) not in self.mappings]
            self.mappings = [(v, h) for v, h in self.mappings if not (v == vid and h in removes)]

        task_id = self._id()
        ends = "FAILED" if self.fail_tasks else "COMPLETED"
        messages = ["mapping failed: host unreachable"] if self.fail_tasks else []
        self.fail_tasks = False
        self.tasks[task_id] = {"id": task_id, "name": "UpdateVolumeHosts", "state": "RUNNING", "looks": 0, "ends": ends,
                               "messages": messages, "apply": apply}  # fmt: skip
        return self._json(200, {"async_task": {"id": task_id, "name": "UpdateVolumeHosts", "state": "RUNNING"}})

    def _blockhosts(self, request: Request, rest: list[str]) -> Reply:
        if request.method == "POST":
            body = request.body
            made = {"id": self._id(), **body, "tags": {}}
            self.hosts[made["id"]] = made
            return self._json(201, made)
        if rest:
            hid = int(rest[0])
            if hid not in self.hosts:
                return self._error(404, "Not found.")
            if any(h == hid for _, h in self.mappings):
                return self._error(400, "block host has mapped volumes")
            del self.hosts[hid]
            return self._json(204, None)
        name = _q(request, "name")
        return self._list(request, [h for h in self.hosts.values() if name is None or h["name"] == name])

    def _blockmappings(self, request: Request, rest: list[str]) -> Reply:
        vid, hid = _q(request, "volume_id"), _q(request, "block_host_id")
        found = [
            {"id": i + 1, "volume": {"id": v, "name": self.volumes[v]["name"]}, "block_host": {"id": h, "name": self.hosts[h]["name"]}}
            for i, (v, h) in enumerate(self.mappings)
            if (vid is None or str(v) == vid) and (hid is None or str(h) == hid)
        ]
        return self._list(request, found)

    def _snapshots(self, request: Request, rest: list[str]) -> Reply:
        if request.method == "POST":
            body = request.body
            if not any(v["path"] == body["path"] for v in self.views.values()):
                return self._error(400, "path is not a view")
            made = {"id": self._id(), **body, "state": "SUCCESS"}
            self.snapshots[made["id"]] = made
            return self._json(201, made)
        if rest:
            del self.snapshots[int(rest[0])]
            return self._json(204, None)
        path, part = _q(request, "path"), _q(request, "name__contains")
        found = [s for s in self.snapshots.values() if (path is None or s["path"] == path) and (part is None or part in s["name"])]
        return self._list(request, found)

    def leftovers(self) -> dict[str, Any]:
        """What the run could have left on the array, by kind (all empty: nothing)."""
        return {
            "policies": self.policies,
            "views": self.views,
            "folders": self.folders,
            "quotas": self.quotas,
            "volumes": self.volumes,
            "hosts": self.hosts,
            "mappings": self.mappings,
            "snapshots": self.snapshots,
        }
