"""`static`: an array IOGate cannot manage (yet), with volumes the storage team made.

The lab file lists the pre-provisioned volumes with their identity (WWN, NGUID,
serial, NFS export), the protocol they are reached by and what the connector
needs (`export`: portal and target_iqn, traddr and subsys_nqn, device; see
StaticExport). create_volume hands one out, never creates;
delete_volume gives it back. Data-service events are user hooks: a shell
command or an HTTP call, both templated (string.Template: $volume, $snapshot,
$array_volume, $wwn, $nguid, $serial, $nfs_export, $size_bytes), each timed
start to end. The driver can do exactly the events that have a hook.

    array:
      driver: static
      options:
        volumes:
          - {name: lun1, size: 100GiB, protocol: iscsi, identity: {wwn: naa.600...},
             export: {portal: "10.0.0.5:3260", target_iqn: "iqn..."}}
        hooks:
          snapshot_create: {command: "ssh admin@array snap create $array_volume $snapshot"}
          dedupe: {http: {method: POST, url: "https://array/api/dedupe", body: '{"pool": "p1"}'}}

Credentials are references, resolved when the hook runs and redacted from every
record and error (iogate.lab.secrets): `${env:NAME}` or `${file:PATH}` anywhere in a
command, URL, header or body, or in a hook's `env` (handed to the command's
environment, so it never appears on its command line):

          snapshot_create: {command: 'curl -u admin:"$$ARRAY_PW" ...', env: {ARRAY_PW: "${env:ARRAY_PW}"}}
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from string import Template
from typing import Any, ClassVar, Literal
from urllib.parse import quote

import requests
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from iogate.arrays.base import ArraySample, Capability, Snapshot, Unsupported, Volume, unsupported
from iogate.arrays.clock import ArrayClock, not_read
from iogate.arrays.exports import BlockExport, Export, FcExport, IscsiExport, NfsExport, NvmeTcpExport
from iogate.errors import ArrayError
from iogate.lab import DeviceIdentity, Lab, QoS, secrets
from iogate.run import Run
from iogate.units import parse_size_bytes


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HttpCall(Strict):
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    url: str
    body: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    verify_tls: bool = True


class Hook(Strict):
    """One user action: exactly one of a shell command or an HTTP call."""

    command: str | None = None
    http: HttpCall | None = None
    timeout_s: float = Field(default=3600, gt=0)
    env: dict[str, str] = Field(default_factory=dict)  # extra environment of a command hook; values may be secret references

    @model_validator(mode="after")
    def _one_kind(self) -> Hook:
        if (self.command is None) == (self.http is None):
            raise ValueError("a hook is either `command` or `http`, exactly one")
        return self


class StaticExport(Strict):
    """How the listed volume is reached, as the storage team gives it; each group makes one record
    of iogate.arrays.exports when complete (an incomplete one leaves the connector to name what is missing)."""

    portal: str | None = None  # iSCSI "address:port", with target_iqn
    target_iqn: str | None = None
    lun: int | None = None
    traddr: str | None = None  # NVMe/TCP, with subsys_nqn (trsvcid defaults to 4420)
    trsvcid: int | str | None = None
    subsys_nqn: str | None = None
    nsid: int | None = None
    device: str | None = None  # a block device on the machine that runs the I/O (`block`)
    server: str | None = None  # NFS: optional, must agree with identity.nfs_export (which is what is mounted)
    path: str | None = None


class StaticVolume(Strict):
    name: str
    size: str
    protocol: str  # connector name: iscsi, nvme-tcp, nfs, fc, multipath, block
    identity: DeviceIdentity
    export: StaticExport = Field(default_factory=StaticExport)
    host: str | None = None  # the lab host it is mapped to, when only one is
    # Old file systems on it may be overwritten (bench-fio's word); never admits a mounted or held device.
    destructive: bool = False

    @field_validator("size")
    @classmethod
    def _size(cls, value: str) -> str:
        parse_size_bytes(value)
        return value

    @model_validator(mode="after")
    def _nfs_agrees(self) -> StaticVolume:
        export = self.export
        if (export.server or export.path) and f"{export.server}:{export.path}" != self.identity.nfs_export:
            raise ValueError(f"export server:path {export.server}:{export.path} is not identity.nfs_export {self.identity.nfs_export!r}")
        return self

    def exports(self) -> tuple[Export, ...]:
        """The records of iogate.arrays.exports this volume is reached by."""
        given = self.export
        records: list[Export] = []
        if given.device:
            records.append(BlockExport(device=given.device))
        if given.portal and given.target_iqn:
            records.append(IscsiExport(portal=given.portal, target_iqn=given.target_iqn, lun=given.lun))
        if given.traddr and given.subsys_nqn:
            trsvcid = str(given.trsvcid or 4420)
            records.append(NvmeTcpExport(traddr=given.traddr, subsys_nqn=given.subsys_nqn, trsvcid=trsvcid, nsid=given.nsid))
        if self.identity.nfs_export and (split := _split_nfs(self.identity.nfs_export)):
            records.append(NfsExport(server=split[0], path=split[1]))
        if self.protocol in ("fc", "multipath"):
            records.append(FcExport(lun=given.lun))
        return tuple(records)


def _split_nfs(source: str) -> tuple[str, str] | None:
    """ "server:/path" -> (server, /path), so that NfsExport.source is `source` again; None without a ":"."""
    at = source.find(":/")
    if at < 0:
        at = source.rfind(":")
    return (source[:at], source[at + 1 :]) if at >= 0 else None


# Event name -> the capability its hook gives the driver.
HOOK_CAPABILITY: dict[str, Capability] = {
    "snapshot_create": Capability.SNAPSHOT,
    "snapshot_restore": Capability.RESTORE,
    "dedupe": Capability.DEDUPE,
    "replicate": Capability.REPLICATE,
    "mirror_attach": Capability.MIRROR,
    "set_qos": Capability.QOS,
}
HookName = Literal[
    "snapshot_create", "snapshot_delete", "snapshot_restore", "dedupe", "replicate", "mirror_attach", "mirror_detach", "set_qos"
]


class StaticOptions(Strict):
    model: str = "unmanaged array"
    volumes: list[StaticVolume] = Field(min_length=1)
    hooks: dict[HookName, Hook] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique(self) -> StaticOptions:
        names = [v.name for v in self.volumes]
        if len(set(names)) != len(names):
            raise ValueError(f"volume names must be unique: {names}")
        return self


class StaticArray:
    """ArrayDriver over pre-provisioned volumes and user hooks (see module docstring)."""

    Options: ClassVar[type[BaseModel]] = StaticOptions
    serves_all_protocols: ClassVar[bool] = False  # a volume is exported over one protocol
    capabilities: ClassVar[frozenset[Capability]] = frozenset(HOOK_CAPABILITY.values())

    def __init__(self, lab: Lab, run: Run) -> None:
        self.lab = lab
        self.run = run
        self.options = StaticOptions.model_validate(lab.array.options)
        # What this instance can do is what its hooks can do (the class lists the most).
        self.capabilities = frozenset(cap for hook, cap in HOOK_CAPABILITY.items() if hook in self.options.hooks)  # type: ignore[misc]
        self._handed_out: dict[str, tuple[StaticVolume, Volume]] = {}
        self.events: list[dict[str, Any]] = []  # every hook run, timed (for the report)

    @classmethod
    def lab_problems(cls, lab: Lab, options: StaticOptions) -> list[tuple[tuple[str | int, ...], str]]:
        """Each listed volume's protocol must be a connector the lab uses, its host a lab host."""
        connectors = sorted({p.connector for p in lab.protocols})
        hosts = [h.name for h in lab.hosts]
        problems: list[tuple[tuple[str | int, ...], str]] = []
        for index, volume in enumerate(options.volumes):
            if volume.protocol not in connectors:
                problems.append(
                    (
                        ("array", "options", "volumes", index, "protocol"),
                        f"{volume.protocol!r} is not a connector of the lab's protocols {connectors}",
                    )
                )
            if volume.host is not None and volume.host not in hosts:
                problems.append((("array", "options", "volumes", index, "host"), f"{volume.host!r} is not a lab host {hosts}"))
        return problems

    def setup(self) -> None:
        """Nothing to prepare: the volumes exist already."""

    def settle(self) -> None:
        """Nothing to wait for: a hook returns when its action is done."""

    def teardown(self) -> None:
        self._handed_out.clear()

    def facts(self) -> dict[str, str]:
        return {"array.driver": "static", "array.model": self.options.model, "array.firmware": "unknown (not managed by IOGate)"}

    # -- volumes -------------------------------------------------------------------------
    def create_volume(
        self, name: str, size_bytes: int, qos: QoS | None = None, export: str | None = None, host: str | None = None
    ) -> Volume:
        """Hand out a free listed volume of at least size_bytes (of protocol `export`, mapped to `host`)."""
        if name in self._handed_out:
            raise ArrayError(f"static array {self.lab.array.name}: volume {name} handed out already")
        taken = {static.name for static, _ in self._handed_out.values()}
        for static in self.options.volumes:
            if static.name in taken or parse_size_bytes(static.size) < size_bytes:
                continue
            if export is not None and static.protocol != export:
                continue
            if host is not None and static.host not in (None, host):
                continue
            volume = Volume(
                name=name,
                size_bytes=parse_size_bytes(static.size),
                identity=static.identity.model_copy(update={"destructive": True}) if static.destructive else static.identity,
                exports=static.exports(),
            )
            self._handed_out[name] = (static, volume)
            if qos is not None:
                self.set_qos(volume, qos)
            return volume
        wanted = f"{size_bytes} bytes" + (f", protocol {export}" if export else "") + (f", host {host}" if host else "")
        raise ArrayError(
            f"static array {self.lab.array.name} ({self.lab.path or 'lab'}): no free pre-provisioned volume for {name} ({wanted}); "
            f"{len(taken)} of {len(self.options.volumes)} handed out: list more volumes under array.options.volumes"
        )

    def delete_volume(self, volume: Volume) -> None:
        """Give the volume back (its data stays: the array is not ours to wipe)."""
        if self._handed_out.pop(volume.name, None) is None:
            raise ArrayError(f"static array {self.lab.array.name}: volume {volume.name} was not handed out")

    def list_volumes(self) -> list[Volume]:
        return [volume for _, volume in self._handed_out.values()]

    def set_qos(self, volume: Volume, qos: QoS | None) -> None:
        fields = (qos or QoS()).model_dump()
        self._hook("set_qos", volume, **{key: "" if value is None else str(value) for key, value in fields.items()})

    # -- events ------------------------------------------------------------------------------
    def snapshot_create(self, volume: Volume, name: str) -> Snapshot:
        evidence = self._hook("snapshot_create", volume, snapshot=name)
        return Snapshot(name=name, volume=volume.name, evidence={"hook": evidence})

    def snapshot_delete(self, snapshot: Snapshot) -> None:
        volume = self._volume(snapshot.volume)
        if "snapshot_delete" in self.options.hooks:
            self._hook("snapshot_delete", volume, snapshot=snapshot.name)

    def snapshot_restore(self, volume: Volume, snapshot: Snapshot) -> None:
        self._hook("snapshot_restore", volume, snapshot=snapshot.name)

    def dedupe_run(self, volumes: Sequence[Volume] = ()) -> dict[str, Any]:
        """The lab's dedupe hook: the engineer's command decides the scope. What the pass saved is what the hook
        says on its last line of output as JSON (`{"saved_bytes": 123}`), else None: the judge fails a pass
        that cannot say it did anything (iogate/judging/event_effect.py)."""
        record = self._hook("dedupe", None)
        return record | {"saved_bytes": reported(record.get("output", ""), "saved_bytes")}

    def replicate(self, volume: Volume) -> dict[str, Any]:
        return self._hook("replicate", volume)

    def mirror_attach(self, volume: Volume) -> dict[str, Any]:
        return self._hook("mirror_attach", volume)

    def mirror_detach(self, volume: Volume) -> None:
        if "mirror_detach" in self.options.hooks:
            self._hook("mirror_detach", volume)

    def refusal(self, capability: Capability) -> str:
        if capability in self.capabilities:
            return ""
        hooks = [hook for hook, cap in HOOK_CAPABILITY.items() if cap is capability]
        if hooks:
            return f"the lab configures no `{hooks[0]}` hook (array.options.hooks)"
        return "a static array runs only the lab's hooks"

    def volume_metrics(self, volume: Volume, start: datetime, end: datetime) -> list[ArraySample]:
        raise unsupported("static", Capability.METRICS)

    def array_clock(self) -> ArrayClock:
        return not_read("a static array has no metrics, so its clock is not read")

    # -- hooks -----------------------------------------------------------------------------------
    def _volume(self, name: str) -> Volume:
        if name not in self._handed_out:
            raise ArrayError(f"static array {self.lab.array.name}: volume {name} was not handed out")
        return self._handed_out[name][1]

    def _static_of(self, volume: Volume) -> StaticVolume | None:
        """The listed volume handed out as `volume` (None for a volume not of this array)."""
        handed = self._handed_out.get(volume.name)
        return handed[0] if handed is not None else None

    def template_values(self, volume: Volume | None, **extra: str) -> dict[str, str]:
        values = {"array": self.lab.array.name, "run_id": self.run.run_id}
        if volume is not None:
            values |= {
                "volume": volume.name,
                "array_volume": static.name if (static := self._static_of(volume)) else "",
                "size_bytes": str(volume.size_bytes),
            }
            values |= {key: value or "" for key, value in volume.identity.model_dump().items()}
        return values | extra

    def _hook(self, event: str, volume: Volume | None, **extra: str) -> dict[str, Any]:
        hook = self.options.hooks.get(event)  # type: ignore[call-overload]
        if hook is None:
            capability = HOOK_CAPABILITY.get(event)
            raise Unsupported(
                f"static array {self.lab.array.name}: no `{event}` hook configured" + (f" ({capability.value})" if capability else "")
            )
        values = self.template_values(volume, **extra)
        record: dict[str, Any] = {"event": event, "volume": volume.name if volume else None, "started_at": time.time()}
        started = time.monotonic()
        try:
            record |= _run_command(hook, values) if hook.command is not None else _call_http(hook, values)
        finally:
            record["ended_at"] = time.time()
            record["duration_s"] = round(time.monotonic() - started, 3)
            self.events.append(record)
        if not record["ok"]:
            raise ArrayError(f"static array {self.lab.array.name}: `{event}` hook failed: {record['detail']}")
        return record


