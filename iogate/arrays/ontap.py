"""NetApp ONTAP through NetApp's own SDK, netapp-ontap (REST /api).

Volume = a LUN in an existing FlexVol of the lab's SVM, mapped to one igroup per
lab host with its IQN (iSCSI), or an NVMe namespace in that FlexVol mapped to
one subsystem per lab host with its host NQN (NVMe/TCP). Identity: the LUN's
serial -> WWN naa.600a0980 + hex(serial) (the host's WWID is 3600a0980...);
a namespace by its uuid. Snapshot = a FlexVol snapshot (ONTAP snapshots are per
FlexVol); replicate = a SnapMirror transfer on the FlexVol's relationship; dedupe
= the volume efficiency scanner. Capabilities come from the cluster: its licences,
the FlexVol's efficiency settings and its SnapMirror relationship.
Written against the ONTAP REST API as described by the 9.8-era swagger and the
9.19 path list in ../shared/specs/netapp-ontap (SDK netapp-ontap 9.19).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from iogate.arrays import clock
from iogate.arrays.base import ArraySample, Capability, Snapshot, Volume, check_window
from iogate.arrays.clock import ArrayClock
from iogate.arrays.exports import IscsiExport, NvmeTcpExport
from iogate.arrays.rest_common import ApiCaller, Failure, IncompleteList, VendorOptions, number_or_none, redact_sdk_logs, require_sdk
from iogate.arrays.vendor_base import OwnedVolume, VendorDriver, VendorSdk, register_vendor_remover
from iogate.errors import ArrayError
from iogate.lab import DeviceIdentity, Lab, QoS
from iogate.run import Run
from iogate.run.ledger import Entry

DRIVER = "ontap"
NETAPP_NAA = "600a0980"  # NAA 6 + NetApp's IEEE company id 00a098


class OntapOptions(VendorOptions):
    svm: str = Field(min_length=1)
    flexvol: str = Field(min_length=1)  # an existing FlexVol of the SVM that holds the run's LUNs/namespaces
    os_type: str = "linux"
    iscsi_portal: str | None = None  # address:port of an iSCSI LIF of the SVM
    nvme_traddr: str | None = None  # address of an NVMe/TCP LIF of the SVM
    nvme_trsvcid: str = "4420"
    # The lab lets replicate() run transfers of the FlexVol's SnapMirror relationship; REPLICATE is offered when the
    # cluster also has the snapmirror licence and lists a relationship with the FlexVol as its source.
    snapmirror: bool = False
    efficiency_timeout_s: float = Field(default=3600.0, gt=0)
    transfer_timeout_s: float = Field(default=3600.0, gt=0)


def wwn_of_serial(serial: str) -> str:
    """ONTAP LUN serial (12 ASCII characters) -> the SCSI NAA WWN the host reads (its WWID is '3' + this)."""
    return f"naa.{NETAPP_NAA}{serial.encode().hex()}"


def connect(options: OntapOptions) -> Any:
    require_sdk("netapp_ontap", "netapp-ontap", DRIVER)
    from netapp_ontap.host_connection import HostConnection  # the SDK is an optional extra

    conn = HostConnection(
        options.host,
        username=options.username,
        password=options.secret(),
        verify=options.verify_tls,  # type: ignore[arg-type]  # requests takes a CA bundle path too
        port=options.port or 443,
        protocol_timeouts=(options.timeout_s, options.timeout_s),
        poll_interval=1,
    )
    if isinstance(options.verify_tls, str):
        # requests lets REQUESTS_CA_BUNDLE override a session's CA bundle: the lab's bundle must win.
        conn.session.trust_env = False
    redact_sdk_logs("netapp_ontap")
    return conn


def classify(exc: BaseException) -> Failure:
    from netapp_ontap.error import NetAppRestError

    if isinstance(exc, NetAppRestError):
        response = exc.http_err_response
        status = response.http_response.status_code if response is not None else None
        reason = ""
        if response is not None:
            try:
                reason = str(response.http_response.json().get("error", {}).get("message", ""))
            except ValueError:
                reason = ""
        cause = getattr(exc, "cause", None)
        if not reason:
            reason = "timed out" if cause is not None and "Timeout" in type(cause).__name__ else str(exc) or type(cause or exc).__name__
        return Failure(status, reason, expired_session=status == 401)
    return Failure(None, type(exc).__name__)


def _caller(array: str, options: OntapOptions, conn: Any) -> ApiCaller:
    # ONTAP authenticates every request (basic auth): there is no session to renew.
    return ApiCaller(array, options, classify)


def _res(name: str) -> Any:
    import netapp_ontap.resources as resources

    return getattr(resources, name)


def _new(conn: Any, kind: str, *keys: Any, **fields: Any) -> Any:
    """A netapp-ontap resource bound to this connection (the SDK takes the connection by set_connection)."""
    obj = _res(kind)(*keys, **fields)
    obj.set_connection(conn)
    return obj


def fetch_all(conn: Any, kind: str, parents: tuple[Any, ...], query: dict[str, Any]) -> list[Any]:
    """Every record of a GET on an ONTAP collection, as the SDK's resources, page by page.

    ONTAP pages every collection (max_records, and return_timeout: a page ends after 15 s by default)
    and links the next page as `_links.next`; a page says how many records it holds (`num_records`).
    There is no total. netapp-ontap's get_collection/find follow the links but never compare a page's
    num_records with its records; here each page must hold what it says, and a next link that comes
    round again (a loop) is refused. A server that ends a list early without a next link cannot be
    told from a whole list: that only the array's paging itself can promise.
    """
    import requests
    from netapp_ontap.error import NetAppRestError

    cls = _res(kind)
    url = cls.from_dict({}, *parents).get_collection_url(connection=conn)
    params: dict[str, Any] = {"fields": "*", **query}  # find()'s default fields, so the records are whole
    records: list[Any] = []
    seen: set[str] = set()
    while url:
        try:
            response = conn.session.get(url, params=params)
            response.raise_for_status()
        except requests.exceptions.RequestException as erro:
            raise NetAppRestError(cause=erro) from None  # what the SDK raises, so classify() reads its status
        body = response.json()
        page = body.get("records", [])
        if body.get("num_records") != len(page):
            raise IncompleteList(f"page {len(seen) + 1} says num_records {body.get('num_records')!r} but holds {len(page)} records")
        records += page
        link = body.get("_links", {}).get("next", {}).get("href")
        if link and link in seen:
            raise IncompleteList(f"the next link {link} came round again after {len(records)} records")
        seen.add(link or "")
        url, params = (f"{conn.origin}{link}", {}) if link else ("", {})  # the next link carries the query itself
    found = []
    for record in records:
        obj = cls.from_dict(record, *parents)
        obj.set_connection(conn)
        found.append(obj)
    return found


def collection(api: ApiCaller, conn: Any, kind: str, call: str, what: str, *parents: Any, **query: Any) -> list[Any]:
    """A GET list call, every page of it (fetch_all), retried as a read."""
    return api.call(call, what, lambda: fetch_all(conn, kind, parents, query), idempotent=True)


def _find(api: ApiCaller, conn: Any, kind: str, what: str, *parents: Any, call: str = "", **query: Any) -> Any:
    """The one record the query matches (the list read to its end), None for none; more than one is an error."""
    cls = _res(kind)
    call = call or f"GET {cls._path.removeprefix('/api')}"
    found = collection(api, conn, kind, call, what, *parents, **query)
    if len(found) > 1:
        raise ArrayError(f"array {api.array}: {call} {what}: {len(found)} records match, one was expected")
    return found[0] if found else None


def delete_object(api: ApiCaller, conn: Any, attrs: dict[str, Any]) -> str | None:
    """Remove one journalled object by name (idempotent); None when it is gone already."""
    obj_type, name, svm = attrs["type"], attrs["name"], api.options.svm  # type: ignore[attr-defined]
    if not name.rsplit("/", 1)[-1].startswith(attrs["prefix"]):
        raise ArrayError(f"array {api.array}: refusing to delete {obj_type} {name}: not named with this run's prefix {attrs['prefix']}")
    found: Any
    if obj_type in ("lun_map", "subsystem_map"):
        target_kind, group_kind = ("Lun", "Igroup") if obj_type == "lun_map" else ("NvmeNamespace", "NvmeSubsystem")
        target = _find(api, conn, target_kind, f"{obj_type} {name}", name=name, **{"svm.name": svm})
        group = _find(api, conn, group_kind, f"{obj_type} {name}", name=attrs["group"], **{"svm.name": svm})
        if target is None or group is None:
            return None
        map_kind = "LunMap" if obj_type == "lun_map" else "NvmeSubsystemMap"
        keys = {"lun.uuid": target.uuid, "igroup.uuid": group.uuid} if obj_type == "lun_map" else {}
        if obj_type == "subsystem_map":
            keys = {"subsystem.uuid": group.uuid, "namespace.uuid": target.uuid}
        found = _find(api, conn, map_kind, f"{obj_type} {name}", **keys)
        if found is None:
            return None
    elif obj_type == "snapshot":
        flexvol = _find(api, conn, "Volume", f"snapshot {name}", name=attrs["flexvol"], **{"svm.name": svm})
        if flexvol is None:
            return None
        found = _find(
            api, conn, "Snapshot", f"snapshot {name}", flexvol.uuid, call="GET /storage/volumes/{volume.uuid}/snapshots", name=name
        )
    else:
        kind = {"lun": "Lun", "igroup": "Igroup", "namespace": "NvmeNamespace", "subsystem": "NvmeSubsystem"}[obj_type]
        found = _find(api, conn, kind, f"{obj_type} {name}", name=name, **{"svm.name": svm})
    if found is None:
        return None
    path = type(found)._path.removeprefix("/api")
    api.call(f"DELETE {path}", f"{obj_type} {name}", lambda: found.delete())
    return f"deleted {obj_type} {name} on ONTAP {api.options.management}"


SDK = VendorSdk(connect=lambda options, array: connect(options), caller=_caller, delete=delete_object)


class Ontap(VendorDriver):
    """ArrayDriver over a NetApp ONTAP SVM (see module docstring).

    Its host objects (`_hosts`) are one igroup (iSCSI) or NVMe subsystem per lab host and protocol, by name.
    """

    DRIVER: ClassVar[str] = DRIVER
    sdk: ClassVar[VendorSdk] = SDK
    Options: ClassVar[type[BaseModel]] = OntapOptions
    maps_over: ClassVar[tuple[str, ...]] = ("iscsi", "nvme-tcp")
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.SNAPSHOT, Capability.REPLICATE, Capability.DEDUPE, Capability.METRICS}
    )
    refusals: ClassVar[dict[Capability, str]] = {
        Capability.RESTORE: (
            "ONTAP snapshots are per FlexVol: restoring one (PATCH /storage/volumes/{uuid} restore_to) rolls back every LUN"
            " and namespace of the FlexVol, not the one volume"
        ),
        Capability.MIRROR: "SnapMirror Synchronous is not implemented by this driver",
        Capability.QOS: (
            "ONTAP caps a LUN through a QoS policy group (max throughput as IOPS or bytes, not reads and writes apart"
            " as the lab's QoS does), which this driver does not create"
        ),
    }

    def __init__(self, lab: Lab, run: Run) -> None:
        super().__init__(lab, run)
        self.prefix = self.prefix.replace("-", "_")  # LUN and igroup names take no '-' at the start
        self._flexvol_uuid = ""
        self._target_iqn = ""
        self._subsystem_nqns: dict[str, str] = {}

    # -- lifecycle -----------------------------------------------------------------
    def _discover(self) -> set[Capability]:
        cluster = _new(self._conn, "Cluster")
        self.api.call("GET /cluster", "cluster", lambda: cluster.get(fields="name,uuid,version"), idempotent=True)
        version = getattr(getattr(cluster, "version", None), "full", "")
        nodes = collection(self.api, self._conn, "Node", "GET /cluster/nodes", "cluster", fields="name,model,serial_number")
        self._facts = {
            "array.driver": DRIVER,
            "array.model": f"NetApp {', '.join(sorted({str(getattr(n, 'model', '?')) for n in nodes})) or 'ONTAP'}"
            f" (cluster {getattr(cluster, 'name', '?')}, {len(nodes)} nodes)",
            "array.firmware": version,
            "array.serial": ", ".join(str(getattr(n, "serial_number", "")) for n in nodes),
            "array.cluster_uuid": str(getattr(cluster, "uuid", "")),
        }
        licences = collection(self.api, self._conn, "LicensePackage", "GET /cluster/licensing/licenses", "cluster", fields="name,state")
        # A package counts when the cluster says it is compliant (a package without a state is not taken on trust).
        licensed = {lic.name for lic in licences if getattr(lic, "state", None) == "compliant"}
        flexvol = _find(
            self.api,
            self._conn,
            "Volume",
            f"flexvol {self.options.flexvol}",
            name=self.options.flexvol,
            **{"svm.name": self.options.svm},
            fields="uuid,efficiency",
        )
        if flexvol is None:
            raise ArrayError(f"array {self.lab.array.name}: SVM {self.options.svm} has no FlexVol {self.options.flexvol}")
        self._flexvol_uuid = flexvol.uuid
        # RESTORE is not offered: a FlexVol snapshot restore would roll back every LUN of the FlexVol.
        caps = {Capability.SNAPSHOT, Capability.METRICS}  # LUN metrics (a namespace has none: Unsupported)
        if "snapmirror" not in licensed:
            self._why_not[Capability.REPLICATE] = "the cluster lists no compliant snapmirror licence"
        elif not self.options.snapmirror:
            self._why_not[Capability.REPLICATE] = "the lab does not set array.options.snapmirror"
        elif self._relationship() is None:
            self._why_not[Capability.REPLICATE] = f"no SnapMirror relationship has {self.options.svm}:{self.options.flexvol} as its source"
        else:
            caps.add(Capability.REPLICATE)  # licensed, allowed by the lab, and the array has the FlexVol's relationship
        # Dedupe on demand needs dedupe enabled on the FlexVol and an array that reports the efficiency scanner (newer than 9.8).
        efficiency = getattr(flexvol, "efficiency", None)
        has_scanner = getattr(efficiency, "scanner", None) is not None
        dedupe_on = getattr(efficiency, "dedupe", "none") not in ("none", None)
        if has_scanner and dedupe_on:
            caps.add(Capability.DEDUPE)
        elif not dedupe_on:
            self._why_not[Capability.DEDUPE] = f"FlexVol {self.options.flexvol} has dedupe off (efficiency.dedupe none)"
        else:
            self._why_not[Capability.DEDUPE] = (
                "the cluster reports no efficiency scanner on the FlexVol (ONTAP 9.8 and older): no on-demand pass"
            )
        self._licensed = licensed
        return caps

    def array_clock(self) -> ArrayClock:
        """Each node's `date` ("the wall clock time of the node", whole seconds, with its time zone) from
        GET /cluster/nodes, read between two readings of this controller's clock (iogate.arrays.clock)."""

        def read() -> list[datetime]:
            nodes = collection(self.api, self._conn, "Node", "GET /cluster/nodes", "cluster", fields="name,date")
            stamps = []
            for node in nodes:
                stamp = getattr(node, "date", None)
                stamp = datetime.fromisoformat(stamp.replace("Z", "+00:00")) if isinstance(stamp, str) else stamp
                if isinstance(stamp, datetime) and stamp.tzinfo is not None:
                    stamps.append(stamp)
            return stamps

        return clock.measure(read, "GET /cluster/nodes date", resolution_s=1.0)

    # -- igroups / subsystems ---------------------------------------------------------
    def _make_host(self, lab_host: str, protocol: str, initiator: str) -> tuple[str, Entry]:
        name = f"{self.prefix}{lab_host}_{protocol.replace('-', '')}"[:96]
        svm = {"name": self.options.svm}
        if protocol == "iscsi":
            entry = self._journal("igroup", name)
            initiators = [{"name": initiator}]
            group = _new(self._conn, "Igroup", svm=svm, name=name, protocol="iscsi", os_type=self.options.os_type, initiators=initiators)
            self.api.call("POST /protocols/san/igroups", f"igroup {name}", lambda: group.post(hydrate=True))
        else:
            entry = self._journal("subsystem", name)
            group = _new(self._conn, "NvmeSubsystem", svm=svm, name=name, os_type=self.options.os_type, hosts=[{"nqn": initiator}])
            self.api.call("POST /protocols/nvme/subsystems", f"subsystem {name}", lambda: group.post(hydrate=True))
            self._subsystem_nqns[name] = str(getattr(group, "target_nqn", "") or "")
        self.run.ledger.created(entry, uuid=group.uuid)
        return name, entry

    # -- volumes ------------------------------------------------------------------------
    def create_volume(self, name: str, size_bytes: int, qos: QoS | None = None, export: str | None = None) -> Volume:
        protocol, hosts = self._new_volume(name, qos, export)
        path = f"/vol/{self.options.flexvol}/{self.prefix}{name}"
        svm = {"name": self.options.svm}
        obj_type, call = ("lun", "POST /storage/luns") if protocol == "iscsi" else ("namespace", "POST /storage/namespaces")
        entry = self._journal(obj_type, path)
        kind = "Lun" if protocol == "iscsi" else "NvmeNamespace"
        made = _new(self._conn, kind, svm=svm, name=path, os_type=self.options.os_type, space={"size": size_bytes})
        self.api.call(call, f"{obj_type} {path}", lambda: made.post(hydrate=True))
        self.run.ledger.created(entry, uuid=made.uuid)
        owned = OwnedVolume(volume=Volume(name, size_bytes, DeviceIdentity(serial="pending")), entry=entry)
        self._volumes[name] = owned
        for lab_host, initiator in hosts.items():
            group = self._host(lab_host, protocol, initiator)
            if protocol == "iscsi":
                lun_map = _new(self._conn, "LunMap", svm=svm, lun={"name": path}, igroup={"name": group})
                self._map(owned, "lun_map", path, "POST /protocols/san/lun-maps", f"lun {path} igroup {group}", lun_map.post, group=group)
            else:
                ns_map = _new(self._conn, "NvmeSubsystemMap", svm=svm, subsystem={"name": group}, namespace={"name": path})
                what = f"namespace {path} subsystem {group}"
                self._map(owned, "subsystem_map", path, "POST /protocols/nvme/subsystem-maps", what, ns_map.post, group=group)
        owned.volume = Volume(
            name=name, size_bytes=size_bytes, identity=self._identity(protocol, made, path), exports=(self._export(protocol, hosts),)
        )
        return owned.volume

    def _identity(self, protocol: str, made: Any, path: str) -> DeviceIdentity:
        if protocol == "iscsi":
            serial = str(getattr(made, "serial_number", "") or "")
            if not serial:
                lun = _new(self._conn, "Lun", uuid=made.uuid)
                self.api.call("GET /storage/luns/{uuid}", f"lun {path}", lambda: lun.get(fields="serial_number"), idempotent=True)
                serial = str(getattr(lun, "serial_number", "") or "")
            if len(serial) != 12:
                raise ArrayError(
                    f"array {self.lab.array.name}: GET /storage/luns/{{uuid}} lun {path}: serial {serial!r} is not 12 characters"
                )
            return DeviceIdentity(wwn=wwn_of_serial(serial))
        # NVMe: ONTAP reports the namespace's uuid; the host sees it as the namespace UUID (see report).
        return DeviceIdentity(nguid=str(made.uuid))

    def _export(self, protocol: str, hosts: dict[str, str]) -> IscsiExport | NvmeTcpExport:
        if protocol == "iscsi":
            if not self._target_iqn:
                service = _new(self._conn, "IscsiService", svm={"name": self.options.svm})
                found = _find(
                    self.api, self._conn, "IscsiService", f"SVM {self.options.svm}", **{"svm.name": self.options.svm}, fields="target"
                )
                service = found or service
                self._target_iqn = str(getattr(getattr(service, "target", None), "name", "") or "")
            if not (self.options.iscsi_portal and self._target_iqn):
                raise ArrayError(
                    f"array {self.lab.array.name}: iSCSI needs iscsi_portal in the lab and an iSCSI service on SVM {self.options.svm}"
                )
            return IscsiExport(portal=self.options.iscsi_portal, target_iqn=self._target_iqn)
        if not self.options.nvme_traddr:
            raise ArrayError(f"array {self.lab.array.name}: NVMe/TCP needs nvme_traddr in the lab's array options")
        nqn = next(iter(self._subsystem_nqns.values()), "")
        return NvmeTcpExport(traddr=self.options.nvme_traddr, subsys_nqn=nqn, trsvcid=self.options.nvme_trsvcid)

    # -- data services ----------------------------------------------------------------
    def snapshot_create(self, volume: Volume, name: str) -> Snapshot:
        owned = self._owned(volume)
        snap = f"{self.prefix}{volume.name}_{name}"[:255]
        entry = self._journal("snapshot", snap, flexvol=self.options.flexvol)
        owned.snapshots[name] = entry
        made = _new(self._conn, "Snapshot", self._flexvol_uuid, name=snap)
        self.api.call("POST /storage/volumes/{volume.uuid}/snapshots", f"snapshot {snap}", lambda: made.post(hydrate=True))
        self.run.ledger.created(entry, uuid=getattr(made, "uuid", None))
        return Snapshot(name=name, volume=volume.name, location=snap, evidence={"flexvol": self.options.flexvol, "snapshot": snap})

    def snapshot_restore(self, volume: Volume, snapshot: Snapshot) -> None:
        raise self._refuse(Capability.RESTORE)

    def dedupe_run(self, volumes: Sequence[Volume] = ()) -> dict[str, Any]:
        """Start the volume efficiency scanner on the FlexVol (old data too) and wait until it is idle. ONTAP
        dedupes a FlexVol, not a LUN: the pass covers every LUN of the run, whichever `volumes` asked for."""
        if Capability.DEDUPE not in self.capabilities:
            raise self._refuse(Capability.DEDUPE)
        flexvol = _new(self._conn, "Volume", uuid=self._flexvol_uuid)
        what = f"flexvol {self.options.flexvol}"
        used_before = self._used_bytes(what)
        started = time.monotonic()
        flexvol.efficiency = {"scanner": {"state": "active", "scan_old_data": True}}
        self.api.call("PATCH /storage/volumes/{uuid}", what, lambda: flexvol.patch())
        while True:
            probe = _new(self._conn, "Volume", uuid=self._flexvol_uuid)
            self.api.call("GET /storage/volumes/{uuid}", what, lambda probe=probe: probe.get(fields="efficiency,space"), idempotent=True)  # type: ignore[misc]
            state = getattr(getattr(getattr(probe, "efficiency", None), "scanner", None), "state", None)
            if state in ("idle", "inactive"):
                break
            if time.monotonic() - started > self.options.efficiency_timeout_s:
                raise ArrayError(
                    f"array {self.lab.array.name}: {what}: efficiency scanner still {state} after {self.options.efficiency_timeout_s:.0f} s"
                )
            time.sleep(1)
        used_after = getattr(getattr(probe, "space", None), "used", None)
        return {
            "flexvol": self.options.flexvol,
            "scope": f"flexvol {self.options.flexvol} (every LUN in it)",
            "scanner_state": state,
            "duration_s": round(time.monotonic() - started, 3),
            "used_bytes_before": used_before,
            "used_bytes_after": used_after,
            "saved_bytes": used_before - used_after if used_before is not None and used_after is not None else None,
        }

    def _used_bytes(self, what: str) -> int | None:
        probe = _new(self._conn, "Volume", uuid=self._flexvol_uuid)
        self.api.call("GET /storage/volumes/{uuid}", what, lambda: probe.get(fields="space"), idempotent=True)
        return getattr(getattr(probe, "space", None), "used", None)

    def _relationship(self) -> Any:
        """The SnapMirror relationship whose source is the lab's FlexVol, as the array lists it; None when it has none."""
        source = f"{self.options.svm}:{self.options.flexvol}"
        return _find(self.api, self._conn, "SnapmirrorRelationship", f"source {source}", **{"source.path": source})

    def replicate(self, volume: Volume) -> dict[str, Any]:
        """One SnapMirror transfer of the FlexVol that holds the volume, waited for to its end."""
        if Capability.REPLICATE not in self.capabilities:
            raise self._refuse(Capability.REPLICATE)
        self._owned(volume)
        source = f"{self.options.svm}:{self.options.flexvol}"
        relationship = self._relationship()
        if relationship is None:
            raise ArrayError(f"array {self.lab.array.name}: GET /snapmirror/relationships source {source}: no SnapMirror relationship")
        started = time.monotonic()
        transfer = _new(self._conn, "SnapmirrorTransfer", relationship.uuid)
        self.api.call(
            "POST /snapmirror/relationships/{relationship.uuid}/transfers", f"source {source}", lambda: transfer.post(hydrate=True)
        )
        while getattr(transfer, "state", None) not in ("success", "failed", "aborted"):
            if time.monotonic() - started > self.options.transfer_timeout_s:
                raise ArrayError(
                    f"array {self.lab.array.name}: SnapMirror transfer of {source} not done after {self.options.transfer_timeout_s:.0f} s"
                )
            time.sleep(1)
            self.api.call(
                "GET /snapmirror/relationships/{relationship.uuid}/transfers/{uuid}",
                f"source {source}",
                lambda: transfer.get(),
                idempotent=True,
            )
        if transfer.state != "success":
            raise ArrayError(f"array {self.lab.array.name}: SnapMirror transfer of {source} ended {transfer.state}")
        return {
            "relationship": relationship.uuid,
            "transfer": transfer.uuid,
            "bytes_transferred": getattr(transfer, "bytes_transferred", None),
            "duration_s": round(time.monotonic() - started, 3),
        }

    def volume_metrics(self, volume: Volume, start: datetime, end: datetime) -> list[ArraySample]:
        """The LUN's samples stamped within [start, end]: GET /storage/luns/{uuid}/metrics with the
        shortest `interval` that reaches back to `start` (metrics_interval), so the finest sampling
        ONTAP keeps for it; latency is ONTAP's round trip at the LUN, in microseconds."""
        check_window(start, end)
        owned = self._owned(volume)
        if owned.entry.attrs["type"] != "lun":
            raise self._refuse(Capability.METRICS, "namespace metrics are not in the ONTAP 9.8 API description (LUN metrics are)")
        lun_uuid, what = owned.entry.attrs["uuid"], f"lun {owned.entry.attrs['name']}"
        interval = metrics_interval(start, datetime.now(UTC))
        records = collection(
            self.api,
            self._conn,
            "PerformanceLunMetric",
            "GET /storage/luns/{uuid}/metrics",
            what,
            lun_uuid,
            interval=interval,
            fields="timestamp,duration,status,iops,latency",
        )
        samples = [_metric_sample(record, self.lab.array.name, what) for record in records]
        return sorted((s for s in samples if s is not None and start <= s.time <= end), key=lambda s: s.time)


