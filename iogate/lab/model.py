"""The lab: one array, its initiator hosts, the protocols between them, volumes.

A lab is a YAML file the user writes (labs/local.yaml is the embedded default).
It is validated completely, driver options included, before anything is
provisioned; every error names the file, line and field.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from iogate.errors import LabFileError
from iogate.lab import secrets
from iogate.lab.checks import lab_problems
from iogate.lab.yamlfile import Loc, line_of, load_yaml, validate
from iogate.units import parse_size_bytes

DEFAULT_LAB = Path(__file__).resolve().parents[2] / "labs" / "local.yaml"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class QoS(Strict):
    """Per-volume caps; on the local lab enforced exactly by cgroup v1 blkio throttle."""

    read_iops: int | None = Field(default=None, gt=0)
    write_iops: int | None = Field(default=None, gt=0)
    read_bytes_per_s: int | None = Field(default=None, gt=0)
    write_bytes_per_s: int | None = Field(default=None, gt=0)


class DeviceIdentity(Strict):
    """How a device is recognised: by what it *is*, never by its /dev name.

    Exactly one of backing_file (loop), wwn (SCSI VPD 0x83), nguid or eui (NVMe),
    serial, or nfs_export (server:/path) is set. `destructive: true` says old
    file systems on it may be overwritten (see iogate.hosts.usage); it never
    admits a device that is mounted, held or swapped on.
    """

    backing_file: str | None = None
    wwn: str | None = None
    nguid: str | None = None
    serial: str | None = None
    nfs_export: str | None = None
    destructive: bool = False

    @model_validator(mode="after")
    def _exactly_one(self) -> DeviceIdentity:
        set_fields = [name for name, value in self.model_dump(exclude={"destructive"}).items() if value]
        if len(set_fields) != 1:
            raise ValueError(f"give exactly one of backing_file, wwn, nguid, serial, nfs_export (got {set_fields or 'none'})")
        return self

    def describe(self) -> str:
        (name, value), = [(k, v) for k, v in self.model_dump(exclude={"destructive"}).items() if v]
        return f"{name} {value}"


class HostConfig(Strict):
    """An initiator host, reached through a testinfra backend URL."""

    name: str
    transport: str = "local://"
    ssh_key: str | None = None
    address: str | None = None
    namespace: str | None = None
    # The marker of the qemu process this host runs in (a lab VM of this machine): what IOGate left
    # on the host (a working directory, a session) is gone once that process is, so cleanup skips it.
    vanishes_with: str | None = None

    @field_validator("transport")
    @classmethod
    def _known_transport(cls, value: str) -> str:
        if not value.startswith(("local://", "ssh://", "paramiko://")):
            raise ValueError("transport must be local://, ssh://user@host or paramiko://user@host")
        return value


class HostLiveness(Strict):
    """When a host that stopped answering is declared lost under a multi-host load (fio client/server).

    Every `interval_s` the controller probes each host over its transport (`true` over ssh, one
    try of at most `probe_timeout_s`, which is also ssh's ConnectTimeout; the probe is killed
    then). A host that answered no probe in the last `deadline_s` is lost: the run stops within
    `deadline_s` (+ a 1 s check) of the loss, however the loss looks (refused, silence, a hung
    sshd). The run's other bound, fio's own (runtime + 120 s grace), is minutes.

    A healthy host whose every probe takes up to probe_timeout_s answers again within
    interval_s + probe_timeout_s, so deadline_s must be at least that (checked). The defaults
    (5 + 10 <= 20 s) declare a host lost after 20 s without an answer: it takes a probe slower
    than 15 s, or three failed probes in a row, to lose a healthy host. A probe into a host of
    the netns lab on the 2-core reference machine, with fio loading both hosts and two busy loops
    holding both cores, took 0.7-1.3 s (24 probes, median 0.9 s, none failed): the deadline is 15x
    the slowest. A slower host (far away, an emulated guest) raises the figures in the lab file.
    """

    interval_s: float = Field(default=5.0, gt=0, le=60)
    probe_timeout_s: float = Field(default=10.0, gt=0, le=120)
    deadline_s: float = Field(default=20.0, gt=0, le=600)

    @model_validator(mode="after")
    def _deadline_spans_probes(self) -> HostLiveness:
        if self.deadline_s < self.interval_s + self.probe_timeout_s:
            raise ValueError(f"deadline_s ({self.deadline_s:g}) must be at least interval_s + probe_timeout_s "
                             f"({self.interval_s:g} + {self.probe_timeout_s:g}): else one slow probe of a healthy host loses it")
        return self


DEFAULT_LIVENESS = HostLiveness()


class ProtocolConfig(Strict):
    """A way from the hosts to the array's volumes (block, nbd, iscsi, nvme-tcp, nfs...)."""

    name: str
    connector: str
    options: dict[str, Any] = Field(default_factory=dict)


class VolumeSet(Strict):
    count: int = Field(default=2, ge=1, le=4096)
    size: str = "1GiB"
    qos: QoS | None = None

    @field_validator("size")
    @classmethod
    def _size(cls, value: str) -> str:
        parse_size_bytes(value)
        return value

    @property
    def size_bytes(self) -> int:
        return parse_size_bytes(self.size)


class ArrayConfig(Strict):
    name: str
    driver: str
    options: dict[str, Any] = Field(default_factory=dict)


