"""The lab: one array, its initiator hosts, the protocols between them, volumes.

A lab is a YAML file the user writes (labs/local.yaml is the embedded default).
It is validated completely, driver options included, before anything is
provisioned; every error names the file, line and field.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from iogate.errors import LabFileError
from iogate.lab import secrets
from iogate.lab.checks import lab_problems, reference_problems
from iogate.lab.yamlfile import Loc, field_path, line_of, load_yaml, validate
from iogate.units import parse_size_bytes

DEFAULT_LAB = Path(__file__).resolve().parents[2] / "labs" / "local.yaml"
MIN_VOLUME_BYTES = 1 << 20


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class QoS(Strict):
    """Per-volume caps; on the local lab enforced exactly by cgroup v1 blkio throttle."""

    read_iops: int | None = Field(default=None, gt=0, description="cap on read operations per second", examples=[5000])
    write_iops: int | None = Field(default=None, gt=0, description="cap on write operations per second", examples=[5000])
    read_bytes_per_s: int | None = Field(default=None, gt=0, description="cap on bytes read per second", examples=[104857600])
    write_bytes_per_s: int | None = Field(default=None, gt=0, description="cap on bytes written per second", examples=[104857600])


class DeviceIdentity(Strict):
    """How a device is recognised: by what it *is*, never by its /dev name.

    Exactly one of backing_file (loop), wwn (SCSI VPD 0x83), nguid or eui (NVMe),
    serial, or nfs_export (server:/path) is set. `destructive: true` says old
    file systems on it may be overwritten (see iogate.hosts.usage); it never
    admits a device that is mounted, held or swapped on.
    """

    backing_file: str | None = Field(default=None, description="the file behind a loop device", examples=["/var/tmp/disk.img"])
    wwn: str | None = Field(default=None, description="SCSI WWN (VPD page 0x83) of an iSCSI / FC LUN",
                            examples=["naa.600a098038303053453f463045727a45"])
    nguid: str | None = Field(default=None, description="NVMe namespace NGUID", examples=["2c3c9d4e-0000-4000-8000-000000000001"])
    serial: str | None = Field(default=None, description="device serial number as the host reads it", examples=["S4EWNX0R123456"])
    nfs_export: str | None = Field(default=None, description="NFS export as server:/path", examples=["192.0.2.20:/export/iogate"])
    destructive: bool = Field(default=False, description="old file systems on it may be overwritten (never a mounted or held one)")

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

    name: str = Field(description="the host's name in reports and in the lab's other fields", examples=["host1"])
    transport: str = Field(default="local://", description="how IOGate reaches the host: local://, ssh://root@HOST[:PORT] or paramiko://root@HOST",
                           examples=["ssh://root@host1.example"])
    ssh_key: str | None = Field(default=None, description="private key for ssh (default: ssh's own)", examples=["~/.ssh/iogate"])
    address: str | None = Field(default=None, description="data address if not the transport's (fio --server is reached here)",
                                examples=["192.0.2.11"])
    namespace: str | None = Field(default=None, description="network namespace of a netns lab host (set by labs/netns.yaml only)",
                                  examples=["iogate-h1"])
    # The marker of the qemu process this host runs in (a lab VM of this machine): what IOGate left
    # on the host (a working directory, a session) is gone once that process is, so cleanup skips it.
    vanishes_with: str | None = Field(default=None, description="marker of the qemu process this host runs in (a lab VM): what IOGate "
                                      "left on the host is gone once that process is", examples=["iogate-labvm"])

    @field_validator("transport")
    @classmethod
    def _known_transport(cls, value: str) -> str:
        if not value.startswith(("local://", "ssh://", "paramiko://")):
            raise ValueError("transport must be local://, ssh://user@host or paramiko://user@host")
        return value


class HostSet(Strict):
    """Hosts generated from a count (`hosts: {count: 100, network: 10.110.0.0/16}`), for a netns lab of any size.

    Host i (1..count) is named <name_prefix>i, lives in namespace <namespace_prefix>i and has the
    address .2 of the i-th /24 of `network` (the controller's side of its link is .1); it is
    reached over ssh://root@<address> with `ssh_key`. The load expands it into the plain host list.
    """

    count: int = Field(ge=1, le=1000, description="how many hosts to generate", examples=[100])
    network: str = Field(description="the lab's own IPv4 range (private, prefix /8../23): host i gets .2 of its i-th /24",
                         examples=["10.110.0.0/16"])
    ssh_key: str = Field(description="the controller's private key for every host (netns lab: generated by `lab up`)",
                         examples=["/var/tmp/iogate/runs/lab-netns-100/id_ed25519"])
    name_prefix: str = Field(default="h", description="host i is named <name_prefix>i", examples=["h"])
    namespace_prefix: str = Field(default="iogate-", description="host i lives in namespace <namespace_prefix><name>",
                                  examples=["iogate-"])

    def expand(self) -> list[dict[str, Any]]:
        """The plain host list (dicts, validated as HostConfig by the lab)."""
        try:
            network = ipaddress.IPv4Network(self.network)
        except ValueError as exc:
            raise ValueError(f"hosts.network {self.network!r}: {exc}") from None
        if not network.is_private:
            raise ValueError(f"hosts.network {network} is not private: the lab must never route elsewhere")
        if network.prefixlen > 23:
            raise ValueError(f"hosts.network {network}: give a /23 or wider (one /24 per host)")
        links = 2 ** (24 - network.prefixlen)
        if self.count >= links:
            raise ValueError(f"hosts.network {network} has {links} /24s: room for {links - 1} hosts, not {self.count}")
        hosts = []
        for index in range(1, self.count + 1):
            address = str(network.network_address + index * 256 + 2)
            name = f"{self.name_prefix}{index}"
            hosts.append({"name": name, "transport": f"ssh://root@{address}", "address": address,
                          "namespace": f"{self.namespace_prefix}{name}", "ssh_key": self.ssh_key})
        return hosts


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

    interval_s: float = Field(default=5.0, gt=0, le=60, description="seconds between two probes of each host")
    probe_timeout_s: float = Field(default=10.0, gt=0, le=120, description="the longest one probe may take (also ssh's ConnectTimeout)")
    deadline_s: float = Field(default=20.0, gt=0, le=600, description="a host that answered no probe for this long is lost "
                              "(at least interval_s + probe_timeout_s)")

    @model_validator(mode="after")
    def _deadline_spans_probes(self) -> HostLiveness:
        if self.deadline_s < self.interval_s + self.probe_timeout_s:
            raise ValueError(f"deadline_s ({self.deadline_s:g}) must be at least interval_s + probe_timeout_s "
                             f"({self.interval_s:g} + {self.probe_timeout_s:g}): else one slow probe of a healthy host loses it")
        return self


DEFAULT_LIVENESS = HostLiveness()


class ProtocolConfig(Strict):
    """A way from the hosts to the array's volumes (block, nbd, iscsi, nvme-tcp, nfs...)."""

    name: str = Field(description="the protocol's name in reports, baseline_protocol and test ids", examples=["iscsi"])
    connector: str = Field(description="how hosts attach volumes: block, nbd, iscsi, nvme-tcp, nfs, fc or multipath", examples=["nvme-tcp"])
    options: dict[str, Any] = Field(default_factory=dict, description="the connector's options (see the connector's table below)",
                                    examples=[{"chap_user": "iogate", "chap_password": "${env:CHAP_SECRET}"}])


class VolumeSet(Strict):
    """The lab's volume set: each family provisions sets of this count and size (iogate lab check prints how many)."""

    count: int = Field(default=2, ge=1, le=4096, description="volumes per set", examples=[4])
    size: str = Field(default="1GiB", description="size of each volume, with a unit (KiB MiB GiB TiB; k m g t)", examples=["100GiB"])
    qos: QoS | None = Field(default=None, description="per-volume caps applied at creation (drivers with the qos capability)")

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, value: Any) -> Any:
        if (isinstance(value, int | float) and not isinstance(value, bool)) or (isinstance(value, str) and value.strip().isdigit()):
            raise ValueError(f"{value!r} has no unit: a size needs one, e.g. {str(value).strip()}GiB (units KiB MiB GiB TiB, or k m g t)")
        if isinstance(value, str):
            if parse_size_bytes(value) < MIN_VOLUME_BYTES:
                raise ValueError(f"{value!r} is below the smallest volume IOGate provisions (1 MiB)")
        return value

    @property
    def size_bytes(self) -> int:
        return parse_size_bytes(self.size)