# The `interval` of ONTAP's metrics calls: each covers the most recent span, sampled as the swagger says
# (1h: every 15 s, 1d: 5 min, 1w: 30 min, 1m: 2 h, 1y: a day). A month is taken as 28 days, the shortest.
METRIC_INTERVALS: tuple[tuple[str, timedelta], ...] = (
    ("1h", timedelta(hours=1)),
    ("1d", timedelta(days=1)),
    ("1w", timedelta(weeks=1)),
    ("1m", timedelta(days=28)),
    ("1y", timedelta(days=365)),
)
CLOCK_MARGIN = timedelta(minutes=2)  # the cluster's clock may run behind ours: a span reaching back only just is not asked


def metrics_interval(start: datetime, now: datetime) -> str:
    """The shortest interval whose span, back from now, reaches the window's start (its samples are the finest);
    "1y" for anything older, whose samples from before the year are gone."""
    age = now - start + CLOCK_MARGIN
    return next((name for name, span in METRIC_INTERVALS if age <= span), METRIC_INTERVALS[-1][0])


_ISO_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$")


def duration_s(text: str | None) -> float | None:
    """An ISO-8601 duration as ONTAP writes a sample's (PT15S, PT5M, PT2H, P1D) in seconds; None when absent or other."""
    match = _ISO_DURATION.match(text or "")
    if match is None or not any(match.groups()):
        return None
    days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def _metric_sample(record: Any, array: str, what: str) -> ArraySample | None:
    """One PerformanceLunMetric as an ArraySample; None for a record without a timestamp (it cannot be placed)."""
    stamp = getattr(record, "timestamp", None)
    if isinstance(stamp, str):
        stamp = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if not isinstance(stamp, datetime):
        return None
    if stamp.tzinfo is None:
        raise ArrayError(f"array {array}: GET /storage/luns/{{uuid}}/metrics {what}: timestamp {stamp} has no time zone")
    iops, latency = getattr(record, "iops", None), getattr(record, "latency", None)
    status = str(getattr(record, "status", "") or "")
    return ArraySample(
        time=stamp,
        interval_s=duration_s(getattr(record, "duration", None)),
        read_iops=number_or_none(getattr(iops, "read", None)),
        write_iops=number_or_none(getattr(iops, "write", None)),
        read_latency_us=number_or_none(getattr(latency, "read", None)),  # ONTAP: "round trip latency in microseconds"
        write_latency_us=number_or_none(getattr(latency, "write", None)),
        note="" if status in ("", "ok") else status,
    )


register_vendor_remover(Ontap)
