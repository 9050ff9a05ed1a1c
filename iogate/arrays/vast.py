"""VAST Data (VMS REST API) through VAST's own SDK, vastpy.

One suite volume = one VAST *view* of its own under the lab's `view_root`, named with the run's prefix:
- over NFS: the view (protocols NFS, NFS4) with a quota of the volume's size on its path; the hosts mount
  `<data address>:<view path>`;
- over NVMe/TCP: the view is a block subsystem (protocol BLOCK, its `nqn` the subsystem NQN) holding one
  block volume (`POST /volumes/`, identified by its NGUID), mapped to one block host per lab host (its
  host NQN) with `PATCH /volumes/{id}/update_hosts`, an async task followed on `/vtasks/{id}/`.
Every view points at one view policy the run makes (NFS read-write, no squash, for `nfs_clients`, limited
to the lab's VIP pool). A view of its own per volume is what makes a snapshot (`POST /snapshots/`, a path
snapshot) a snapshot of that one volume. VAST has no iSCSI or Fibre Channel (no IQN or WWPN object in the
API): those are refused.

Lists are read to their end: with `page`/`page_size` where the description declares them, the body is the
`{count, next, previous, results}` envelope (it appears only in VAST's clients, the description models a
bare array) and the pages must add up to `count`; a list without `page_size` is answered whole.
vastpy builds the URLs, the Basic / Api-Token headers and raises RESTFailure; its `request` sends with no
timeout and with urllib3's default retries (a lost connection would repeat a POST) and never verifies TLS
without a CA file, so this module sends through a pool with the lab's timeout, retries=False and the lab's
TLS choice; ApiCaller retries reads only. Written against the VMS 5.5 OpenAPI description
(../shared/specs/vast-data/vms-api-5.5-go-vast-client-3ce13e9.json; every call used is in 5.3.0 too).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from iogate.arrays.base import Capability, Snapshot, Volume
from iogate.arrays.exports import NfsExport, NvmeTcpExport
from iogate.arrays.rest_common import (
    ApiCaller,
    Failure,
    IncompleteList,
    VendorOptions,
    number_or_none,
    redact_sdk_logs,
    require_sdk,
)
from iogate.arrays.vendor_base import OwnedVolume, VendorDriver, VendorSdk, register_vendor_remover
from iogate.errors import ArrayError
from iogate.lab import DeviceIdentity, Lab, QoS
from iogate.run.ledger import Entry

DRIVER = "vast"
API_VERSION = "latest"  # /api/latest/... (vastpy's default since 0.3.22); the calls below are described in VMS 5.3.0 and 5.5
FILE_CONNECTORS = ("nfs",)
UNSLASHED = frozenset({"update_hosts"})  # described without the trailing slash vastpy appends to every path
FAILED_TASK_STATES = frozenset({"FAILED", "TIMEOUT", "UNKNOWN", "PARTIALLY_COMPLETED"})


class VastOptions(VendorOptions):
    username: str = "admin"  # the VMS user (auth basic)
    # basic: user + password on every call; api_token: `password` holds a VMS API token (VMS >= 5.3), username unused
    auth: Literal["basic", "api_token"] = "basic"
    tenant_id: int = Field(default=1, ge=1)  # the tenant the views, block hosts and snapshots belong to
    tenant: str | None = None  # X-Tenant-Name header (VMS >= 5.3), for a tenant-scoped user
    vip_pool: str = Field(min_length=1)  # the VIP pool (role PROTOCOLS) the hosts reach the views through
    data_address: str | None = None  # the VIP hosts mount and connect to (default: the pool's first address)
    nvme_trsvcid: str = "4420"  # TCP port of the NVMe/TCP service on the VIPs
    view_root: str = Field(default="/iogate", pattern=r"^(/[A-Za-z0-9._-]+)+$")  # directory under which the run's views are made
    nfs_clients: list[str] = Field(default_factory=lambda: ["*"], min_length=1)  # hosts the view policy lets read-write (no squash)
    default_protocol: str = "nvme-tcp"  # protocol a volume is made for when the test names none (nvme-tcp; nfs is asked per volume)
    page_size: int = Field(default=100, ge=1, le=1000)  # items per page asked of a paged list
    task_timeout_s: float = Field(default=600.0, gt=0)  # the longest an async task (a mapping) or a volume creation may take
    task_poll_s: float = Field(default=1.0, ge=0)  # seconds between two looks at a running task

    @field_validator("default_protocol")
    @classmethod
    def _block_protocol(cls, value: str) -> str:
        if value not in ("nvme-tcp", "nvme_tcp"):
            raise ValueError("VAST maps block volumes over NVMe/TCP only: default_protocol must be nvme-tcp")
        return value


# -- the SDK, with a timeout and without urllib3's repeats -----------------------------------------------
def _client_class() -> type:
    require_sdk("vastpy", "vastpy", DRIVER)
    import urllib3
    from vastpy import SUCCESS_CODES, RESTFailure, VASTClient

    class Client(VASTClient):  # type: ignore[misc,valid-type]
        """vastpy's client; `request` as vastpy 0.3.22 has it, sent with a timeout, no retries and the lab's TLS."""

        timeout_s: float = 60.0
        verify: bool | str = True

        def __getitem__(self, part: str) -> Any:
            child = super().__getitem__(part)
            child.timeout_s, child.verify = self.timeout_s, self.verify
            return child

        def request(self, method: str, fields: Any = None, data: Any = None) -> Any:
            tls: dict[str, Any] = {"cert_reqs": "CERT_REQUIRED"}
            if isinstance(self.verify, str):
                tls["ca_certs"] = self.verify
            elif not self.verify:
                tls = {"cert_reqs": "CERT_NONE"}
                urllib3.disable_warnings(category=urllib3.exceptions.InsecureRequestWarning)
            pool = urllib3.PoolManager(timeout=urllib3.Timeout(total=self.timeout_s), retries=False, **tls)
            if self._token:
                headers = {"authorization": f"Api-Token {self._token}"}
            else:
                headers = urllib3.make_headers(basic_auth=self._user + ":" + self._password)
            if self._tenant:
                headers["X-Tenant-Name"] = self._tenant
            body = None
            if data:
                headers["Content-Type"] = "application/json"
                body = json.dumps(data).encode("utf-8")
            pairs = None
            if fields:
                pairs = [(k, i) for k, v in fields.items() for i in (v if isinstance(v, list) else [v])]
            slash = "" if self._url.rsplit("/", 1)[-1] in UNSLASHED else "/"
            answer = pool.request(method, f"https://{self._address}/{self._url}{slash}", headers=headers, fields=pairs, body=body)
            if answer.status not in SUCCESS_CODES:
                raise RESTFailure(method, self._url, pairs, answer.status, answer.data)
            if "application/json" in answer.headers.get("Content-Type", "") and answer.data:
                return json.loads(answer.data.decode("utf-8"))
            return answer.data

    return Client


def connect(options: VastOptions, array: str) -> Any:
    client_class = _client_class()
    secret = options.secret()
    redact_sdk_logs("vastpy", "urllib3")
    creds = {"token": secret} if options.auth == "api_token" else {"user": options.username, "password": secret}
    root = client_class(address=options.management, tenant=options.tenant, version=API_VERSION, **creds)
    root.timeout_s, root.verify = options.timeout_s, options.verify_tls
    return root


def _detail(data: Any) -> str:
    """The array's own words from an error body: ErrorResponse {detail} or a JSON string (as the description has both)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)
    try:
        parsed = json.loads(text)
    except ValueError:
        return text.strip()
    if isinstance(parsed, dict) and "detail" in parsed:
        return str(parsed["detail"])
    return parsed if isinstance(parsed, str) else text.strip()


