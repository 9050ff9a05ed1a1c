"""What the iSCSI, NVMe/TCP, NFS, FC, block and nbd connectors read from a volume's export record.

The network connectors run for real only in the lab-VM tier; here a fake host
answers their commands, so each test pins the record fields that end up on the
command lines, in the ledger (vanishes_with) and in the Connection, and the
error a volume without the connector's record gets.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.exports import BlockExport, FcExport, IscsiExport, NfsExport, NvmeTcpExport
from iogate.errors import HostError
from iogate.hosts.connectors import scan, sessions
from iogate.hosts.connectors.base import Connection
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.connectors.fc import FcConnector
from iogate.hosts.connectors.iscsi import IscsiConnector
from iogate.hosts.connectors.nbd import NbdConnector
from iogate.hosts.connectors.nfs import NfsConnector
from iogate.hosts.connectors.nvme_tcp import NvmeTcpConnector
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, HostConfig, ProtocolConfig
from iogate.lab.secrets import redact
from iogate.run import Run

IQN = "iqn.2003-01.org.iogate:v1"
NQN = "nqn.2014-08.org.iogate:v1"
WWN = "naa.6001405" + "a" * 25


class FakeHost:
    """Stands in for testinfra's host: records every command line, answers discovery with `advertised`."""

    def __init__(self, advertised: str = "") -> None:
        self.lines: list[str] = []
        self.advertised = advertised

    def run(self, line: str) -> Any:
        self.lines.append(line)
        stdout = self.advertised if "discover" in line else ""
        login = next((x.split() for x in self.lines if x.startswith("iscsiadm -m node") and x.endswith(" -l")), None)
        if line.startswith("iscsiadm -m session") and login:
            stdout = f"tcp: [1] {login[6]},1 {login[4]} (non-flash)\n"
        connect = next((x.split() for x in self.lines if x.startswith("nvme connect")), None)
        if "/sys/class/nvme/nvme*" in line and connect:  # the controller listing, once connected
            stdout = f"nvme0\ttcp\t{connect[9]}\ttraddr={connect[5]},trsvcid={connect[7]}\thost\n"
        return SimpleNamespace(command=line, rc=0, stdout=stdout, stderr="")


def initiator(host: FakeHost) -> Initiator:
    return Initiator(config=HostConfig(name="h1", transport="ssh://root@h1"), host=host)


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    yield Run.start(tmp_path, "connectors")
    # Runs started in one second by one process share a run id: no test sees another's sessions.
    sessions._open.clear()


