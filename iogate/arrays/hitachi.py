"""Hitachi VSP block arrays through the Configuration Manager REST API (CMREST), with requests.

Volume = an LDEV of the lab's DP pool, at an id the driver picks from the lab's range and
journals *before* the POST (an LDEV is addressed by id, and its label is set by a second
call: an answer lost after the POST leaves an unlabelled LDEV that only its journalled id
names). FC and iSCSI: one host group (an iSCSI target on an iSCSI port) per port and run,
holding every lab host's WWPNs or IQN, and one LUN per volume in it. NVMe/TCP: the lab's
existing NVM subsystem gets the hosts' NQNs, a namespace per volume and a namespace path
per host. Every write answers 202 with a job, polled to its end (a failed job or one that
outlasts job_timeout_s is an ArrayError naming the job and the object). Snapshot = a Thin
Image pair in the lab's snapshot pool, split at once (autoSplit); restore = its restore
action. The LDEVs get the lab's dataReductionMode; the pool's and array's efficiency ratios
are evidence (`data_reduction_evidence`). Sessions: Basic login -> `Session <token>`, a 401
logs in again once. NFS (the `nfs` connector): an HNAS / VSP One File file system in the
lab's storage pool, mounted and exported from the lab's EVS as /<label> (section C of the
description, X-Api-Key); HNAS snapshots and dedupe are CLI-only and refused. Written against
../shared/specs/hitachi/endpoints.md (sections A and C); see docs/drivers/hitachi.md.
"""

from __future__ import annotations

import atexit
import base64
import json
import re
import time
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import requests
from pydantic import BaseModel, Field, model_validator

from iogate.arrays.base import Capability, Snapshot, Volume
from iogate.arrays.exports import FcExport, IscsiExport, NfsExport, NvmeTcpExport
from iogate.arrays.rest_common import (
    ApiCaller,
    Failure,
    IncompleteList,
    VendorOptions,
    protocol_of,
    redact_sdk_logs,
    register_object_remover,
)
from iogate.arrays.vendor_base import OwnedVolume, VendorDriver, VendorSdk
from iogate.errors import ArrayError
from iogate.lab import DeviceIdentity, Lab, QoS, secrets
from iogate.run.ledger import Entry

DRIVER = "hitachi"
BLOCK_BYTES = 512  # blockCapacity counts 512-byte blocks (endpoints.md, LDEV create)
GONE = "KART30013-E"  # messageId: the object does not exist


class HitachiOptions(VendorOptions):
    # Set when `management` is a Configuration Manager server fronting several arrays: calls go to
    # /objects/storages/<id>/...; left out for the array's embedded REST (/objects/...).
    storage_device_id: str | None = None
    pool_id: int = Field(ge=0)  # the DP pool the run's LDEVs are made in
    ldev_id_first: int = Field(ge=0)  # the first LDEV id the run may use (each volume takes the first free id of the range)
    ldev_id_last: int = Field(ge=0)  # the last LDEV id the run may use (inclusive)
    # dataReductionMode of the run's LDEVs; the pool's and array's ratios are read as evidence
    data_reduction_mode: Literal["disabled", "compression", "compression_deduplication"] = "disabled"
    snapshot_pool_id: int | None = None  # the Thin Image (HTI) pool; snapshots are offered only with one
    host_mode: str = "LINUX/IRIX"  # hostMode of the host groups the run makes
    fc_ports: list[str] = Field(default_factory=list)  # target ports (e.g. CL1-A) a volume is mapped on over FC
    fc_wwpns: dict[str, list[str]] = Field(default_factory=dict)  # lab host -> its HBA port WWPNs (16 hex digits)
    iscsi_port: str | None = None  # the iSCSI target port (e.g. CL1-B); its address is read from the array
    nvm_subsystem_id: int | None = None  # an existing NVM subsystem, with its NVMe/TCP ports, that gets the run's namespaces
    nvme_traddr: str | None = None  # address of an NVMe/TCP port of that subsystem
    nvme_trsvcid: str = "4420"  # TCP port of that NVMe/TCP port
    nvme_subsys_nqn: str | None = None  # that subsystem's NQN
    # HNAS / VSP One File: NFS exports of file systems (the `nfs` connector); all five are needed for it.
    hnas_management: str | None = None  # host[:port] of the HNAS / VSP One File REST (SMU or node; port 8444 when none is given)
    hnas_api_key: str | None = None  # its API key, by reference (${env:NAME} or ${file:PATH}); sent as X-Api-Key
    hnas_api_version: Literal["v7", "v8"] = "v7"  # the REST version the SMU serves (/v7/storage or /v8/storage)
    hnas_virtual_server_id: str | None = None  # the EVS (virtual server) that serves the run's NFS exports
    hnas_storage_pool_id: str | None = None  # the storage pool the run's file systems are made in
    nfs_server: str | None = None  # the EVS address the hosts mount the exports from
    job_poll_s: float = Field(default=1.0, ge=0)  # seconds between two reads of a job's state
    job_timeout_s: float = Field(default=600.0, gt=0)  # the longest one job (a write) may take

    @model_validator(mode="after")
    def _range(self) -> HitachiOptions:
        if self.ldev_id_last < self.ldev_id_first:
            raise ValueError(f"ldev_id_last {self.ldev_id_last} is below ldev_id_first {self.ldev_id_first}")
        wrong = [w for ws in self.fc_wwpns.values() for w in ws if len(w) != 16 or any(c not in "0123456789abcdefABCDEF" for c in w)]
        if wrong:
            raise ValueError(f"fc_wwpns: {', '.join(wrong)}: a WWPN is 16 hex digits without separators")
        if self.hnas_api_key is not None and not secrets.is_reference(self.hnas_api_key):
            raise ValueError("hnas_api_key: give it by reference, ${env:NAME} or ${file:PATH}, never inline")
        return self

    def api_key(self) -> str:
        """The HNAS API key (resolved now, registered for redaction)."""
        try:
            return secrets.resolve(self.hnas_api_key or "")
        except secrets.SecretError as exc:
            raise ArrayError(f"array credentials: {exc}") from None