def classify(exc: BaseException) -> Failure:
    if type(exc).__name__ == "RESTFailure":
        status = getattr(exc, "status", None)
        reason = _detail(getattr(exc, "data", b""))
        if status in (401, 403):
            # No session to renew: Basic sends the password on every call, an API token cannot be renewed by its holder.
            reason = f"the array refused the credentials (wrong, disabled or an expired API token?): {reason}"
        return Failure(status, reason)
    name, text = type(exc).__name__, str(exc).lower()
    return Failure(None, "timed out" if "timeout" in name.lower() or "timed out" in text else name)


def _caller(array: str, options: VastOptions, client: Any) -> ApiCaller:
    return ApiCaller(array, options, classify)


# The lists both descriptions (VMS 5.3.0 and 5.5) give page and page_size; 5.5 adds them to volumes, blockhosts
# and blockmappings, which 5.3.0 lists whole (asked without page_size, any list is answered whole).
PAGED = frozenset({"views", "quotas", "snapshots"})


def list_all(api: ApiCaller, client: Any, resource: str, what: str, **filters: Any) -> list[dict[str, Any]]:
    """Every item of `GET /<resource>/`, read to the last page (see the module docstring), retried as a read.

    A list in PAGED is asked page by page; another is asked whole, and an envelope the array sends
    anyway is followed with `page` alone."""
    page_size = api.options.page_size  # type: ignore[attr-defined]
    paged = resource in PAGED

    def fetch() -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        count: int | None = None
        page = 1
        while True:
            params = dict(filters)
            if paged:
                params.update(page=page, page_size=page_size)
            elif page > 1:
                params["page"] = page
            body = client[resource].get(**params)
            if isinstance(body, list):
                if page > 1:
                    raise IncompleteList(f"page {page} came as a bare list, not the paged envelope of page 1")
                return body
            if not isinstance(body, dict) or not isinstance(body.get("results"), list):
                raise IncompleteList(f"page {page} is neither a list nor the {{count, next, previous, results}} envelope")
            total = body.get("count")
            if not isinstance(total, int) or isinstance(total, bool):
                raise IncompleteList(f"page {page} gives no count, so a lost page could not be told")
            if count is not None and total != count:
                raise IncompleteList(f"the count changed from {count} to {total} between pages")
            count = total
            items += body["results"]
            if len(items) > count:  # also ends a next link that loops
                raise IncompleteList(f"the pages hold more than the {count} items the array counted")
            if not body.get("next"):
                break
            if not body["results"]:
                raise IncompleteList(f"page {page} is empty but names a next page")
            page += 1
        if len(items) != count:
            raise IncompleteList(f"the pages held {len(items)} of the {count} items the array counted")
        return items

    return api.call(f"GET /{resource}/", what, fetch, idempotent=True)