class Lab(Strict):
    """A whole lab file. `lab.path` is where it came from (for messages)."""

    name: str
    array: ArrayConfig
    hosts: list[HostConfig] = Field(min_length=1)
    protocols: list[ProtocolConfig] = Field(min_length=1)
    baseline_protocol: str | None = None
    volumes: VolumeSet = VolumeSet()
    allow_devices: list[DeviceIdentity] = Field(default_factory=list)
    workdir: str = "/var/tmp/iogate"
    datapath_limit_bytes_per_s: int | None = None
    # Machines the suite itself brings up for a session when they are not up yet:
    # "netns" (namespace hosts, iogate.labs.netns) or "labvm" (the qemu lab VM); none for a real lab.
    bring_up: Literal["netns", "labvm"] | None = None
    tiles: int | None = Field(default=None, ge=1)  # Hitachi VM tiles to lay out (default: per run profile)
    # Multiplies the fixed per-VM IOPS rates of the tiles and the event tests (tile VMs, dedupe-during-load
    # VMs, verify jobs). 1 for a real array; a functional lab (an emulated VM doing hundreds of IOPS)
    # lowers it so "targets held" judges the array's behaviour, not the emulator's speed.
    load_scale: float = Field(default=1.0, gt=0, le=1)
    # The acceptance spec that judges this lab's runs unless --criteria names another
    # (a path relative to the repository root, or to the lab file's directory).
    criteria: str | None = None
    # The load engine (iogate/lab/registry.py ENGINES): fio (default) or vdbench; --engine overrides.
    engine: str = "fio"
    vdbench_home: str | None = Field(default=None, description=(
        "The lab's own vdbench installation (the directory holding the `vdbench` launcher, e.g. Oracle's 5.04.07 "
        "download; IOGate reads 5.04.01-5.04.07). Set: the engine runs it, on this controller and on every remote "
        "host, instead of this machine's build. Unset: VDBENCH_HOME, else ../shared/tools/vdbench (development)."))
    # vdbench warnings this lab accepts instead of failing the run (iogate/engines/vdbench/health.py
    # TOLERABLE): "cpu" = the whole machine averaged over 80 % CPU. None by default: fail closed.
    vdbench_tolerate: list[Literal["cpu"]] = Field(default_factory=list)
    # When a host that stopped answering is declared lost under a multi-host load (HostLiveness).
    host_liveness: HostLiveness = DEFAULT_LIVENESS
    path: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> Lab:
        names = [p.name for p in self.protocols]
        if self.baseline_protocol is not None and self.baseline_protocol not in names:
            raise ValueError(f"baseline_protocol {self.baseline_protocol!r} is not one of the protocols {names}")
        return self

    @property
    def baseline(self) -> str:
        return self.baseline_protocol or self.protocols[0].name

    def spread(self, index: int) -> str:
        """The lab's host for the index-th volume or VM (round_robin over its hosts)."""
        return round_robin([h.name for h in self.hosts], index)

    def protocol(self, name: str) -> ProtocolConfig:
        for protocol in self.protocols:
            if protocol.name == name:
                return protocol
        raise KeyError(f"lab {self.name}: no protocol {name!r}")


def round_robin(hosts: Sequence[str], index: int) -> str:
    """Round-robin host for the index-th volume or VM: host index mod N, so load spreads over every host."""
    return hosts[index % len(hosts)]


def load_lab(path: Path | str | None = None) -> Lab:
    """Read and fully validate a lab file (driver and connector options included)."""
    from iogate.lab import registry

    path = Path(path) if path else DEFAULT_LAB
    data, lines = load_yaml(path)
    if isinstance(data, dict):
        data = {**data, "path": str(path)}
    lab = validate(Lab, data, path, lines)
    driver = registry.array_driver_class(lab.array.driver, path, lines)
    registry.engine_opener(lab.engine, path, lines)
    options = validate(driver.Options, lab.array.options, path, lines, ("array", "options"))
    for index, protocol in enumerate(lab.protocols):
        connector = registry.connector_class(protocol.connector, path, lines, ("protocols", index, "connector"))
        validate(connector.Options, protocol.options, path, lines, ("protocols", index, "options"))
    problems = lab_problems(lab)
    problems += driver.lab_problems(lab, options)
    problems += _secret_problems(data, ())
    if problems:
        raise LabFileError("\n".join(_located(path, lines, loc, message) for loc, message in problems))
    return lab


def _located(path: Path, lines: dict[Loc, int], loc: Loc, message: str) -> str:
    line = line_of(lines, loc)
    return f"{path}{f' line {line}' if line else ''}: {'.'.join(str(part) for part in loc) or '(top level)'}: {message}"


def _secret_problems(node: Any, loc: Loc) -> list[tuple[Loc, str]]:
    """Resolve every secret reference once now (registering its value for redaction), so one that
    cannot be resolved is refused at its line; the lab keeps the reference, users resolve again."""
    if isinstance(node, dict):
        return [p for key, value in node.items() for p in _secret_problems(value, (*loc, key))]
    if isinstance(node, list):
        return [p for index, value in enumerate(node) for p in _secret_problems(value, (*loc, index))]
    if isinstance(node, str) and secrets.REFERENCE_IN_TEXT.search(node):
        try:
            secrets.resolve_embedded(node)
        except secrets.SecretError as exc:
            return [(loc, str(exc))]
    return []