class HitachiError(Exception):
    """An answer of the array outside 2xx (or a job that failed): its status and what its error body says."""

    def __init__(self, status: int | None, reason: str, message_id: str = "") -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.message_id = message_id


def _error_text(body: Any) -> tuple[str, str]:
    """(messageId, "messageId message (SSB1 x, SSB2 y)") of a CMREST error body."""
    if not isinstance(body, dict):
        return "", str(body or "")[:200]
    message_id = str(body.get("messageId") or "")
    code = body.get("errorCode") if isinstance(body.get("errorCode"), dict) else {}
    ssb = f" (SSB1 {code.get('SSB1')}, SSB2 {code.get('SSB2')})" if code.get("SSB1") else ""
    return message_id, f"{message_id} {body.get('message') or ''}{ssb}".strip()


class Cmrest:
    """One CMREST session: the base URL of the array's objects, the token, and the HTTP calls."""

    def __init__(self, options: HitachiOptions) -> None:
        self.options = options
        self.http = requests.Session()
        self.http.verify = options.verify_tls
        self.http.trust_env = False  # REQUESTS_CA_BUNDLE must not override the lab's bundle
        self.root = f"https://{options.management}/ConfigurationManager/v1/objects"
        self.objects = self.root
        if options.storage_device_id:
            self.objects += f"/storages/{options.storage_device_id}"
        self.session_id = ""
        self._nas: Hnas | None = None

    @property
    def nas(self) -> Hnas:
        """The HNAS REST of the lab (made on first use: a lab without NFS never needs its key)."""
        if self._nas is None:
            self._nas = Hnas(self.options)
        return self._nas

    def login(self) -> None:
        """POST sessions with Basic credentials -> {token, sessionId}; later calls send `Session <token>`."""
        basic = base64.b64encode(f"{self.options.username}:{self.options.secret()}".encode()).decode()
        self.http.headers.pop("Authorization", None)
        body = self._send("POST", "sessions", None, None, {"Authorization": f"Basic {basic}"})
        token = str((body or {}).get("token") or "")
        if not token:
            raise HitachiError(None, "the login answer holds no token")
        self.session_id = str(body.get("sessionId") or "")
        self.http.headers["Authorization"] = f"Session {token}"

    def logout(self) -> None:
        """DELETE sessions/<sessionId> (the array answers with a job; its end is not waited for)."""
        if self.session_id:
            session, self.session_id = self.session_id, ""
            self._send("DELETE", f"sessions/{session}", None, None, {})

    def get(self, path: str, **query: Any) -> Any:
        return self._send("GET", path, None, query, {})

    def storages(self) -> Any:
        """GET /ConfigurationManager/v1/objects/storages: the arrays a Configuration Manager server fronts."""
        return self._send("GET", "storages", None, None, {}, base=self.root)

    def write(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """A write: the array answers 202 with its job (endpoints.md, async jobs)."""
        job = self._send(method, path, body, None, {})
        if not isinstance(job, dict) or "jobId" not in job:
            raise HitachiError(None, f"the answer to {method} {path} is not a job")
        return job

    def _send(self, method: str, path: str, body: Any, query: dict[str, Any] | None, headers: dict[str, str], base: str = "") -> Any:
        headers = {"Accept": "application/json", **headers}
        if body is not None:
            headers["Content-Type"] = "application/json"
        response = self.http.request(
            method, f"{base or self.objects}/{path}", json=body, params=query or None, headers=headers, timeout=self.options.timeout_s
        )
        if response.status_code >= 400:
            try:
                payload = response.json()
            except ValueError:
                payload = response.text
            message_id, reason = _error_text(payload)
            raise HitachiError(response.status_code, reason or response.reason, message_id)
        if not response.content:
            return None
        return response.json()


class Hnas:
    """The HNAS / VSP One File REST (endpoints.md section C): `https://<host>:8444/v7|v8/storage/`, X-Api-Key on
    every call; success is 200/201/204, an error body is {errorMsg, errorDetail: {message}}."""

    def __init__(self, options: HitachiOptions) -> None:
        self.options = options
        host = options.hnas_management or ""
        self.base = f"https://{host if ':' in host else host + ':8444'}/{options.hnas_api_version}/storage"
        self.http = requests.Session()
        self.http.verify = options.verify_tls
        self.http.trust_env = False
        self.http.headers.update({"X-Api-Key": options.api_key(), "Accept": "application/json"})

    def send(self, method: str, path: str, body: Any = None, **query: Any) -> Any:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        response = self.http.request(
            method, f"{self.base}/{path}", json=body, params=query or None, headers=headers, timeout=self.options.timeout_s
        )
        if response.status_code >= 400:
            try:
                payload = response.json()
            except ValueError:
                payload = {}
            detail = payload.get("errorDetail") if isinstance(payload, dict) else None
            reason = " ".join(str(x) for x in (
                payload.get("errorMsg") if isinstance(payload, dict) else "",
                detail.get("message") if isinstance(detail, dict) else "",
            ) if x) or response.reason
            raise HitachiError(response.status_code, reason)
        return response.json() if response.content else None


def items_of(answer: Any) -> list[dict[str, Any]]:
    """The items of an HNAS list: the answer's one list (endpoints.md does not name its key); anything else is refused."""
    if isinstance(answer, list):
        return answer
    lists = [v for v in answer.values() if isinstance(v, list)] if isinstance(answer, dict) else []
    if len(lists) != 1:
        raise IncompleteList("the HNAS answer holds no single list of items")
    return lists[0]


def classify(exc: BaseException) -> Failure:
    if isinstance(exc, HitachiError):
        return Failure(exc.status, exc.reason, expired_session=exc.status == 401)
    if isinstance(exc, requests.Timeout):
        return Failure(None, "timed out")
    return Failure(None, type(exc).__name__)


def connect(options: HitachiOptions, array: str) -> Cmrest:
    redact_sdk_logs("urllib3", "requests")
    conn = Cmrest(options)
    try:
        conn.login()
    except ArrayError:
        raise  # an unresolved credential reference says what to fix
    except Exception as exc:
        raise ArrayError(f"array {array}: POST /sessions: login failed: {classify(exc).reason}") from None
    return conn


def _caller(array: str, options: HitachiOptions, conn: Cmrest) -> ApiCaller:
    return ApiCaller(array, options, classify, renew_session=conn.login)


def data_of(answer: Any) -> list[dict[str, Any]]:
    """The items of a collection GET: `{"data": [...]}` (endpoints.md: everything in one answer, except LDEVs)."""
    items = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(items, list):
        raise IncompleteList("the answer of a collection holds no data list")
    return items


def listing(api: ApiCaller, conn: Cmrest, what: str, path: str, **query: Any) -> list[dict[str, Any]]:
    """A collection GET, retried as a read; the call named in errors is GET /<path>."""
    return api.call(f"GET /{path}", what, lambda: data_of(conn.get(path, **query)), idempotent=True)


def run_job(api: ApiCaller, conn: Cmrest, call: str, what: str, method: str, path: str, body: dict[str, Any] | None) -> list[str]:
    """One write (never repeated) and its job polled to the end: the job's affectedResources.

    A job that ends with a state other than Succeeded, or is not Completed within job_timeout_s,
    is an ArrayError naming the call, the object and the job."""
    options: HitachiOptions = api.options  # type: ignore[assignment]
    job = api.call(call, what, lambda: conn.write(method, path, body))
    job_id = job["jobId"]
    started = time.monotonic()
    while job.get("status") != "Completed":
        if time.monotonic() - started > options.job_timeout_s:
            raise ArrayError(
                f"array {api.array}: {call} {what}: job {job_id} still {job.get('status')!r} after {options.job_timeout_s:g} s"
            )
        time.sleep(options.job_poll_s)
        job = api.call(f"GET /jobs/{job_id}", what, lambda: conn.get(f"jobs/{job_id}"), idempotent=True)
    if job.get("state") != "Succeeded":
        _, reason = _error_text(job.get("error"))
        raise ArrayError(f"array {api.array}: {call} {what}: job {job_id} ended {job.get('state')!r}: {reason or 'no error given'}")
    return [str(r) for r in job.get("affectedResources") or []]


def _last_segment(resources: list[str], api: ApiCaller, call: str, what: str) -> str:
    if not resources:
        raise ArrayError(f"array {api.array}: {call} {what}: the job names no affected resource")
    return resources[0].rstrip("/").rsplit("/", 1)[-1]


def _gone(exc: ArrayError) -> bool:
    return GONE in str(exc) or "HTTP 404" in str(exc)


def _get_or_none(api: ApiCaller, conn: Cmrest, call: str, what: str, path: str) -> dict[str, Any] | None:
    try:
        return dict(api.call(call, what, lambda: conn.get(path), idempotent=True) or {})
    except ArrayError as exc:
        if _gone(exc):
            return None
        raise


def delete_object(api: ApiCaller, conn: Cmrest, attrs: dict[str, Any]) -> str | None:
    """Remove one journalled object (idempotent); None when it is gone already.

    Every entry's name (an LDEV label, a host group or snapshot group name) starts with the run's
    prefix; an LDEV is deleted only at its journalled id and in its journalled pool, and only while
    its label is the journalled one or empty (the POST made it, the answer was lost before the label)."""
    obj_type, name = attrs["type"], attrs["name"]
    if not name.startswith(attrs["prefix"]):
        raise ArrayError(f"array {api.array}: refusing to delete {obj_type} {name}: not named with this run's prefix {attrs['prefix']}")
    if obj_type == "ldev":
        ldev_id = attrs["ldev_id"]
        found = _get_or_none(api, conn, "GET /ldevs/{id}", f"ldev {ldev_id} ({name})", f"ldevs/{ldev_id}")
        if found is None or found.get("emulationType") == "NOT DEFINED":
            return None
        if found.get("label") not in ("", None, name) or found.get("poolId") != attrs["pool_id"]:
            raise ArrayError(
                f"array {api.array}: refusing to delete ldev {ldev_id}: its label {found.get('label')!r} and pool"
                f" {found.get('poolId')} are not the journalled {name!r} and {attrs['pool_id']}"
            )
        run_job(api, conn, "DELETE /ldevs/{id}", f"ldev {ldev_id} ({name})", "DELETE", f"ldevs/{ldev_id}", None)
        return f"deleted ldev {ldev_id} ({name}) on Hitachi {api.options.management}"
    if obj_type == "lun":
        port, group = attrs["port"], attrs["group"]
        luns = listing(api, conn, f"ldev {attrs['ldev_id']} on {port},{group}", "luns", portId=port, hostGroupNumber=group)
        mine = [lun for lun in luns if lun.get("ldevId") == attrs["ldev_id"]]
        for lun in mine:
            lun_id = f"{port},{group},{lun['lun']}"
            run_job(api, conn, "DELETE /luns/{id}", f"lun {lun_id} ({name})", "DELETE", f"luns/{lun_id}", None)
        return f"unmapped {name} from {port},{group}" if mine else None
    if obj_type == "host_group":
        port = attrs["port"]
        groups = listing(api, conn, f"host group {name}", "host-groups", portId=port)
        mine = [g for g in groups if g.get("hostGroupName") == name and g.get("portId", port) == port]
        for group in mine:
            group_id = f"{port},{group['hostGroupNumber']}"
            run_job(api, conn, "DELETE /host-groups/{id}", f"host group {name}", "DELETE", f"host-groups/{group_id}", None)
        return f"deleted host group {name} on port {port}" if mine else None
    if obj_type == "host_nqn":
        ssid, nqn = attrs["subsystem"], attrs["nqn"]
        listed = listing(api, conn, f"host nqn {nqn}", "host-nqns", nvmSubsystemId=ssid)
        if not any(h.get("hostNqn") == nqn for h in listed):
            return None
        run_job(api, conn, "DELETE /host-nqns/{id}", f"host nqn {nqn}", "DELETE", f"host-nqns/{ssid},{nqn}", None)
        return f"removed host nqn {nqn} from NVM subsystem {ssid}"
    if obj_type in ("namespace", "namespace_path"):
        # The LDEV says which namespace it is (namespaceId, nvmSubsystemId): also after a lost answer.
        ldev_id, ssid = attrs["ldev_id"], attrs["subsystem"]
        found = _get_or_none(api, conn, "GET /ldevs/{id}", f"ldev {ldev_id} ({name})", f"ldevs/{ldev_id}")
        nsid = (found or {}).get("namespaceId")
        if nsid is None or str((found or {}).get("nvmSubsystemId")) != str(ssid):
            return None
        path = f"namespace-paths/{ssid},{attrs['nqn']},{nsid}" if obj_type == "namespace_path" else f"namespaces/{ssid},{nsid}"
        what = f"{obj_type.replace('_', ' ')} {path.split('/', 1)[1]} ({name})"
        try:
            run_job(api, conn, f"DELETE /{path.split('/')[0]}/{{id}}", what, "DELETE", path, None)
        except ArrayError as exc:
            if _gone(exc):
                return None
            raise
        return f"deleted {what}"
    if obj_type == "snapshot":
        pvol = attrs["pvol"]
        pairs = listing(api, conn, f"snapshot {name}", "snapshots", pvolLdevId=pvol)
        mine = [p for p in pairs if p.get("snapshotGroupName") == name]
        for pair in mine:
            pair_id = f"{pvol},{pair['muNumber']}"
            run_job(api, conn, "DELETE /snapshots/{id}", f"snapshot {pair_id} ({name})", "DELETE", f"snapshots/{pair_id}", None)
        return f"deleted snapshot {name} of ldev {pvol}" if mine else None
    if obj_type == "nfs_export":
        evs = attrs["virtual_server"]
        shares = api.call("GET /virtual-servers/{id}/nfs", f"nfs export {name}",
                          lambda: items_of(conn.nas.send("GET", f"virtual-servers/{evs}/nfs", name=f"/{name}")), idempotent=True)
        mine = [x for x in shares if x.get("name") == f"/{name}"]
        for share in mine:
            share_id = share["objectId"]
            api.call("DELETE /filesystem-shares/nfs/{id}", f"nfs export {name}",
                     lambda share_id=share_id: conn.nas.send("DELETE", f"filesystem-shares/nfs/{share_id}"))
        return f"deleted NFS export /{name}" if mine else None
    if obj_type == "filesystem":
        found = api.call("GET /filesystems", f"file system {name}", lambda: items_of(conn.nas.send("GET", "filesystems", label=name)),
                         idempotent=True)
        mine = [x for x in found if x.get("label") == name]
        for fs in mine:
            fs_id = fs["objectId"]
            api.call("POST /filesystems/{id}/unmount", f"file system {name}",
                     lambda fs_id=fs_id: conn.nas.send("POST", f"filesystems/{fs_id}/unmount"))
            api.call("DELETE /filesystems/{id}", f"file system {name}", lambda fs_id=fs_id: conn.nas.send("DELETE", f"filesystems/{fs_id}"))
        return f"deleted file system {name}" if mine else None
    raise ArrayError(f"array {api.array}: no way to delete a {obj_type} ({name})")


SDK = VendorSdk(connect=lambda options, array: connect(options, array), caller=_caller, delete=delete_object)

# `iogate cleanup` removes entry after entry: one session per array for all of them (an array keeps a
# limited number of sessions), logged out when the process ends.
_CLEANUP_SESSIONS: dict[str, Cmrest] = {}  # by the entry's options (credential references, never values)


def _remove(options: dict[str, Any], attrs: dict[str, Any]) -> str | None:
    parsed = HitachiOptions.model_validate(options)
    array = f"{DRIVER} {parsed.management}"
    key = json.dumps(options, sort_keys=True)
    if key not in _CLEANUP_SESSIONS:
        _CLEANUP_SESSIONS[key] = connect(parsed, array)
    conn = _CLEANUP_SESSIONS[key]
    return delete_object(_caller(array, parsed, conn), conn, attrs)


@atexit.register
def _log_out_cleanup_sessions() -> None:
    for conn in _CLEANUP_SESSIONS.values():
        _log_out(conn)
    _CLEANUP_SESSIONS.clear()


def _log_out(conn: Cmrest) -> None:
    """DELETE sessions/<id>, best effort: a session the array already ended is no failure of the run."""
    try:
        conn.logout()
    except Exception:
        pass


def _refused(exc: ArrayError) -> bool:
    """The array said no to a write (HTTP 4xx, or its job ended Failed): nothing was made."""
    return bool(re.search(r": (HTTP 4\d\d|job \d+ ended 'Failed')", str(exc)))


class Hitachi(VendorDriver):
    """ArrayDriver over a Hitachi VSP (see module docstring); `_conn` is the Cmrest session."""

    DRIVER: ClassVar[str] = DRIVER
    sdk: ClassVar[VendorSdk] = SDK
    Options: ClassVar[type[BaseModel]] = HitachiOptions
    maps_over: ClassVar[tuple[str, ...]] = ("fc", "iscsi", "nvme-tcp")
    file_connectors: ClassVar[tuple[str, ...]] = ("nfs",)  # an HNAS file system exported over NFS (iogate.lab.support)
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.SNAPSHOT, Capability.RESTORE, Capability.COMPRESSION})
    refusals: ClassVar[dict[Capability, str]] = {
        Capability.DEDUPE: (
            "a VSP deduplicates in the background per LDEV (dataReductionMode); ../shared/specs/hitachi/endpoints.md has no"
            " call that runs a pass on demand (the ratios are read as evidence instead); HNAS dedupe is CLI-only in public clients"
        ),
        Capability.REPLICATE: "remote copy pairs need a second array's session (Remote-Authorization), which this driver does not drive",
        Capability.MIRROR: "GAD pairs (remote-mirror-copypairs, replicationType GAD) are not implemented by this driver",
        Capability.QOS: (
            "set-qos takes one IOPS or MB/s limit per call and endpoints.md names no key, so a read/write cap cannot be told"
            " from a total one"
        ),
        Capability.METRICS: (
            "endpoints.md: no public CMREST call reads per-LDEV IOPS or latency (Hitachi serves them through Export Tool and"
            " Ops Center Analyzer, whose APIs are not public); the host's figures stand alone"
        ),
    }
    clock_unread: ClassVar[str] = "endpoints.md lists no call that gives the array's current time"

    def __init__(self, lab: Lab, run: Any) -> None:
        super().__init__(lab, run)
        self._groups: dict[tuple[str, str], int] = {}  # (protocol, port) -> the run's host group number there
        self._host_nqns: set[str] = set()

    @classmethod
    def lab_problems(cls, lab: Lab, options: Any) -> list[tuple[tuple[str | int, ...], str]]:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        needs = {
            "fc": ("fc_ports", "fc_wwpns"),
            "iscsi": ("iscsi_port",),
            "nvme-tcp": ("nvm_subsystem_id", "nvme_traddr", "nvme_subsys_nqn"),
        }
        hnas = ("hnas_management", "hnas_api_key", "hnas_virtual_server_id", "hnas_storage_pool_id", "nfs_server")
        for index, protocol in enumerate(lab.protocols):
            if protocol.connector == "nfs":
                missing_nas = [n for n in hnas if not getattr(options, n)]
                if missing_nas:
                    problems.append((("protocols", index, "connector"),
                                     f"nfs on the hitachi driver needs array.options {' and '.join(missing_nas)} (HNAS / VSP One File)"))
                continue
            try:
                block = protocol_of(protocol.connector, options)
            except ArrayError:
                continue  # the connector check says so
            missing = [n for n in needs.get(block, ()) if not getattr(options, n)]
            if missing:
                problems.append((("protocols", index, "connector"),
                                 f"{protocol.connector} on the hitachi driver needs array.options {' and '.join(missing)}"))
            elif block == "fc":
                without = [h.name for h in lab.hosts if not options.fc_wwpns.get(h.name)]
                if without:
                    problems.append((("array", "options", "fc_wwpns"), f"host(s) {', '.join(without)} have no WWPNs for FC"))
        return problems

    # -- lifecycle -----------------------------------------------------------------
    def _discover(self) -> set[Capability]:
        wanted = self.options.storage_device_id
        info: dict[str, Any]
        if not wanted:
            info = dict(self.api.call("GET /storages/instance", "array", lambda: self._conn.get("storages/instance"), idempotent=True)
                        or {})
        else:  # a Configuration Manager server: its list of the arrays it fronts
            listed = self.api.call("GET /storages", "array", lambda: data_of(self._conn.storages()), idempotent=True)
            info = next((s for s in listed if s.get("storageDeviceId") == wanted), {})
            if not info:
                raise ArrayError(f"array {self.lab.array.name}: GET /storages: the Configuration Manager server fronts no array {wanted}")
        self._facts = {
            "array.driver": DRIVER,
            "array.model": f"Hitachi {info.get('model') or 'VSP'}",
            "array.firmware": str(info.get("dkcMicroVersion") or ""),
            "array.serial": str(info.get("serialNumber") or ""),
            "array.id": str(info.get("storageDeviceId") or self.options.storage_device_id or ""),
            "array.data_reduction_mode": self.options.data_reduction_mode,
        }
        pool = self._pool(self.options.pool_id)
        if pool is None:
            raise ArrayError(f"array {self.lab.array.name}: GET /pools/{{id}}: no pool {self.options.pool_id}")
        caps: set[Capability] = set()
        if self.options.snapshot_pool_id is not None:
            if self._pool(self.options.snapshot_pool_id) is None:
                raise ArrayError(f"array {self.lab.array.name}: GET /pools/{{id}}: no snapshot pool {self.options.snapshot_pool_id}")
            caps |= {Capability.SNAPSHOT, Capability.RESTORE}
        else:
            for capability in (Capability.SNAPSHOT, Capability.RESTORE):
                self._why_not[capability] = "the lab names no snapshot_pool_id (a Thin Image pool)"
        if self.options.data_reduction_mode != "disabled":
            caps.add(Capability.COMPRESSION)
        else:
            self._why_not[Capability.COMPRESSION] = "the lab sets data_reduction_mode: disabled"
        return caps

    def _pool(self, pool_id: int) -> dict[str, Any] | None:
        return _get_or_none(self.api, self._conn, "GET /pools/{id}", f"pool {pool_id}", f"pools/{pool_id}")

    def setup(self) -> None:
        super().setup()
        self._facts["array.data_reduction_ratio"] = self._drr_fact()
        for host, wwpns in self.options.fc_wwpns.items():
            self._initiators.setdefault(host, {})["fc"] = ",".join(w.lower() for w in wwpns)

    def teardown(self) -> None:
        super().teardown()
        self._groups.clear()
        self._host_nqns.clear()
        _log_out(self._conn)  # the array keeps a limited number of sessions

    def _job(self, call: str, what: str, method: str, path: str, body: dict[str, Any] | None) -> list[str]:
        return run_job(self.api, self._conn, call, what, method, path, body)

    def _make_host(self, lab_host: str, protocol: str, initiator: str) -> tuple[str, Entry]:
        raise NotImplementedError("the hitachi driver makes one host group per port, not one host per lab host")

    # -- volumes -------------------------------------------------------------------
    def _free_ldev_id(self) -> int:
        """The first undefined LDEV id of the lab's range (GET ldevs?ldevOption=undefined from its first id)."""
        first, last = self.options.ldev_id_first, self.options.ldev_id_last
        found = listing(self.api, self._conn, f"a free ldev id from {first}", "ldevs", ldevOption="undefined", headLdevId=first, count=1)
        ldev_id = found[0].get("ldevId") if found else None
        if not isinstance(ldev_id, int) or not first <= ldev_id <= last:
            raise ArrayError(f"array {self.lab.array.name}: no free LDEV id in the lab's range {first}..{last}")
        return ldev_id

    def create_volume(self, name: str, size_bytes: int, qos: QoS | None = None, export: str | None = None) -> Volume:
        if export == "nfs":
            return self._create_file_system(name, size_bytes, qos)
        protocol, hosts = self._new_volume(name, qos, export)
        if size_bytes % BLOCK_BYTES:
            raise ArrayError(f"array {self.lab.array.name}: volume {name}: {size_bytes} bytes is not a whole number of 512-byte blocks")
        label = f"{self.prefix}{name}"[:32]
        ldev_id = self._free_ldev_id()
        what = f"ldev {ldev_id} ({label})"
        entry = self._journal("ldev", label, ldev_id=ldev_id, pool_id=self.options.pool_id)
        body: dict[str, Any] = {"ldevId": ldev_id, "poolId": self.options.pool_id, "blockCapacity": size_bytes // BLOCK_BYTES}
        if self.options.data_reduction_mode != "disabled":
            body["dataReductionMode"] = self.options.data_reduction_mode
        try:
            affected = self._job("POST /ldevs", what, "POST", "ldevs", body)
        except ArrayError as exc:
            if _refused(exc):  # e.g. another run took the id first (SSB 2E22,0001): the id is not ours to clean up
                self.run.ledger.released(entry)
            raise
        made = _last_segment(affected, self.api, "POST /ldevs", what)
        if made != str(ldev_id):
            raise ArrayError(f"array {self.lab.array.name}: POST /ldevs {what}: the job made ldev {made}, not {ldev_id}")
        self.run.ledger.created(entry)
        owned = OwnedVolume(volume=Volume(name, size_bytes, DeviceIdentity(serial="pending")), entry=entry, id=str(ldev_id))
        self._volumes[name] = owned
        self._job("PUT /ldevs/{id}", what, "PUT", f"ldevs/{ldev_id}", {"label": label})
        if protocol == "nvme-tcp":
            export_record: FcExport | IscsiExport | NvmeTcpExport = self._map_nvme(owned, hosts)
        else:
            export_record = self._map_scsi(owned, protocol, hosts)
        details = self.api.call("GET /ldevs/{id}", what, lambda: self._conn.get(f"ldevs/{ldev_id}"), idempotent=True) or {}
        naa = str(details.get("naaId") or "").lower()
        if len(naa) != 32:
            raise ArrayError(f"array {self.lab.array.name}: GET /ldevs/{{id}} {what}: naaId {naa!r} is not 32 hex digits")
        # SCSI: VPD 0x83 is the NAA id. NVMe: taken to be the namespace's NGUID (docs/drivers/hitachi.md: to confirm on an array).
        identity = DeviceIdentity(nguid=naa) if protocol == "nvme-tcp" else DeviceIdentity(wwn=f"naa.{naa}")
        owned.volume = Volume(name=name, size_bytes=size_bytes, identity=identity, exports=(export_record,))
        return owned.volume

    def _create_file_system(self, name: str, size_bytes: int, qos: QoS | None) -> Volume:
        """An HNAS file system of the volume's size in the lab's storage pool, mounted, exported over NFS as /<label>."""
        if qos is not None:
            raise self._refuse(Capability.QOS)
        if name in self._volumes:
            raise ArrayError(f"array {self.lab.array.name}: volume {name} exists already")
        options = self.options
        if not (options.hnas_management and options.hnas_api_key and options.hnas_virtual_server_id and options.hnas_storage_pool_id
                and options.nfs_server):
            raise ArrayError(f"array {self.lab.array.name}: NFS needs the lab's hnas_* options and nfs_server (HNAS / VSP One File)")
        nas, evs = self._conn.nas, options.hnas_virtual_server_id
        label = f"{self.prefix}{name}"[:32]
        what = f"file system {label}"
        entry = self._journal("filesystem", label)
        body = {"label": label, "virtualServerId": evs, "storagePoolId": options.hnas_storage_pool_id, "capacity": size_bytes}
        made = self.api.call("POST /filesystems", what, lambda: nas.send("POST", "filesystems", body)) or {}
        fs_id = str((made.get("filesystem") or {}).get("objectId") or "")
        if not fs_id:
            raise ArrayError(f"array {self.lab.array.name}: POST /filesystems {what}: the answer holds no filesystem.objectId")
        self.run.ledger.created(entry, fs_id=fs_id)
        owned = OwnedVolume(volume=Volume(name, size_bytes, DeviceIdentity(serial="pending")), entry=entry, id=fs_id)
        self._volumes[name] = owned
        self.api.call("POST /filesystems/{id}/mount", what, lambda: nas.send("POST", f"filesystems/{fs_id}/mount"))
        share = self._journal("nfs_export", label, virtual_server=evs)
        owned.maps.append(share)
        body = {"virtualServerId": evs, "name": f"/{label}", "filesystemId": fs_id, "filesystemPath": "/", "ensurePathExists": True}
        self.api.call("POST /filesystem-shares/nfs", f"nfs export /{label}", lambda: nas.send("POST", "filesystem-shares/nfs", body))
        self.run.ledger.created(share)
        server = options.nfs_server
        owned.volume = Volume(name=name, size_bytes=size_bytes, identity=DeviceIdentity(nfs_export=f"{server}:/{label}"),
                              exports=(NfsExport(server=server, path=f"/{label}"),))
        return owned.volume

    def _mapping(self, owned: OwnedVolume, obj_type: str, call: str, what: str, path: str, body: dict[str, Any], *, first: bool = False,
                 **attrs: Any) -> list[str]:
        """Journal a mapping of the volume, make it (one job), record it made; the job's affected resources."""
        entry = self._journal(obj_type, owned.entry.attrs["name"], ldev_id=int(owned.id), **attrs)
        owned.maps.insert(0, entry) if first else owned.maps.append(entry)  # removed in list order: paths before namespaces
        done = self._job(call, what, "POST", path, body)
        self.run.ledger.created(entry)
        return done

    def _map_scsi(self, owned: OwnedVolume, protocol: str, hosts: dict[str, str]) -> FcExport | IscsiExport:
        ports = self.options.fc_ports if protocol == "fc" else [self.options.iscsi_port or ""]
        lun: int | None = None
        for port in ports:
            group = self._host_group(protocol, port, hosts)
            what = f"ldev {owned.id} on {port},{group}"
            body = {"portId": port, "hostGroupNumber": group, "ldevId": int(owned.id)}
            made = self._mapping(owned, "lun", "POST /luns", what, "luns", body, port=port, group=group)
            lun = int(_last_segment(made, self.api, "POST /luns", what).split(",")[-1])
        if protocol == "fc":
            return FcExport(lun=lun)
        port = ports[0]
        info = self.api.call("GET /ports/{id}", f"port {port}", lambda: self._conn.get(f"ports/{port}"), idempotent=True) or {}
        number = self._groups[(protocol, port)]
        groups = listing(self.api, self._conn, f"iSCSI target {port},{number}", "host-groups", portId=port)
        iqn = next((g.get("iscsiName") for g in groups if g.get("hostGroupNumber") == number), None)
        address, tcp = info.get("ipv4Address"), info.get("tcpPort")
        if not (address and tcp and iqn):
            raise ArrayError(f"array {self.lab.array.name}: port {port}: the array gave no ipv4Address, tcpPort or target iscsiName")
        return IscsiExport(portal=f"{address}:{tcp}", target_iqn=str(iqn), lun=lun)

    def _host_group(self, protocol: str, port: str, hosts: dict[str, str]) -> int:
        """The run's host group (iSCSI target) on the port, made once with every lab host's WWPNs / IQN in it."""
        key = (protocol, port)
        if key in self._groups:
            return self._groups[key]
        name = f"{self.prefix}{protocol}"[:32]
        what = f"host group {name} on {port}"
        entry = self._journal("host_group", name, port=port)
        self._hosts[(f"port {port}", protocol)] = (name, entry)  # teardown deletes it after the volumes
        made = self._job("POST /host-groups", what, "POST", "host-groups", {"portId": port, "hostGroupName": name})
        number = int(_last_segment(made, self.api, "POST /host-groups", what).split(",")[-1])
        self.run.ledger.created(entry, group=number)
        self._groups[key] = number
        group_id = f"{port},{number}"
        self._job("PUT /host-groups/{id}", what, "PUT", f"host-groups/{group_id}", {"hostMode": self.options.host_mode})
        for lab_host, initiator in hosts.items():
            for name_of_port in initiator.split(","):
                if protocol == "fc":
                    body = {"hostWwn": name_of_port, "portId": port, "hostGroupNumber": number}
                    self._job("POST /host-wwns", f"{what} host {lab_host}", "POST", "host-wwns", body)
                else:
                    body = {"iscsiName": name_of_port, "portId": port, "hostGroupNumber": number}
                    self._job("POST /host-iscsis", f"{what} host {lab_host}", "POST", "host-iscsis", body)
        return number

    def _map_nvme(self, owned: OwnedVolume, hosts: dict[str, str]) -> NvmeTcpExport:
        ssid = self.options.nvm_subsystem_id
        label = owned.entry.attrs["name"]
        for lab_host, nqn in hosts.items():
            self._host_nqn(lab_host, nqn)
        what = f"namespace of ldev {owned.id} ({label}) in NVM subsystem {ssid}"
        made = self._mapping(owned, "namespace", "POST /namespaces", what, "namespaces", {"nvmSubsystemId": ssid, "ldevId": int(owned.id)},
                             subsystem=ssid)
        nsid = int(_last_segment(made, self.api, "POST /namespaces", what).split(",")[-1])
        for lab_host, nqn in hosts.items():
            body = {"nvmSubsystemId": ssid, "hostNqn": nqn, "namespaceId": nsid}
            self._mapping(owned, "namespace_path", "POST /namespace-paths", f"{what} host {lab_host}", "namespace-paths", body,
                          first=True, subsystem=ssid, nqn=nqn)
        assert self.options.nvme_traddr and self.options.nvme_subsys_nqn  # lab_problems
        return NvmeTcpExport(traddr=self.options.nvme_traddr, subsys_nqn=self.options.nvme_subsys_nqn, trsvcid=self.options.nvme_trsvcid,
                             nsid=nsid)

    def _host_nqn(self, lab_host: str, nqn: str) -> None:
        """The host's NQN in the lab's subsystem: registered (and journalled) unless it is there already (not ours then)."""
        if nqn in self._host_nqns:
            return
        ssid = self.options.nvm_subsystem_id
        listed = listing(self.api, self._conn, f"NVM subsystem {ssid}", "host-nqns", nvmSubsystemId=ssid)
        self._host_nqns.add(nqn)
        if any(h.get("hostNqn") == nqn for h in listed):
            return
        entry = self._journal("host_nqn", f"{self.prefix}{lab_host}", subsystem=ssid, nqn=nqn)
        self._hosts[(lab_host, "nvme-tcp")] = (nqn, entry)
        self._job("POST /host-nqns", f"host nqn {nqn} of {lab_host}", "POST", "host-nqns", {"nvmSubsystemId": ssid, "hostNqn": nqn})
        self.run.ledger.created(entry)

    # -- data services -------------------------------------------------------------
    def snapshot_create(self, volume: Volume, name: str) -> Snapshot:
        if Capability.SNAPSHOT not in self.capabilities:
            raise self._refuse(Capability.SNAPSHOT)
        owned = self._owned(volume)
        if owned.entry.attrs["type"] == "filesystem":
            raise self._refuse(
                Capability.SNAPSHOT, "HNAS snapshots are CLI-only in public clients; the HNAS REST in endpoints.md only lists them"
            )
        group = f"{owned.entry.attrs['name']}.{name}"[:32]
        what = f"snapshot {group} of ldev {owned.id}"
        entry = self._journal("snapshot", group, pvol=int(owned.id))
        owned.snapshots[name] = entry
        body = {"snapshotGroupName": group, "snapshotPoolId": self.options.snapshot_pool_id, "pvolLdevId": int(owned.id), "autoSplit": True}
        made = _last_segment(self._job("POST /snapshots", what, "POST", "snapshots", body), self.api, "POST /snapshots", what)
        self.run.ledger.created(entry, pair=made)
        return Snapshot(name=name, volume=volume.name, location=made, evidence={"snapshot_group": group, "pair": made})

    def snapshot_restore(self, volume: Volume, snapshot: Snapshot) -> None:
        """Thin Image restore of the pair (PUT snapshots/<pvol>,<mu>/actions/restore/invoke, autoSplit: split again when done)."""
        if Capability.RESTORE not in self.capabilities:
            raise self._refuse(Capability.RESTORE)
        owned = self._owned(volume)
        entry = owned.snapshots.get(snapshot.name)
        if entry is None:
            raise ArrayError(f"array {self.lab.array.name}: no snapshot {snapshot.volume}@{snapshot.name} of this run")
        pair = entry.attrs["pair"]
        body = {"parameters": {"autoSplit": True}}
        self._job("PUT /snapshots/{id}/actions/restore/invoke", f"ldev {owned.id} from snapshot {pair}", "PUT",
                  f"snapshots/{pair}/actions/restore/invoke", body)

    def dedupe_run(self, volumes: Sequence[Volume] = ()) -> dict[str, Any]:
        raise self._refuse(Capability.DEDUPE)

    def replicate(self, volume: Volume) -> dict[str, Any]:
        raise self._refuse(Capability.REPLICATE)

    def _drr_fact(self) -> str:
        """The pool's and the array's data-reduction figures as one report fact, as the array reports them."""
        return self._fact(self._drr_text)

    def _drr_text(self) -> str:
        e = self.data_reduction_evidence()
        return (f"pool {e['pool_id']} dataReductionRate {e['pool_data_reduction_rate']}; array totalRatio {e['array_total_ratio']}, "
                f"dedupeAndCompression {e['array_dedupe_and_compression_ratio']} (calculated {e['array_efficiency_calculated']}, "
                f"{e['array_calculation_end']})")

    def facts_at_end(self) -> dict[str, str]:
        return {"array.data_reduction_ratio_at_end": self._drr_fact()}

    def data_reduction_evidence(self) -> dict[str, Any]:
        """What the array says its data reduction saves, for the report beside the host's figures: the pool's
        dataReductionRate / compressionRate / duplicationRate and the array's total-efficiencies ratios, as
        the array reports them (strings stay strings; a figure it does not give is None, never 0)."""
        pool = self._pool(self.options.pool_id) or {}
        total = dict(self.api.call("GET /total-efficiencies/instance", "array", lambda: self._conn.get("total-efficiencies/instance"),
                                   idempotent=True) or {})
        dedupe = total.get("dedupeAndCompression") if isinstance(total.get("dedupeAndCompression"), dict) else {}
        return {
            "pool_id": self.options.pool_id,
            "data_reduction_mode": self.options.data_reduction_mode,
            "pool_data_reduction_rate": pool.get("dataReductionRate"),
            "pool_compression_rate": pool.get("compressionRate"),
            "pool_duplication_rate": pool.get("duplicationRate"),
            "pool_data_reduction_capacity": pool.get("dataReductionCapacity"),
            "pool_data_reduction_before_capacity": pool.get("dataReductionBeforeCapacity"),
            "array_efficiency_calculated": total.get("isCalculated"),
            "array_total_ratio": total.get("totalRatio"),
            "array_compression_ratio": total.get("compressionRatio"),
            "array_dedupe_ratio": dedupe.get("dedupeRatio"),
            "array_dedupe_and_compression_ratio": dedupe.get("totalRatio"),
            "array_calculation_end": total.get("calculationEndTime"),
        }


register_object_remover(DRIVER, _remove)