def _drr_fact(cluster: dict[str, Any]) -> str:
    """The cluster's data-reduction ratio as a report fact: cluster-wide and inline, as the VMS reports it."""
    drr = cluster.get("drr_text") or cluster.get("drr")
    return f"{drr} (cluster-wide, GET /clusters/ drr)" if drr not in (None, "") else "not reported (GET /clusters/ has no drr)"


def _one(items: list[dict[str, Any]], key: str, value: Any) -> dict[str, Any] | None:
    """The item whose `key` is exactly `value` (filters such as name__contains match more)."""
    found = [item for item in items if item.get(key) == value]
    if len(found) > 1:
        raise ArrayError(f"{len(found)} objects with {key} {value!r}: refusing to pick one")
    return found[0] if found else None


def wait_task(api: ApiCaller, client: Any, answer: Any, call: str, what: str, sleep: Any = time.sleep) -> dict[str, Any]:
    """Follow the async task a call answered with (`{async_task: {id ...}}`) on /vtasks/{id}/ until it ends."""
    options: VastOptions = api.options  # type: ignore[assignment]
    task = answer.get("async_task") if isinstance(answer, dict) else None
    task_id = task.get("id") if isinstance(task, dict) else None
    if not isinstance(task_id, int):
        raise ArrayError(f"array {api.array}: {call} {what}: the answer names no async task to follow: {str(answer)[:200]}")
    started = time.monotonic()
    while True:
        state_of = api.call(
            "GET /vtasks/{id}/", f"task {task_id} of {call} {what}", lambda: client.vtasks[str(task_id)].get(), idempotent=True
        )
        state = state_of.get("state") if isinstance(state_of, dict) else None
        if state == "COMPLETED":
            return state_of
        if state in FAILED_TASK_STATES:
            messages = json.dumps(state_of.get("messages"))[:300]
            raise ArrayError(f"array {api.array}: {call} {what}: task {task_id} ended {state}: {messages}")
        if time.monotonic() - started > options.task_timeout_s:
            raise ArrayError(f"array {api.array}: {call} {what}: task {task_id} still {state} after {options.task_timeout_s:.0f} s")
        sleep(options.task_poll_s)