# How a resolved secret enters each kind of template, so it arrives intact: shell-quoted in a
# command (never re-read by the shell), percent-encoded in a URL; '$' doubled for string.Template.
_SECRET_FORM: dict[str, Callable[[str], str]] = {"command": shlex.quote, "url": lambda value: quote(value, safe="")}


def _render(template: str, values: dict[str, str], event: str) -> str:
    """The template with secret references resolved (see _SECRET_FORM), then placeholders
    filled; credentials written inline in it are registered for redaction too."""
    form = _SECRET_FORM.get(event, str)
    with_secrets = secrets.resolve_embedded(template, escape=lambda value: form(value).replace("$", "$$"))
    try:
        rendered = Template(with_secrets).substitute(values)
    except (KeyError, ValueError) as exc:
        raise ArrayError(
            f"`{event}` hook template {template!r}: unknown or malformed placeholder {exc} (known: {', '.join(sorted(values))})"
        ) from None
    secrets.register_inline(rendered)
    return rendered


def reported(output: str, key: str) -> float | None:
    """`key` of the JSON object a hook printed as its last line (or returned as its body), else None."""
    lines = output.strip().splitlines()
    try:
        last = json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
    value = last.get(key) if isinstance(last, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _run_command(hook: Hook, values: dict[str, str]) -> dict[str, Any]:
    command = _render(hook.command or "", values, "command")
    env = {**os.environ, **{key: secrets.resolve_embedded(value) for key, value in hook.env.items()}}
    shown = secrets.redact(command)
    try:
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=hook.timeout_s, check=False, env=env)
    except subprocess.TimeoutExpired:
        return {"ok": False, "command": shown, "detail": f"{shown!r}: no end after {hook.timeout_s:.0f} s"}
    output = secrets.redact((done.stdout + done.stderr).strip()[-2000:])
    return {
        "ok": done.returncode == 0,
        "command": shown,
        "exit": done.returncode,
        "output": output,
        "detail": f"{shown!r} exited {done.returncode}: {output}",
    }


def _call_http(hook: Hook, values: dict[str, str]) -> dict[str, Any]:
    call = hook.http
    assert call is not None
    url = _render(call.url, values, "url")
    body = _render(call.body, values, "body") if call.body is not None else None
    headers = {key: _render(value, values, "header") for key, value in call.headers.items()}
    shown = secrets.redact(url)
    try:
        response = requests.request(call.method, url, data=body, headers=headers, timeout=hook.timeout_s, verify=call.verify_tls)
    except requests.RequestException as exc:
        return {"ok": False, "url": shown, "detail": secrets.redact(f"{call.method} {shown}: {exc}")}
    return {
        "ok": response.ok,
        "url": shown,
        "status": response.status_code,
        "output": secrets.redact(response.text[-2000:]),
        "detail": secrets.redact(f"{call.method} {shown}: HTTP {response.status_code}: {response.text[-500:]}"),
    }