@pytest.fixture
def found(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """scan.device_connection replaced: what a connector asked it for, and a device by identity."""
    calls: list[dict[str, Any]] = []

    def device_connection(protocol: str, initiator: Initiator, volume: Volume, timeout_s: float, what: str,
                          details: dict[str, Any] | None = None, rescan: str | None = None) -> Connection:
        calls.append({"what": what, "details": details})
        return Connection.to_device(protocol, initiator.name, volume, "/dev/disk/by-id/wwn-x",
                                    details={**(details or {}), "paths": ["/dev/sdx"]})

    monkeypatch.setattr(scan, "device_connection", device_connection)
    return calls


def volume(*exports: Any, identity: DeviceIdentity | None = None) -> Volume:
    return Volume("v1", 1 << 30, identity or DeviceIdentity(wwn=WWN), tuple(exports))


def test_iscsi_logs_in_to_the_records_portal_and_target(run: Run, found: list[dict[str, Any]]) -> None:
    host = FakeHost(advertised=f"10.0.0.5:3260,1 {IQN}\n")
    connector = IscsiConnector(ProtocolConfig(name="iscsi-a", connector="iscsi"), run)
    export = IscsiExport(portal="10.0.0.5:3260", target_iqn=IQN, lun=0, vanishes_with="qemu-marker")
    connection = connector.connect(initiator(host), volume(export))
    assert "iscsiadm -m discovery -t sendtargets -p 10.0.0.5:3260 -o nonpersistent" in host.lines
    assert f"iscsiadm -m node -T {IQN} -p 10.0.0.5:3260 -l" in host.lines
    assert found == [{"what": f"iSCSI {IQN}", "details": {"target_iqn": IQN, "portal": "10.0.0.5:3260", "session": "1"}}]
    assert connection.details["portal"] == "10.0.0.5:3260"
    session, device = run.ledger.entries.values()
    assert session.attrs["vanishes_with"] == "qemu-marker" and session.attrs["what"] == f"iSCSI session {IQN} via 10.0.0.5:3260"
    assert device.attrs["vanishes_with"] == "qemu-marker" and device.attrs["what"] == f"SCSI device {WWN} of iSCSI {IQN}"


def test_iscsi_refuses_a_target_the_portal_does_not_advertise(run: Run) -> None:
    connector = IscsiConnector(ProtocolConfig(name="iscsi-a", connector="iscsi"), run)
    with pytest.raises(HostError, match=f"portal 10.0.0.5:3260 does not advertise {IQN}"):
        connector.connect(initiator(FakeHost(advertised="")), volume(IscsiExport(portal="10.0.0.5:3260", target_iqn=IQN)))


def test_iscsi_chap_password_is_a_reference_resolved_at_login_and_redacted(
    run: Run, found: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "chap-secret-" + "x" * 12
    monkeypatch.setenv("IOGATE_TEST_CHAP", secret)
    options = {"chap_user": "alice", "chap_password": "${env:IOGATE_TEST_CHAP}", "discovery": False}
    connector = IscsiConnector(ProtocolConfig(name="iscsi-a", connector="iscsi", options=options), run)
    host = FakeHost()
    connector.connect(initiator(host), volume(IscsiExport(portal="10.0.0.5:3260", target_iqn=IQN)))
    assert any(line.endswith(f"-n node.session.auth.password -v {secret}") for line in host.lines)
    # The record never holds a credential; the ledger entry (written to disk) does not either.
    assert all(secret not in repr(entry.attrs) for entry in run.ledger.entries.values())
    assert secret not in redact(f"login failed with {secret}")  # resolving registered it for redaction


def test_nvme_tcp_connects_to_the_records_address_and_subsystem(run: Run, found: list[dict[str, Any]]) -> None:
    host = FakeHost(advertised=f"subnqn: {NQN}\n")
    connector = NvmeTcpConnector(ProtocolConfig(name="nvme", connector="nvme-tcp"), run)
    export = NvmeTcpExport(traddr="10.0.0.6", subsys_nqn=NQN, trsvcid="4421", nsid=1, vanishes_with="qemu-marker")
    connection = connector.connect(initiator(host), volume(export, identity=DeviceIdentity(nguid="0" * 32)))
    assert "nvme discover -t tcp -a 10.0.0.6 -s 4421" in host.lines
    assert f"nvme connect -t tcp -a 10.0.0.6 -s 4421 -n {NQN}" in host.lines
    assert connection.details["traddr"] == "10.0.0.6:4421" and connection.details["subsys_nqn"] == NQN
    (entry,) = run.ledger.entries.values()
    assert entry.attrs["vanishes_with"] == "qemu-marker" and "nvme disconnect -d" in entry.attrs["undo"]


def test_nvme_tcp_without_a_service_id_uses_4420(run: Run, found: list[dict[str, Any]]) -> None:
    host = FakeHost()
    connector = NvmeTcpConnector(ProtocolConfig(name="nvme", connector="nvme-tcp", options={"discovery": False}), run)
    connector.connect(initiator(host), volume(NvmeTcpExport(traddr="10.0.0.6", subsys_nqn=NQN, trsvcid="")))
    assert f"nvme connect -t tcp -a 10.0.0.6 -s 4420 -n {NQN}" in host.lines


def test_nfs_mounts_the_records_server_and_path(run: Run) -> None:
    host = FakeHost()
    connector = NfsConnector(ProtocolConfig(name="nfs", connector="nfs", options={"nconnect": 4}), run)
    export = NfsExport(server="10.0.0.7", path="/srv/iogate/v1", vanishes_with="qemu-marker")
    connection = connector.connect(initiator(host), volume(export, identity=DeviceIdentity(nfs_export="10.0.0.7:/srv/iogate/v1")))
    mountpoint = f"/mnt/iogate/{run.run_id}/nfs/v1"
    assert f"mkdir -p {mountpoint} && mount -t nfs -o vers=4.1,nconnect=4 10.0.0.7:/srv/iogate/v1 {mountpoint}" in host.lines
    assert connection.details["export"] == "10.0.0.7:/srv/iogate/v1" == export.source
    assert connection.device is None and connection.filename == f"{mountpoint}/iogate-v1.dat"
    assert connector._entries[("h1", "v1")].attrs["vanishes_with"] == "qemu-marker"


@pytest.mark.parametrize(
    ("connector_class", "connector_name", "message"),
    [
        (IscsiConnector, "iscsi", "has no iSCSI export \\(portal, target_iqn\\)"),
        (NvmeTcpConnector, "nvme-tcp", "has no NVMe/TCP export \\(traddr, subsys_nqn\\)"),
        (NfsConnector, "nfs", "has no NFS export"),
        (FcConnector, "fc", "has no FC export"),
        (BlockConnector, "block", "has no local block device"),
        (NbdConnector, "nbd", "has no local block device"),
    ],
)
def test_a_volume_without_the_connectors_record_is_refused_naming_protocol_and_volume(
    run: Run, connector_class: Any, connector_name: str, message: str
) -> None:
    """A volume exported another way (here: a BlockExport or an NFS export only) gets the connector's own message."""
    other = NfsExport(server="10.0.0.7", path="/p") if connector_class in (BlockConnector, NbdConnector) else BlockExport("/dev/loop0")
    connector = connector_class(ProtocolConfig(name=f"lab-{connector_name}", connector=connector_name), run)
    host = initiator(FakeHost())
    if connector_class is NbdConnector:
        host = Initiator(config=HostConfig(name="localhost"), host=FakeHost())
    with pytest.raises(HostError, match=f"protocol lab-{connector_name}: volume v1 {message}"):
        connector.connect(host, volume(other))


def test_fc_rescans_and_finds_the_lun_by_wwn(run: Run, found: list[dict[str, Any]]) -> None:
    host = FakeHost()
    connection = FcConnector(ProtocolConfig(name="fc", connector="fc"), run).connect(initiator(host), volume(FcExport(lun=3)))
    assert found == [{"what": f"FC LUN {WWN}", "details": None}] and connection.details["paths"] == ["/dev/sdx"]
    assert any("/sys/class/fc_host" in line for line in host.lines)


def test_block_connects_the_records_device_in_its_cgroup(run: Run) -> None:
    export = BlockExport(device="/dev/loop7", cgroup="/sys/fs/cgroup/blkio/iogate-x")
    connection = BlockConnector(ProtocolConfig(name="block", connector="block"), run).connect(initiator(FakeHost()), volume(export))
    assert (connection.device, connection.filename, connection.cgroup) == ("/dev/loop7", "/dev/loop7", "/sys/fs/cgroup/blkio/iogate-x")


def test_a_volume_holds_one_record_of_a_kind() -> None:
    with pytest.raises(ValueError, match="more than one export of a kind"):
        volume(BlockExport("/dev/loop0"), BlockExport("/dev/loop1"))
    both = volume(BlockExport("/dev/loop0"), FcExport())
    assert both.export_of(BlockExport) == BlockExport("/dev/loop0") and both.export_of(IscsiExport) is None