# -- finding and deleting one journalled object by name --------------------------------------------------
def _view(api: ApiCaller, client: Any, path: str) -> dict[str, Any] | None:
    return _one(list_all(api, client, "views", f"view {path}", path=path), "path", path)


def _volume(api: ApiCaller, client: Any, name: str, view_path: str) -> dict[str, Any] | None:
    view = _view(api, client, view_path)
    if view is None:
        return None
    return _one(list_all(api, client, "volumes", f"volume {view_path}/{name}", name=name, view__id=view["id"]), "name", name)


def _host(api: ApiCaller, client: Any, name: str, tenant_id: int) -> dict[str, Any] | None:
    return _one(list_all(api, client, "blockhosts", f"block host {name}", name=name, tenant_id=tenant_id), "name", name)


def delete_object(api: ApiCaller, client: Any, attrs: dict[str, Any]) -> str | None:
    """Remove one journalled object by name or path (idempotent); None when it is gone already."""
    obj_type, name, prefix = attrs["type"], attrs["name"], attrs["prefix"]
    if not name.rsplit("/", 1)[-1].startswith(prefix):
        raise ArrayError(f"array {api.array}: refusing to delete {obj_type} {name}: not named with this run's prefix {prefix}")
    tenant_id = api.options.tenant_id  # type: ignore[attr-defined]
    if obj_type == "view_policy":
        found = _one(list_all(api, client, "viewpolicies", f"view policy {name}", name=name), "name", name)
        if found is None:
            return None
        api.call("DELETE /viewpolicies/{id}/", f"view policy {name}", lambda: client.viewpolicies[str(found["id"])].delete())
        return f"deleted view policy {name}"
    if obj_type == "view":
        found = _view(api, client, name)
        if found is None:
            return None
        api.call("DELETE /views/{id}/", f"view {name}", lambda: client.views[str(found["id"])].delete())
        return f"deleted view {name}"
    if obj_type == "folder":
        # The directory the view was made on (create_dir) holds the run's data: a deleted view leaves it.
        if _view(api, client, name) is not None:
            raise ArrayError(f"array {api.array}: folder {name} is still exported by a view: not deleting it")
        try:
            api.call(
                "DELETE /folders/delete_folder/",
                f"folder {name}",
                lambda: client.folders.delete_folder.delete(path=name, tenant_id=tenant_id),
            )
        except ArrayError as exc:
            if "HTTP 404" in str(exc):
                return None
            raise
        return f"deleted folder {name}"
    if obj_type == "quota":
        found = _one(list_all(api, client, "quotas", f"quota {name}", name=name, tenant_id=tenant_id), "name", name)
        if found is None:
            return None
        api.call("DELETE /quotas/{id}/", f"quota {name}", lambda: client.quotas[str(found["id"])].delete())
        return f"deleted quota {name}"
    if obj_type == "volume":
        found = _volume(api, client, name, attrs["view"])
        if found is None:
            return None
        api.call("DELETE /volumes/{id}/", f"volume {attrs['view']}/{name}", lambda: client.volumes[str(found["id"])].delete())
        return f"deleted block volume {attrs['view']}/{name}"
    if obj_type == "block_host":
        found = _host(api, client, name, tenant_id)
        if found is None:
            return None
        api.call("DELETE /blockhosts/{id}/", f"block host {name}", lambda: client.blockhosts[str(found["id"])].delete())
        return f"deleted block host {name}"
    if obj_type == "mapping":
        volume, host = _volume(api, client, name, attrs["view"]), _host(api, client, attrs["host"], tenant_id)
        if volume is None or host is None:
            return None
        what = f"volume {attrs['view']}/{name} host {attrs['host']}"
        maps = list_all(api, client, "blockmappings", what, volume_id=volume["id"], block_host_id=host["id"])
        if not any((m.get("volume") or {}).get("id") == volume["id"] and (m.get("block_host") or {}).get("id") == host["id"] for m in maps):
            return None
        call = "PATCH /volumes/{id}/update_hosts"
        answer = api.call(call, what, lambda: client.volumes[str(volume["id"])].update_hosts.patch(ids_to_remove=[host["id"]]))
        wait_task(api, client, answer, call, what)
        return f"unmapped {what}"
    if obj_type == "snapshot":
        path = attrs["path"]
        # By name alone: the path a VMS stores may carry a trailing slash (the CSI sends one), and a lookup that
        # misses is taken for "gone"; the run-prefixed name is unique.
        listed = list_all(api, client, "snapshots", f"snapshot {name}", name__contains=name, tenant_id=tenant_id)
        found = _one(listed, "name", name)
        if found is None:
            return None
        api.call("DELETE /snapshots/{id}/", f"snapshot {name}", lambda: client.snapshots[str(found["id"])].delete())
        return f"deleted snapshot {name} of {path}"
    raise ArrayError(f"array {api.array}: no way to delete a {obj_type} (journal of a newer IOGate?)")