class ArrayConfig(Strict):
    """The array under test and the driver that manages it."""

    name: str = Field(description="the array's name in reports", examples=["ontap-1"])
    driver: str = Field(description="array driver: local, linux_target, static, ontap, pure or powerstore", examples=["ontap"])
    options: dict[str, Any] = Field(default_factory=dict, description="the driver's options (see the driver's table below)",
                                    examples=[{"management": "192.0.2.60", "password": "${env:ONTAP_PASSWORD}"}])


class Lab(Strict):
    """A whole lab file. `lab.path` is where it came from (for messages)."""

    internal_fields: ClassVar[frozenset[str]] = frozenset({"path"})  # set by load_lab, never written in a lab file

    name: str = Field(description="the lab's name: prefixes volume names, test ids and the results store", examples=["ontap-poc"])
    array: ArrayConfig = Field(description="the array under test: its name, driver and the driver's options",
                              examples=[{"name": "ontap-1", "driver": "ontap", "options": {"management": "192.0.2.60"}}])
    hosts: list[HostConfig] = Field(min_length=1, description="the initiator hosts; two or more run fio client/server from this controller "
                                   "(a netns lab may generate them: {count, network, ssh_key}, see HostSet)",
                                   examples=[[{"name": "host1", "transport": "ssh://root@host1.example"}]])
    protocols: list[ProtocolConfig] = Field(min_length=1, description="the ways from the hosts to the volumes, each a connector; "
                                            "each one the driver can serve",
                                            examples=[[{"name": "iscsi", "connector": "iscsi"}]])
    baseline_protocol: str | None = Field(default=None, description="the protocol every family but sweep and protocols runs over "
                                          "(default: the first protocol)", examples=["iscsi"])
    volumes: VolumeSet = Field(default=VolumeSet(), description="the volume set (count x size, QoS); each family provisions sets of it")
    allow_devices: list[DeviceIdentity] = Field(default_factory=list, description="devices the run may write besides the volumes "
                                                "it provisions, by identity (never by /dev name)",
                                                examples=[[{"wwn": "naa.600a098038303053453f463045727a45"}]])
    workdir: str = Field(default="/var/tmp/iogate", description="the controller's and hosts' run directory tree (never a system directory)",
                         examples=["/var/tmp/iogate"])
    datapath_limit_bytes_per_s: int | None = Field(default=None, gt=0, description="the slowest link of the data path in bytes/s, "
                                                   "the scaling family's efficiency is judged against (none: that test skips)",
                                                   examples=[2500000000])
    # "netns" (namespace hosts, iogate.labs.netns) or "labvm" (the qemu lab VM); none for a real lab.
    bring_up: Literal["netns", "labvm"] | None = Field(default=None, description="machines the suite brings up itself for a session "
                                                       "(netns, labvm); leave out for a real lab", examples=["netns"])
    tiles: int | None = Field(default=None, ge=1, description="Hitachi VM tiles to lay out (default: per run profile)", examples=[4])
    # Multiplies the fixed per-VM IOPS rates of the tiles and the event tests (tile VMs, dedupe-during-load
    # VMs, verify jobs). 1 for a real array; a functional lab (an emulated VM doing hundreds of IOPS)
    # lowers it so "targets held" judges the array's behaviour, not the emulator's speed.
    load_scale: float = Field(default=1.0, gt=0, le=1, description="multiplies the fixed per-VM IOPS of tiles and event loads; "
                              "1 for a real array, lower for an emulated one")
    # The live judge reads fio's full json+ report each second (a 25-VM tile: ~400 KB a second, composed by fio
    # and read over ssh on the host that runs the load). A host without the CPU for that measures the observer:
    # in the TCG lab VM it tripled the tiles' p99 (61-144 ms against 19-34 ms without) and held the jobs'
    # ends 5-12 s past their runtime, read as stalls (docs/early-stop.md).
    live_judge: bool = Field(default=True, description="judge run points live while they run (fail fast, steady stop); "
                             "false for hosts that cannot spare the CPU for fio's report each second: every point "
                             "then runs its planned time")
    min_window_s: float | None = Field(default=None, gt=0, le=3600, description=(
        "the shortest measured window, in seconds, over which this lab's figures repeat: every run point measures at "
        "least this long and every phase of an event run (baseline, event, recovery) lasts at least this long, whatever "
        "the profile, so a spec calibrated on the lab judges windows as long as its calibration's"), examples=[12])
    criteria: str | None = Field(default=None, description="the acceptance spec judging this lab's runs unless --criteria names "
                                 "another (relative to the repository or to the lab file)", examples=["criteria/poc.yaml"])
    engine: str = Field(default="fio", description="the load engine: fio or vdbench (--engine overrides)", examples=["fio"])
    vdbench_home: str | None = Field(default=None, description=(
        "The lab's own vdbench installation (the directory holding the `vdbench` launcher, e.g. Oracle's 5.04.07 "
        "download; IOGate reads 5.04.01-5.04.07). Set: the engine runs it, on this controller and on every remote "
        "host, instead of this machine's build. Unset: VDBENCH_HOME, else ../shared/tools/vdbench (development)."))
    # vdbench warnings this lab accepts instead of failing the run (iogate/engines/vdbench/health.py TOLERABLE).
    vdbench_tolerate: list[Literal["cpu"]] = Field(default_factory=list, description="vdbench warnings accepted instead of failing "
                                                   "the run: cpu = the machine averaged over 80 % CPU (default none: fail closed)",
                                                   examples=[["cpu"]])
    host_liveness: HostLiveness = Field(default=DEFAULT_LIVENESS, description="when a host that stopped answering under a "
                                        "multi-host load is declared lost")
    path: str = Field(default="", description="where the lab was read from (set by the loader)")

    @model_validator(mode="before")
    @classmethod
    def _generated_hosts(cls, data: Any) -> Any:
        # `hosts: {count: N, network: ...}` (a HostSet) becomes the plain list, so every user sees hosts as today.
        if isinstance(data, dict) and isinstance(data.get("hosts"), dict):
            return {**data, "hosts": HostSet.model_validate(data["hosts"]).expand()}
        return data

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
    from iogate.lab.support import capability_problems, protocol_problems

    path = Path(path) if path else DEFAULT_LAB
    data, lines = load_yaml(path)
    if not lines:
        raise LabFileError(f"{path} line 1: the lab file is empty; a lab names at least name, array, hosts and protocols "
                           "(see labs/examples/ and docs/lab-reference.md)")
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
    problems += protocol_problems(lab, driver, options)
    problems += capability_problems(lab, driver)
    problems += driver.lab_problems(lab, options)
    problems += reference_problems(data)
    problems += _secret_problems(data, ())
    if problems:
        raise LabFileError("\n".join(_located(path, lines, loc, message) for loc, message in problems))
    return lab


def _located(path: Path, lines: dict[Loc, int], loc: Loc, message: str) -> str:
    line = line_of(lines, loc)
    return f"{path}{f' line {line}' if line else ''}: {field_path(loc)}: {message}"


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
