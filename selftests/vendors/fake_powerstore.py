"""A fake PowerStore REST API (/api/rest) with state, for the contract tests."""

from __future__ import annotations

import base64
import itertools
import secrets as pysecrets
from typing import Any

from selftests.vendors.server import Reply, Request

BASE = "/api/rest"


def _select(obj: dict[str, Any], query: dict[str, list[str]]) -> dict[str, Any]:
    wanted = query.get("select", [""])[0]
    if not wanted:
        return dict(obj)
    names = {part.split("(")[0].strip() for part in wanted.replace(")", "").split(",")}
    return {k: v for k, v in obj.items() if k in names}


def _matches(obj: dict[str, Any], query: dict[str, list[str]]) -> bool:
    for key, values in query.items():
        if key == "select":
            continue
        for value in values:
            if value.startswith("eq.") and str(obj.get(key)) != value[3:]:
                return False
    return True


class FakePowerStore:
    def __init__(self, username: str, password: str, release: str = "4.1.0.0") -> None:
        self.auth = "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()
        self.release = release
        self.tokens: set[str] = set()
        self.volumes: dict[str, dict[str, Any]] = {}
        self.hosts: dict[str, dict[str, Any]] = {}
        self.mappings: list[dict[str, Any]] = []
        self.sessions: dict[str, dict[str, Any]] = {}
        self.replicating_policies: set[str] = set()
        self._ids = itertools.count(1)
        # Paging, as endpoints.md describes it: a collection GET answers 200 with everything when it fits,
        # else 206 with the items of the asked `Range: a-b` (or the first `default_page` without one), at
        # most `max_page` of them, and `content-range: a-b/<total>`.
        self.default_page = 100
        self.max_page = 2000
        # A misbehaving array, for the fail-closed tests: "total_inflated" (content-range counts one item
        # more than there is), "skips_one" (a later page starts one item after the one asked for).
        self.paging_lie: str | None = None
        self.ranges_asked: list[tuple[str, str | None]] = []  # (path, the Range header or None) of every collection GET
        self.expire_after_first_page = False

    def _id(self, kind: str) -> str:
        return f"{kind}-{next(self._ids):04d}"

    def expire_sessions(self) -> None:
        self.tokens.clear()

    def __call__(self, request: Request) -> Reply:
        path = request.path.removeprefix(BASE)
        parts = path.strip("/").split("/")
        if path == "/login_session":
            if request.headers.get("authorization") != self.auth and request.headers.get("Authorization") != self.auth:
                return Reply(401, {"messages": [{"code": "0xE09010010001", "message_l10n": "authentication failed"}]})
            token = pysecrets.token_hex(16)
            self.tokens.add(token)
            session = {
                "id": "s1",
                "user": "admin",
                "role_ids": ["1"],
                "idle_timeout": 3600,
                "is_password_change_required": False,
                "is_built_in_user": True,
            }
            return Reply(200, [_select(session, request.query)], {"DELL-EMC-TOKEN": token, "Set-Cookie": f"auth_cookie={token}; Path=/"})
        if request.headers.get("DELL-EMC-TOKEN") not in self.tokens:
            return Reply(401, {"messages": [{"code": "0xE09010010003", "message_l10n": "session expired"}]})
        if path == "/logout":
            self.tokens.discard(request.headers.get("DELL-EMC-TOKEN", ""))
            return Reply(204)
        if path == "/software_installed":
            return Reply(200, [_select({"id": "sw1", "release_version": self.release}, request.query)])
        handler = getattr(self, f"_{parts[0]}", None)
        if handler is None:
            return Reply(404, {"messages": [{"message_l10n": f"no {path}"}]})
        reply: Reply = handler(request, parts[1:])
        if request.method == "GET" and reply.status == 200 and isinstance(reply.body, list):
            return self._page(request, reply.body)
        return reply

    def _page(self, request: Request, items: list[dict[str, Any]]) -> Reply:
        asked = next((v for k, v in request.headers.items() if k.lower() == "range"), None)
        self.ranges_asked.append((request.path, asked))
        first, last = (int(n) for n in asked.split("-")) if asked else (0, self.default_page - 1)
        if first >= len(items) and items:
            return self._error(416, f"range {asked} starts past the {len(items)} items")
        size = min(last - first + 1, self.max_page)
        if self.paging_lie == "skips_one" and first > 0:
            first += 1
        page = items[first : first + size]
        if first == 0 and len(page) == len(items):
            return Reply(200, page)
        if self.expire_after_first_page and first == 0:
            self.expire_after_first_page = False
            self.tokens.clear()  # the session ends between two pages of a list
        total = len(items) + (1 if self.paging_lie == "total_inflated" else 0)
        return Reply(206, page, {"content-range": f"{first}-{first + len(page) - 1}/{total}"})

    def _error(self, status: int, message: str) -> Reply:
        return Reply(status, {"messages": [{"code": "0xE0A", "severity": "Error", "message_l10n": message}]})

    def _volume(self, request: Request, rest: list[str]) -> Reply:
        body = request.body or {}
        if not rest:
            if request.method == "POST":
                if any(v["name"] == body["name"] for v in self.volumes.values()):
                    return self._error(422, f"volume name {body['name']} is in use")
                return Reply(201, {"id": self._new_volume(body["name"], int(body["size"]), "Primary", body.get("protection_policy_id"))})
            found = [_select(v, request.query) for v in self.volumes.values() if _matches(v, request.query)]
            return Reply(200, found)
        volume = self.volumes.get(rest[0])
        if volume is None:
            return self._error(404, f"volume {rest[0]} not found")
        action = rest[1] if len(rest) > 1 else ""
        if action == "" and request.method == "GET":
            return Reply(200, _select(volume, request.query))
        if action == "" and request.method == "DELETE":
            if any(m["volume_id"] == volume["id"] for m in self.mappings):
                return self._error(422, f"volume {volume['name']} is mapped to a host")
            if any(v["protection_data"]["source_id"] == volume["id"] for v in self.volumes.values()):
                return self._error(422, f"volume {volume['name']} has snapshots")
            del self.volumes[volume["id"]]
            self.sessions = {k: s for k, s in self.sessions.items() if s["local_resource_id"] != volume["id"]}
            return Reply(204)
        if action == "attach":
            lun = len([m for m in self.mappings if m["host_id"] == body["host_id"]]) + 1
            self.mappings.append(
                {
                    "id": self._id("map"),
                    "host_id": body["host_id"],
                    "host_group_id": None,
                    "volume_id": volume["id"],
                    "logical_unit_number": lun,
                }
            )
            return Reply(204)
        if action == "detach":
            self.mappings = [m for m in self.mappings if not (m["volume_id"] == volume["id"] and m["host_id"] == body["host_id"])]
            return Reply(204)
        if action == "snapshot":
            snap = self._new_volume(body["name"], volume["size"], "Snapshot", None, source=volume["id"])
            return Reply(200, {"id": snap})
        return self._error(405, f"{request.method} {request.path}")

    def _new_volume(self, name: str, size: int, kind: str, policy: str | None, source: str | None = None) -> str:
        volume_id = self._id("vol")
        serial = pysecrets.token_hex(12)
        self.volumes[volume_id] = {
            "id": volume_id,
            "name": name,
            "size": size,
            "type": kind,
            "state": "Ready",
            "wwn": f"naa.68ccf098{serial}",
            "nguid": f"nguid.{pysecrets.token_hex(8)}8ccf0968{pysecrets.token_hex(4)}",  # as PowerStore answers it
            "nsid": int(volume_id[-4:]),
            "protection_policy_id": policy,
            "protection_data": {"source_id": source},
        }
        if policy in self.replicating_policies and kind == "Primary":
            session = self._id("rs")
            self.sessions[session] = {
                "id": session,
                "state": "OK",
                "role": "Source",
                "resource_type": "volume",
                "local_resource_id": volume_id,
                "remote_resource_id": self._id("remote"),
                "remote_system_id": "rs-system-1",
                "last_sync_timestamp": None,
                "progress_percentage": 100,
            }
        return volume_id

    def _host(self, request: Request, rest: list[str]) -> Reply:
        body = request.body or {}
        if not rest:
            if request.method == "POST":
                if any(h["name"] == body["name"] for h in self.hosts.values()):
                    return self._error(422, f"host name {body['name']} is in use")
                host_id = self._id("host")
                self.hosts[host_id] = {"id": host_id, "name": body["name"], "os_type": body["os_type"], "initiators": body["initiators"]}
                return Reply(201, {"id": host_id})
            return Reply(200, [_select(h, request.query) for h in self.hosts.values() if _matches(h, request.query)])
        host = self.hosts.get(rest[0])
        if host is None:
            return self._error(404, f"host {rest[0]} not found")
        if request.method == "DELETE":
            if any(m["host_id"] == host["id"] for m in self.mappings):
                return self._error(422, f"host {host['name']} has mapped volumes")
            del self.hosts[host["id"]]
            return Reply(204)
        return Reply(200, _select(host, request.query))

    def _host_volume_mapping(self, request: Request, rest: list[str]) -> Reply:
        return Reply(200, [_select(m, request.query) for m in self.mappings if _matches(m, request.query)])

    def _replication_session(self, request: Request, rest: list[str]) -> Reply:
        if not rest:
            return Reply(200, [_select(s, request.query) for s in self.sessions.values() if _matches(s, request.query)])
        session = self.sessions.get(rest[0])
        if session is None:
            return self._error(404, f"replication session {rest[0]} not found")
        if len(rest) > 1 and rest[1] == "sync":
            session["last_sync_timestamp"] = f"2026-11-23T19:{len(self.sessions):02d}:{next(self._ids) % 60:02d}Z"
            return Reply(204)
        return Reply(200, _select(session, request.query))