def _connect_checked(options: VastOptions, array: str) -> Any:
    try:
        return connect(options, array)
    except ArrayError:
        raise  # a missing SDK or an unresolved credential reference says what to fix
    except Exception as exc:
        raise ArrayError(f"array {array}: vastpy client: {classify(exc).reason}") from None


SDK = VendorSdk(connect=_connect_checked, caller=_caller, delete=delete_object)


class Vast(VendorDriver):
    """ArrayDriver over a VAST cluster (see module docstring); `_conn` is the vastpy client of /api/latest."""

    DRIVER: ClassVar[str] = DRIVER
    sdk: ClassVar[VendorSdk] = SDK
    Options: ClassVar[type[BaseModel]] = VastOptions
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.SNAPSHOT})
    maps_over: ClassVar[tuple[str, ...]] = ("nvme-tcp",)
    file_connectors: ClassVar[tuple[str, ...]] = FILE_CONNECTORS  # iogate.lab.support: NFS volumes are views
    refusals: ClassVar[dict[Capability, str]] = {
        Capability.RESTORE: "the VMS API (5.3.0, 5.5) has no in-place revert of a view or block volume to a snapshot"
        " (restore exists only for protected paths, by clone and commit)",
        Capability.DEDUPE: "VAST reduces data inline and cluster-wide; the VMS API has no on-demand dedupe pass and no"
        " per-view switch (the cluster's data-reduction ratio is read as evidence instead: data_reduction())",
        Capability.REPLICATE: "VAST replicates protected paths to a remote target on a protection policy; this driver does"
        " not set those up (not implemented, and not verifiable without two clusters)",
        Capability.MIRROR: "synchronous replication of a single volume is not described in the VMS API",
        Capability.QOS: "VAST QoS is a QoS policy object attached to a view or volume; this driver does not make them (not implemented)",
        Capability.METRICS: "the VMS API has no per-volume time series: /monitors/ad_hoc_query/ has no view or volume"
        " object type, and /prometheusmetrics/volumes (5.5 only), /iodata/ and /monitors/topn/ answer without a"
        " schema in the description",
    }
    clock_unread: ClassVar[str] = "METRICS is not offered, so no sample needs the array's clock"

    def __init__(self, lab: Lab, run: Any) -> None:
        super().__init__(lab, run)
        self._policy: tuple[int, Entry] | None = None
        self._parts: dict[str, list[Entry]] = {}  # per suite volume: what its view holds (folder, quota / volume), in creation order
        self._views: dict[str, str] = {}  # suite volume -> its view path
        self._data_address = ""
        self._pool_id: int | None = None

    # -- lifecycle --------------------------------------------------------------------
    def _discover(self) -> set[Capability]:
        cluster = self._cluster()
        pools = list_all(self.api, self._conn, "vippools", f"VIP pool {self.options.vip_pool}")
        pool = _one(pools, "name", self.options.vip_pool)
        if pool is None:
            raise ArrayError(f"array {self.lab.array.name}: no VIP pool {self.options.vip_pool!r} (the lab's vip_pool)")
        self._pool_id = pool.get("id")
        ranges = pool.get("ip_ranges") or []
        first = ranges[0][0] if ranges and ranges[0] else ""
        self._data_address = self.options.data_address or first
        if not self._data_address:
            raise ArrayError(f"array {self.lab.array.name}: VIP pool {self.options.vip_pool} has no address; give data_address")
        self._facts = {
            "array.driver": DRIVER,
            "array.model": f"VAST Data cluster {cluster.get('name', '')}".strip(),
            "array.firmware": f"VAST OS {cluster.get('sw_version') or cluster.get('build') or ''}".strip(),
            "array.serial": str(cluster.get("psnt") or ""),
            "array.id": str(cluster.get("guid") or ""),
            "array.drr_at_setup": str(cluster.get("drr_text") or cluster.get("drr") or ""),
            "array.data_reduction_ratio": _drr_fact(cluster),
        }
        return {Capability.SNAPSHOT}

    def _cluster(self) -> dict[str, Any]:
        clusters = list_all(self.api, self._conn, "clusters", "cluster")
        if len(clusters) != 1:
            raise ArrayError(
                f"array {self.lab.array.name}: GET /clusters/ listed {len(clusters)} clusters, expected the one this VMS manages"
            )
        return clusters[0]

    def teardown(self) -> None:
        super().teardown()
        if self._policy is not None:
            self._delete(self._policy[1])
            self._policy = None

    def facts_at_end(self) -> dict[str, str]:
        return {"array.data_reduction_ratio_at_end": self._fact(lambda: _drr_fact(self._cluster()))}

    def data_reduction(self) -> dict[str, Any]:
        """The cluster's data-reduction ratio now (cluster-wide, inline: not this run's volumes alone), and the
        logical / physical capacity of each view of the run, as evidence beside the host's figures."""
        cluster = self._cluster()
        logical, physical = number_or_none(cluster.get("logical_space_in_use")), number_or_none(cluster.get("physical_space_in_use"))
        views = {}
        for volume, path in self._views.items():
            view = _view(self.api, self._conn, path) or {}
            views[volume] = {"logical_bytes": view.get("logical_capacity"), "physical_bytes": view.get("physical_capacity")}
        return {
            "scope": "cluster",
            "drr": number_or_none(cluster.get("drr")),
            "drr_text": cluster.get("drr_text"),
            "logical_space_in_use_bytes": logical,
            "physical_space_in_use_bytes": physical,
            "views": views,
        }

    # -- what every view points at ----------------------------------------------------------
    def _view_policy(self) -> int:
        if self._policy is None:
            name = f"{self.prefix}policy"
            entry = self._journal("view_policy", name)
            body: dict[str, Any] = {
                "name": name,
                "flavor": "NFS",
                "nfs_read_write": list(self.options.nfs_clients),
                "nfs_no_squash": list(self.options.nfs_clients),
                "tenant_id": self.options.tenant_id,
            }
            if self._pool_id is not None:
                body["vip_pools"] = [self._pool_id]
            made = self.api.call("POST /viewpolicies/", f"view policy {name}", lambda: self._conn.viewpolicies.post(**body))
            self.run.ledger.created(entry, id=made.get("id"))
            self._policy = (int(made["id"]), entry)
        return self._policy[0]

    def _make_host(self, lab_host: str, protocol: str, initiator: str) -> tuple[str, Entry]:
        name = f"{self.prefix}{lab_host}"[:64]
        entry = self._journal("block_host", name)
        made = self.api.call(
            "POST /blockhosts/",
            f"block host {name}",
            lambda: self._conn.blockhosts.post(name=name, nqn=initiator, tenant_id=self.options.tenant_id),
        )
        self.run.ledger.created(entry, id=made.get("id"))
        return str(made["id"]), entry

    # -- volumes ----------------------------------------------------------------------
    def create_volume(self, name: str, size_bytes: int, qos: QoS | None = None, export: str | None = None) -> Volume:
        if export in FILE_CONNECTORS:
            if qos is not None:
                raise self._refuse(Capability.QOS)
            if name in self._volumes:
                raise ArrayError(f"array {self.lab.array.name}: volume {name} exists already")
            return self._nfs_volume(name, size_bytes)
        protocol, hosts = self._new_volume(name, qos, export)
        return self._block_volume(name, size_bytes, protocol, hosts)

    def _new_view(self, name: str, protocols: list[str]) -> tuple[OwnedVolume, dict[str, Any]]:
        """Journal and make the volume's own view (on a new directory, journalled to be deleted after it)."""
        path = f"{self.options.view_root}/{self.prefix}{name}"
        policy_id = self._view_policy()
        folder = self._journal("folder", path)
        self._parts[name] = [folder]
        entry = self._journal("view", path)
        owned = OwnedVolume(volume=Volume(name, 0, DeviceIdentity(nfs_export=f"{self._data_address}:{path}")), entry=entry)
        self._volumes[name] = owned
        self._views[name] = path
        body = {"path": path, "policy_id": policy_id, "protocols": protocols, "create_dir": True, "tenant_id": self.options.tenant_id}
        view = self.api.call("POST /views/", f"view {path}", lambda: self._conn.views.post(**body))
        self.run.ledger.created(folder)
        self.run.ledger.created(entry, id=view.get("id"))
        return owned, view

    def _nfs_volume(self, name: str, size_bytes: int) -> Volume:
        owned, view = self._new_view(name, ["NFS", "NFS4"])
        path = view.get("path") or owned.entry.attrs["name"]
        quota_name = f"{self.prefix}{name}"
        quota = self._journal("quota", quota_name)
        self._parts[name].append(quota)
        self.api.call(
            "POST /quotas/",
            f"quota {quota_name}",
            lambda: self._conn.quotas.post(name=quota_name, path=path, hard_limit=size_bytes, tenant_id=self.options.tenant_id),
        )
        self.run.ledger.created(quota)
        owned.volume = Volume(
            name=name,
            size_bytes=size_bytes,
            identity=DeviceIdentity(nfs_export=f"{self._data_address}:{path}"),
            exports=(NfsExport(server=self._data_address, path=path),),
        )
        return owned.volume

    def _block_volume(self, name: str, size_bytes: int, protocol: str, hosts: dict[str, str]) -> Volume:
        owned, view = self._new_view(name, ["BLOCK"])
        path, nqn = owned.entry.attrs["name"], str(view.get("nqn") or "")
        if not nqn:
            raise ArrayError(f"array {self.lab.array.name}: POST /views/ view {path}: the subsystem view came back without its nqn")
        volume_name = f"{self.prefix}{name}"
        entry = self._journal("volume", volume_name, view=path)
        self._parts[name].append(entry)
        made = self.api.call(
            "POST /volumes/",
            f"volume {path}/{volume_name}",
            lambda: self._conn.volumes.post(name=volume_name, size=size_bytes, view_id=view["id"]),
        )
        self.run.ledger.created(entry, id=made.get("id"))
        owned.id = str(made["id"])
        nguid = self._nguid(made, path, volume_name)
        owned.volume = Volume(name=name, size_bytes=size_bytes, identity=DeviceIdentity(nguid=nguid))
        call = "PATCH /volumes/{id}/update_hosts"
        for lab_host, initiator in hosts.items():
            host_id = self._host(lab_host, protocol, initiator)
            host_name = self._hosts[(lab_host, protocol)][1].attrs["name"]
            what = f"volume {path}/{volume_name} host {host_name}"
            answer = self._map(
                owned,
                "mapping",
                volume_name,
                call,
                what,
                lambda host_id=host_id: self._conn.volumes[owned.id].update_hosts.patch(ids_to_add=[int(host_id)]),  # type: ignore[misc]
                view=path,
                host=host_name,
            )
            wait_task(self.api, self._conn, answer, call, what)
        export = NvmeTcpExport(traddr=self._data_address, subsys_nqn=nqn, trsvcid=self.options.nvme_trsvcid)
        owned.volume = Volume(name=name, size_bytes=size_bytes, identity=DeviceIdentity(nguid=nguid), exports=(export,))
        return owned.volume

    def _nguid(self, made: dict[str, Any], path: str, volume_name: str) -> str:
        """The volume's NGUID: in the create answer, or once the array has it (state CREATING -> CREATED)."""
        started = time.monotonic()
        current = made
        while not current.get("nguid"):
            if current.get("state") in ("FAILED", "DELETED", "DELETING"):
                raise ArrayError(f"array {self.lab.array.name}: volume {path}/{volume_name} is {current['state']}")
            if time.monotonic() - started > self.options.task_timeout_s:
                raise ArrayError(
                    f"array {self.lab.array.name}: volume {path}/{volume_name} has no NGUID after {self.options.task_timeout_s:.0f} s"
                )
            time.sleep(self.options.task_poll_s)
            current = self.api.call(
                "GET /volumes/{id}/", f"volume {path}/{volume_name}", lambda: self._conn.volumes[str(made["id"])].get(), idempotent=True
            )
        return str(current["nguid"])

    def delete_volume(self, volume: Volume) -> None:
        owned = self._owned(volume)
        parts = self._parts.pop(volume.name, [])
        folder, inner = parts[:1], parts[1:]
        for entry in [*owned.snapshots.values(), *owned.maps, *inner[::-1], owned.entry, *folder]:
            if entry.open:
                self._delete(entry)
        del self._volumes[volume.name]
        self._views.pop(volume.name, None)

    # -- data services ------------------------------------------------------------------
    def snapshot_create(self, volume: Volume, name: str) -> Snapshot:
        """A snapshot of the volume's own view path (POST /snapshots/ {name, path}): that one volume's data."""
        owned = self._owned(volume)
        path = owned.entry.attrs["name"]
        suffix = "".join(c if c.isalnum() or c in "-_" else "-" for c in name)
        snap = f"{self.prefix}{volume.name}-{suffix}"[:128]
        entry = self._journal("snapshot", snap, path=path)
        owned.snapshots[name] = entry
        made = self.api.call(
            "POST /snapshots/",
            f"snapshot {snap} of {path}",
            lambda: self._conn.snapshots.post(name=snap, path=path, tenant_id=self.options.tenant_id),
        )
        self.run.ledger.created(entry, id=made.get("id"))
        return Snapshot(name=name, volume=volume.name, location=snap, evidence={"id": made.get("id"), "array_name": snap, "path": path})

    def snapshot_restore(self, volume: Volume, snapshot: Snapshot) -> None:
        raise self._refuse(Capability.RESTORE)

    def dedupe_run(self, volumes: Sequence[Volume] = ()) -> dict[str, Any]:
        raise self._refuse(Capability.DEDUPE)

    def replicate(self, volume: Volume) -> dict[str, Any]:
        raise self._refuse(Capability.REPLICATE)


register_vendor_remover(Vast)
