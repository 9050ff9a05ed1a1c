"""Dell PowerStore through Dell's own SDK, PyPowerStore (REST /api/rest).

Volume = a PowerStore volume; hosts = one PowerStore host per lab host and
protocol with the host's IQN or NQN; map = POST /volume/{id}/attach. The device
identity is what the array reports: `wwn` (naa.68ccf098...) for SCSI, `nguid`
for NVMe. Snapshot = POST /volume/{id}/snapshot; replicate = sync of the
volume's replication session (the volume gets one from the lab's protection
policy). Written against the calls PyPowerStore 3.x makes, as listed in
../shared/specs/dell-powerstore/endpoints.md (PowerStore 4.x REST).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, model_validator

from iogate.arrays.base import Capability, Snapshot, Volume
from iogate.arrays.rest_common import ApiCaller, Failure, IncompleteList, protocol_of, redact_sdk_logs, require_sdk
from iogate.arrays.vendor_base import FixedTargetOptions, OwnedVolume, VendorDriver, VendorSdk, register_vendor_remover
from iogate.errors import ArrayError
from iogate.lab import DeviceIdentity, QoS
from iogate.run.ledger import Entry

DRIVER = "powerstore"
PORT_TYPE = {"iscsi": "iSCSI", "nvme-tcp": "NVMe", "fc": "FC"}
PAGE = 2000  # items asked per page (the SDK's MAX_LIMIT); an array that sends fewer says so in content-range
_CONTENT_RANGE = re.compile(r"^\s*(\d+)-(\d+)/(\d+)\s*$")


class PowerStoreOptions(FixedTargetOptions):
    os_type: Literal["Linux", "ESXi", "Windows", "AIX", "HP-UX", "Solaris"] = "Linux"
    # A policy with a replication rule: volumes created with it get a replication session to sync.
    protection_policy_id: str | None = None
    replication_timeout_s: float = Field(default=3600.0, gt=0)

    @model_validator(mode="after")
    def _default_protocol_reachable(self) -> PowerStoreOptions:
        needs = {"iscsi": ("iscsi_portal", "iscsi_target_iqn"), "nvme-tcp": ("nvme_traddr", "nvme_subsys_nqn")}
        missing = [n for n in needs.get(protocol_of(self.default_protocol, self), ()) if getattr(self, n) is None]
        if missing:
            raise ValueError(f"default_protocol {self.default_protocol} needs {', '.join(missing)}")
        return self


def connect(options: PowerStoreOptions) -> Any:
    """A PyPowerStore connection (no request is made until the first call)."""
    require_sdk("PyPowerStore", "PyPowerStore", DRIVER)
    from PyPowerStore.powerstore_conn import PowerStoreConn  # the SDK is an optional extra

    conn = PowerStoreConn(
        options.username,
        options.secret(),
        options.host,
        verify=options.verify_tls,
        application_type="IOGate",
        timeout=options.timeout_s,
        enable_log=False,
        port_no=options.port or 443,
    )
    redact_sdk_logs("PyPowerStore")
    return conn


def classify(exc: BaseException) -> Failure:
    from PyPowerStore.utils.exception import PowerStoreException

    if isinstance(exc, PowerStoreException):
        status = int(exc.status_code) if exc.status_code and str(exc.status_code).isdigit() else None
        kind = {PowerStoreException.TIMEOUT_ERROR: "timed out", PowerStoreException.SSL_ERROR: "TLS error"}.get(exc.err_code, "")
        reason = kind or str(exc.err_text)
        return Failure(status, reason, expired_session=status == 401)
    return Failure(None, type(exc).__name__)


def _caller(array: str, options: PowerStoreOptions, conn: Any) -> ApiCaller:
    def renew() -> None:
        # The SDK only logs in again when its idle timer runs out; an array that ended the session early answers 401.
        conn.provisioning.client.auth_manager.dell_emc_token = None

    return ApiCaller(array, options, classify, renew_session=renew)


def fetch_all(conn: Any, collection: str, query: dict[str, str]) -> list[dict[str, Any]]:
    """Every item of a GET on a collection path, page by page (endpoints.md: `Range: a-b` -> 206 with
    `content-range: a-b/<total>`, 200 when everything fits).

    PyPowerStore's list calls do not do this: with all_pages=False (their default) a 206 answer is
    returned as if it were the whole list, get_host_volume_mapping has no all_pages at all, and
    all_pages=True asks fixed ranges from item 100 on whatever the first page held. So the requests go
    through the SDK's own transport (its headers, session token, TLS and timeout), the ranges are
    asked here, and every page must start where the last ended and say how many items there are.
    """
    client = conn.provisioning.client
    url = f"https://{conn.provisioning.server_ip}/api/rest/{collection}"
    items: list[dict[str, Any]] = []
    while True:
        first = len(items)
        response = client.fetch_response("GET", url, querystring=query, myrange=f"{first}-{first + PAGE - 1}")
        if not client.is_valid_response(response):
            client.raise_http_exception(response)  # a PowerStoreException with the status, as every SDK call raises
        page = response.json()
        if not isinstance(page, list):
            raise IncompleteList(f"the answer is a {type(page).__name__}, not the list of a collection")
        if response.status_code == 200 and first == 0:
            return page  # everything fits
        said = response.headers.get("content-range", "")
        match = _CONTENT_RANGE.match(said) if response.status_code == 206 else None
        if match is None:
            raise IncompleteList(f"asked from item {first}, the array answered {response.status_code} with content-range {said!r}")
        start, end, total = (int(g) for g in match.groups())
        if start != first or end - start + 1 != len(page):
            raise IncompleteList(f"asked from item {first}, the array's page says {said.strip()} but holds {len(page)} items")
        items += page
        if len(items) >= total:
            if len(items) > total:
                raise IncompleteList(f"the pages hold {len(items)} items, the array counted {total}")
            return items


def get_all(api: ApiCaller, conn: Any, what: str, collection: str, **query: str) -> list[dict[str, Any]]:
    """A GET list call, every page of it (fetch_all), retried as a read; the call named in errors is GET /<collection>."""
    return api.call(f"GET /{collection}", what, lambda: fetch_all(conn, collection, query), idempotent=True)


def _find(api: ApiCaller, conn: Any, obj_type: str, name: str) -> str | None:
    """The id of the volume/snapshot/host with exactly this name, or None (the list read to its end)."""
    collection = "host" if obj_type == "host" else "volume"
    found = get_all(api, conn, f"{obj_type} {name}", collection, select="id,name", name=f"eq.{name}")
    ids = [item["id"] for item in found if item.get("name") == name]
    return ids[0] if ids else None


def delete_object(api: ApiCaller, conn: Any, attrs: dict[str, Any]) -> str | None:
    """Remove one journalled object by its name (idempotent); None when it is gone already."""
    obj_type, name = attrs["type"], attrs["name"]
    if not name.startswith(attrs["prefix"]):
        raise ArrayError(f"array {api.array}: refusing to delete {obj_type} {name}: not named with this run's prefix {attrs['prefix']}")
    if obj_type == "mapping":
        volume_id, host_id = _find(api, conn, "volume", name), _find(api, conn, "host", attrs["host"])
        if volume_id is None or host_id is None:
            return None
        maps = get_all(api, conn, f"volume {name}", "host_volume_mapping", select="id,host_id", volume_id=f"eq.{volume_id}")
        if not any(m.get("host_id") == host_id for m in maps):
            return None
        api.call(
            "POST /volume/{id}/detach",
            f"volume {name} host {attrs['host']}",
            lambda: conn.provisioning.unmap_volume_from_host(volume_id, host_id),
        )
        return f"unmapped volume {name} from host {attrs['host']}"
    found = _find(api, conn, obj_type, name)
    if found is None:
        return None
    object_id: str = found
    if obj_type == "host":
        api.call("DELETE /host/{id}", f"host {name}", lambda: conn.provisioning.delete_host(object_id))
    elif obj_type == "snapshot":
        api.call("DELETE /volume/{id}", f"snapshot {name}", lambda: conn.protection.delete_volume_snapshot(object_id))
    else:
        api.call("DELETE /volume/{id}", f"volume {name}", lambda: conn.provisioning.delete_volume(object_id))
    return f"deleted {obj_type} {name} on PowerStore {api.options.management}"


SDK = VendorSdk(connect=lambda options, array: connect(options), caller=_caller, delete=delete_object)


class PowerStore(VendorDriver):
    """ArrayDriver over a Dell PowerStore (see module docstring)."""

    DRIVER: ClassVar[str] = DRIVER
    sdk: ClassVar[VendorSdk] = SDK
    Options: ClassVar[type[BaseModel]] = PowerStoreOptions
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.SNAPSHOT, Capability.REPLICATE})
    capabilities_before_setup: ClassVar[frozenset[Capability]] = frozenset({Capability.SNAPSHOT})  # setup() asks for more
    refusals: ClassVar[dict[Capability, str]] = {
        Capability.RESTORE: "POST /volume/{id}/restore is in endpoints.md only as an SDK constant, with no documented body",
        Capability.DEDUPE: "PowerStore deduplicates inline; endpoints.md has no on-demand dedupe job",
        Capability.MIRROR: "metro volumes are not in endpoints.md",
        Capability.QOS: "QoS is a performance policy object (qos_performance_policy_id) whose calls are not in endpoints.md",
        Capability.METRICS: (
            "PyPowerStore's POST /metrics/generate is not in ../shared/specs/dell-powerstore/endpoints.md, so no contract"
            " test can check its fields or units"
        ),
    }
    version = ""  # the array's release, from setup()
    clock_unread: ClassVar[str] = "endpoints.md lists no call that gives the array's current time"

    # -- lifecycle ----------------------------------------------------------------
    def _discover(self) -> set[Capability]:
        self.version = str(
            self.api.call("GET /software_installed", "array", self._conn.provisioning.get_array_version, idempotent=True) or ""
        )
        if not self.version:
            raise ArrayError(f"array {self.lab.array.name}: GET /software_installed returned no release_version")
        caps = {Capability.SNAPSHOT}
        if self.options.protection_policy_id:
            # The array answers for the replication service; whether a volume has a session is checked at replicate().
            # Only that it answers counts here (nothing acts on the list), so its first page is enough.
            self.api.call("GET /replication_session", "array", lambda: self._conn.protection.get_replication_sessions(), idempotent=True)
            caps.add(Capability.REPLICATE)
        else:
            self._why_not[Capability.REPLICATE] = "the lab names no protection_policy_id whose volumes get a replication session"
        return caps

    def facts(self) -> dict[str, str]:
        # Model and serial live under /appliance and /cluster, which the reference table does not list (see report).
        return {
            "array.driver": DRIVER,
            "array.model": "Dell PowerStore",
            "array.firmware": self.version,
            "array.management": self.options.management,
        }

    # -- hosts ------------------------------------------------------------------------
    def _make_host(self, lab_host: str, protocol: str, initiator: str) -> tuple[str, Entry]:
        name = f"{self.prefix}{lab_host}-{protocol}"[:128]
        entry = self._journal("host", name)
        initiators = [{"port_name": initiator, "port_type": PORT_TYPE[protocol]}]
        os_type = self.options.os_type
        made = self.api.call("POST /host", f"host {name}", lambda: self._conn.provisioning.create_host(name, os_type, initiators))
        host_id = (made or {}).get("id") or _find(self.api, self._conn, "host", name)
        if not host_id:
            raise ArrayError(f"array {self.lab.array.name}: POST /host host {name}: the array returned no id")
        self.run.ledger.created(entry, id=host_id)
        return host_id, entry

    # -- volumes ----------------------------------------------------------------------
    def create_volume(self, name: str, size_bytes: int, qos: QoS | None = None, export: str | None = None) -> Volume:
        protocol, hosts = self._new_volume(name, qos, export)
        array_name = f"{self.prefix}{name}"[:128]
        entry = self._journal("volume", array_name)
        policy = self.options.protection_policy_id
        self.api.call(
            "POST /volume",
            f"volume {array_name}",
            lambda: self._conn.provisioning.create_volume(array_name, size_bytes, protection_policy_id=policy),
        )
        volume_id = _find(self.api, self._conn, "volume", array_name)
        if volume_id is None:
            raise ArrayError(f"array {self.lab.array.name}: POST /volume volume {array_name}: created, but GET /volume does not list it")
        self.run.ledger.created(entry, id=volume_id)
        owned = OwnedVolume(volume=Volume(name, size_bytes, DeviceIdentity(serial="pending")), id=volume_id, entry=entry)
        self._volumes[name] = owned
        lun = None
        for lab_host, initiator in hosts.items():
            host_id = self._host(lab_host, protocol, initiator)
            host_name = self._hosts[(lab_host, protocol)][1].attrs["name"]
            self._map(
                owned,
                "mapping",
                array_name,
                "POST /volume/{id}/attach",
                f"volume {array_name} host {host_name}",
                lambda host_id=host_id: self._conn.provisioning.map_volume_to_host(volume_id, host_id),  # type: ignore[misc]
                host=host_name,
            )
        details = self.api.call(
            "GET /volume/{id}", f"volume {array_name}", lambda: self._conn.provisioning.get_volume_details(volume_id), idempotent=True
        )
        lun = next((m.get("logical_unit_number") for m in details.get("hlu_details") or []), None)
        identity = _identity(protocol, details, self.lab.array.name, array_name)
        owned.volume = Volume(name=name, size_bytes=size_bytes, identity=identity, exports=(self._fixed_export(protocol, lun),))
        return owned.volume

    # -- data services ------------------------------------------------------------------
    def snapshot_create(self, volume: Volume, name: str) -> Snapshot:
        owned = self._owned(volume)
        snap = f"{owned.entry.attrs['name']}.{name}"[:128]
        entry = self._journal("snapshot", snap, volume=owned.entry.attrs["name"])
        owned.snapshots[name] = entry
        made = self.api.call(
            "POST /volume/{id}/snapshot", f"snapshot {snap}", lambda: self._conn.protection.create_volume_snapshot(owned.id, name=snap)
        )
        snap_id = (made or {}).get("id") or _find(self.api, self._conn, "snapshot", snap)
        self.run.ledger.created(entry, id=snap_id)
        return Snapshot(name=name, volume=volume.name, location=snap, evidence={"id": snap_id, "array_name": snap})

    def snapshot_restore(self, volume: Volume, snapshot: Snapshot) -> None:
        raise self._refuse(Capability.RESTORE)

    def dedupe_run(self, volumes: Sequence[Volume] = ()) -> dict[str, Any]:
        raise self._refuse(Capability.DEDUPE)

    def replicate(self, volume: Volume) -> dict[str, Any]:
        """Sync the volume's replication session and wait until the array reports it done."""
        if Capability.REPLICATE not in self.capabilities:
            raise self._refuse(Capability.REPLICATE)
        owned = self._owned(volume)
        what = f"volume {owned.entry.attrs['name']}"
        sessions = get_all(self.api, self._conn, what, "replication_session", select="id", local_resource_id=f"eq.{owned.id}")
        if not sessions:
            raise ArrayError(
                f"array {self.lab.array.name}: {what} has no replication session"
                f" (does policy {self.options.protection_policy_id} replicate?)"
            )
        session_id = sessions[0]["id"]
        before = self._session(session_id, what)
        started = time.monotonic()
        self.api.call(
            "POST /replication_session/{id}/sync",
            f"{what} session {session_id}",
            lambda: self._conn.protection.sync_replication_session(session_id),
        )
        while True:
            state = self._session(session_id, what)
            if state.get("state") == "OK" and state.get("last_sync_timestamp") not in (None, before.get("last_sync_timestamp")):
                break
            if state.get("state") in ("Error", "System_Paused", "Paused"):
                raise ArrayError(f"array {self.lab.array.name}: {what}: replication session {session_id} is {state.get('state')}")
            if time.monotonic() - started > self.options.replication_timeout_s:
                raise ArrayError(
                    f"array {self.lab.array.name}: {what}: sync of session {session_id}"
                    f" not done after {self.options.replication_timeout_s:.0f} s"
                )
            time.sleep(1)
        return {
            "session": session_id,
            "last_sync_timestamp": state.get("last_sync_timestamp"),
            "remote_system_id": state.get("remote_system_id"),
            "duration_s": round(time.monotonic() - started, 3),
        }

    def _session(self, session_id: str, what: str) -> dict[str, Any]:
        found = self.api.call(
            "GET /replication_session/{id}",
            f"{what} session {session_id}",
            lambda: self._conn.protection.get_replication_session_details(session_id),
            idempotent=True,
        )
        return dict(found or {})


register_vendor_remover(PowerStore)


def _identity(protocol: str, details: dict[str, Any], array: str, name: str) -> DeviceIdentity:
    """The identity the host will read: SCSI VPD 0x83 = the volume's wwn, NVMe = its nguid."""
    key = "nguid" if protocol == "nvme-tcp" else "wwn"
    value = str(details.get(key) or "")
    if not value:
        raise ArrayError(
            f"array {array}: GET /volume/{{id}} volume {name}: no {key} in the answer; the host could not be matched by identity"
        )
    if key == "nguid":
        return DeviceIdentity(nguid=value.removeprefix("nguid."))
    return DeviceIdentity(wwn=value)
