"""A vendor array's one target / subsystem shared by a host's volumes, and the by-id name chosen.

The fake host keeps the state iscsiadm, nvme-cli and sysfs would: sessions and
controllers, the LUNs / namespaces the "array" maps to them (visible after a
login or a rescan, as on a real host), devices and by-id links; it refuses a
second login or connect as open-iscsi and nvme-cli do. The ledger's undo
scripts run against the same fake (what `iogate cleanup` would do after a crash).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.exports import IscsiExport, NvmeTcpExport
from iogate.errors import HostError
from iogate.hosts import remote
from iogate.hosts.connectors import scan, sessions
from iogate.hosts.connectors.iscsi import IscsiConnector
from iogate.hosts.connectors.nvme_tcp import NvmeTcpConnector
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, HostConfig, ProtocolConfig
from iogate.run import Run
from iogate.run.resources import release_all

IQN = "iqn.1992-08.com.netapp:sn.0123:vs.3"
PORTAL = "10.0.0.5:3260"
NQN = "nqn.1988-11.com.dell:powerstore:00:1090e0"


def wwn(n: int) -> str:
    return f"naa.624a9370{n:024x}"


def nguid(n: int) -> str:
    return f"{n:032x}"


def ns_uuid(n: int) -> str:
    return f"1a870dc9-e292-473e-8b44-{n:012x}"


class FakeHost:
    """An initiator's iSCSI sessions / NVMe controllers, block devices and by-id links."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.mapped: list[int] = []  # the array's volumes mapped to this host (LUNs / namespaces)
        self.sessions: dict[str, tuple[str, str]] = {}  # sid -> (iqn, portal)
        self.controllers: dict[str, tuple[str, str]] = {}  # name -> (nqn, address)
        self.devices: dict[str, dict[str, str]] = {}  # kernel name -> sysfs identity
        self.links: dict[str, str] = {}  # by-id name -> kernel name
        self.scsi_seen: set[int] = set()

    def _scan_scsi(self) -> None:
        if not self.sessions:
            return
        for n in self.mapped:
            if n not in self.scsi_seen:
                name = f"sd{chr(ord('a') + len(self.scsi_seen))}"
                self.scsi_seen.add(n)
                self.devices[name] = {"device/wwid": wwn(n)}
                self.links[f"wwn-0x{wwn(n)[4:]}"] = name
                self.links[f"scsi-SLIO-ORG_shared_{n}"] = name

    def _scan_nvme(self) -> None:
        for ctrl in self.controllers:
            for n in self.mapped:
                name = f"{ctrl}n{n}"
                if name not in self.devices:
                    self.devices[name] = {"nguid": nguid(n), "uuid": ns_uuid(n), "wwid": f"uuid.{ns_uuid(n)}"}
                    self.links[f"nvme-uuid.{ns_uuid(n)}"] = name
                    # udev's model_serial link: one name for every namespace of the controller
                    self.links["nvme-Linux_21f96b3888792e69ba5a"] = name

    def run(self, line: str) -> Any:
        self.lines.append(line)
        rc, out = 0, ""
        if line.startswith("iscsiadm -m session 2>"):
            out = "".join(f"tcp: [{sid}] {portal},1 {iqn} (non-flash)\n" for sid, (iqn, portal) in self.sessions.items())
        elif line.startswith("iscsiadm -m discovery"):
            out = f"{PORTAL},1 {IQN}\n"
        elif re.match(r"iscsiadm -m node -T \S+ -p \S+ -l$", line):
            _, _, _, _, iqn, _, portal, _ = line.split()
            if (iqn, portal) in self.sessions.values():
                rc, out = 15, "iscsiadm: default: 1 session requested, but 1 already present."
            else:
                self.sessions[str(len(self.sessions) + 1)] = (iqn, portal)
                self._scan_scsi()
        elif re.match(r"iscsiadm -m session -r \d+ -R", line):
            self._scan_scsi()
        elif " -u >/dev/null" in line:  # the session's undo: logout + node delete
            iqn = line.split()[4]
            self.sessions = {s: t for s, t in self.sessions.items() if t[0] != iqn}
            if not self.sessions:
                self.devices = {d: a for d, a in self.devices.items() if not d.startswith("sd")}
                self.scsi_seen.clear()
        elif "/device/delete" in line and "/sys/block/sd*" in line:
            wanted = re.search(r"\*([0-9a-f]{20,})\)", line).group(1)  # type: ignore[union-attr]
            self.devices = {d: a for d, a in self.devices.items() if not a.get("device/wwid", "").endswith(wanted)}
        elif line.startswith("nvme connect"):
            words = line.split()
            address = f"traddr={words[5]},trsvcid={words[7]}"
            if (words[9], address) in self.controllers.values():
                rc, out = 1, "already connected"
            else:
                self.controllers[f"nvme{len(self.controllers)}"] = (words[9], address)
                self._scan_nvme()
        elif line.startswith("nvme ns-rescan"):
            self._scan_nvme()
        elif line.startswith("nvme discover"):
            out = f"subnqn: {NQN}\n"
        elif "printf '%s\\t%s\\t%s\\t%s\\t%s\\n'" in line:  # the controller listing
            out = "".join(f"{name}\ttcp\t{nqn}\t{addr}\thostnqn\n" for name, (nqn, addr) in self.controllers.items())
        elif "nvme disconnect -d" in line:
            glob = re.search(r"/sys/class/nvme/(\S+); do", line).group(1)  # type: ignore[union-attr]
            for name in [c for c in self.controllers if fnmatch.fnmatch(c, glob)]:
                del self.controllers[name]
                self.devices = {d: a for d, a in self.devices.items() if not d.startswith(f"{name}n")}
        elif "for d in /sys/block/*" in line:  # scan's identity listing
            out = "".join(f"{d}\t{k}\t{v}\n" for d, attrs in self.devices.items() for k, v in attrs.items())
        elif "/dev/disk/by-id/$n" in line:
            names = line.split("for n in ", 1)[1].split("; do", 1)[0].split()
            device = re.search(r'= (\S+) \]', line).group(1)  # type: ignore[union-attr]
            out = next((f"/dev/disk/by-id/{n}\n" for n in names if f"/dev/{self.links.get(n)}" == device), "")
        return SimpleNamespace(command=line, rc=rc, stdout=out, stderr="")


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch) -> FakeHost:
    """The fake host, also where the ledger's undo scripts run (remote.Initiator.from_config)."""
    fake = FakeHost()
    monkeypatch.setattr(remote.Initiator, "from_config", staticmethod(lambda config: initiator(fake)))
    return fake


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    yield Run.start(tmp_path, "sessions")
    # Runs started in one second by one process share a run id: no test sees another's sessions.
    sessions._open.clear()


def initiator(fake: FakeHost) -> Initiator:
    return Initiator(config=HostConfig(name="h1", transport="ssh://root@h1"), host=fake)


def iscsi_volume(n: int) -> Volume:
    return Volume(f"v{n}", 1 << 30, DeviceIdentity(wwn=wwn(n)), (IscsiExport(portal=PORTAL, target_iqn=IQN, lun=n),))


def nvme_volume(n: int) -> Volume:
    return Volume(f"v{n}", 1 << 30, DeviceIdentity(nguid=nguid(n)), (NvmeTcpExport(traddr="10.0.0.6", subsys_nqn=NQN, nsid=n),))


def logins(fake: FakeHost) -> list[str]:
    return [line for line in fake.lines if line.endswith(" -l") or line.startswith("nvme connect")]


def session_entries(run: Run) -> list[Any]:
    return [e for e in run.ledger.entries.values() if e.attrs["what"].startswith(("iSCSI session", "NVMe/TCP controller"))]


def test_iscsi_volumes_on_one_target_share_one_session(host: FakeHost, run: Run) -> None:
    connector = IscsiConnector(ProtocolConfig(name="iscsi", connector="iscsi"), run)
    host.mapped = [1]
    first = connector.connect(initiator(host), iscsi_volume(1))
    host.mapped = [1, 2]
    second = connector.connect(initiator(host), iscsi_volume(2))
    assert len(logins(host)) == 1 and "iscsiadm -m session -r 1 -R" in host.lines
    assert first.details["paths"] == ["/dev/sda"] and second.details["paths"] == ["/dev/sdb"]
    assert (first.device, second.device) == (f"/dev/disk/by-id/wwn-0x{wwn(1)[4:]}", f"/dev/disk/by-id/wwn-0x{wwn(2)[4:]}")

    connector.disconnect(initiator(host), first)
    assert set(host.devices) == {"sdb"} and list(host.sessions.values()) == [(IQN, PORTAL)]
    assert [e.open for e in session_entries(run)] == [True]
    connector.disconnect(initiator(host), second)
    assert host.sessions == {} and host.devices == {}
    assert [e.open for e in session_entries(run)] == [False] and run.ledger.open_entries() == []


def test_iscsi_session_there_before_the_run_is_used_and_never_logged_out(host: FakeHost, run: Run) -> None:
    host.sessions["7"] = (IQN, PORTAL)
    host.mapped = [1]
    connector = IscsiConnector(ProtocolConfig(name="iscsi", connector="iscsi"), run)
    connection = connector.connect(initiator(host), iscsi_volume(1))
    assert logins(host) == [] and "iscsiadm -m session -r 7 -R" in host.lines and connection.details["paths"] == ["/dev/sda"]
    assert session_entries(run) == []
    connector.disconnect(initiator(host), connection)
    assert host.sessions == {"7": (IQN, PORTAL)} and host.devices == {}


@pytest.mark.parametrize("before", [False, True], ids=["ours", "there-before"])
def test_iscsi_cleanup_after_a_crash_logs_out_only_what_the_run_logged_in(host: FakeHost, run: Run, before: bool) -> None:
    if before:
        host.sessions["7"] = (IQN, PORTAL)
    host.mapped = [1, 2]
    connector = IscsiConnector(ProtocolConfig(name="iscsi", connector="iscsi"), run)
    for n in (1, 2):
        connector.connect(initiator(host), iscsi_volume(n))
    release_all(run.ledger)  # what `iogate cleanup` does with a dead run's journal
    assert host.devices == {}
    assert host.sessions == ({"7": (IQN, PORTAL)} if before else {})


def test_iscsi_a_volume_that_never_shows_up_logs_the_session_out_again(host: FakeHost, run: Run) -> None:
    connector = IscsiConnector(ProtocolConfig(name="iscsi", connector="iscsi", options={"device_timeout_s": 0}), run)
    with pytest.raises(HostError, match=f"no block device with wwn {wwn(1)}"):
        connector.connect(initiator(host), iscsi_volume(1))
    assert host.sessions == {} and run.ledger.open_entries() == []
    assert sessions.users(sessions.key(run, "h1", IQN, PORTAL)) == set()


def test_nvme_namespaces_of_one_subsystem_share_one_controller(host: FakeHost, run: Run) -> None:
    connector = NvmeTcpConnector(ProtocolConfig(name="nvme", connector="nvme-tcp"), run)
    host.mapped = [1]
    first = connector.connect(initiator(host), nvme_volume(1))
    host.mapped = [1, 2]
    second = connector.connect(initiator(host), nvme_volume(2))
    assert len(logins(host)) == 1 and "nvme ns-rescan /dev/nvme0" in host.lines
    # Each by its own namespace's UUID link, not the controller's model_serial link (now on nvme0n2).
    assert first.device == f"/dev/disk/by-id/nvme-uuid.{ns_uuid(1)}" and second.device == f"/dev/disk/by-id/nvme-uuid.{ns_uuid(2)}"
    connector.disconnect(initiator(host), first)
    assert list(host.controllers) == ["nvme0"] and not any("nvme disconnect" in line for line in host.lines)
    connector.disconnect(initiator(host), second)
    assert host.controllers == {} and run.ledger.open_entries() == []


def test_nvme_controller_there_before_the_run_is_never_disconnected(host: FakeHost, run: Run) -> None:
    host.controllers["nvme0"] = (NQN, "traddr=10.0.0.6,trsvcid=4420")
    host.mapped = [1]
    connector = NvmeTcpConnector(ProtocolConfig(name="nvme", connector="nvme-tcp"), run)
    connection = connector.connect(initiator(host), nvme_volume(1))
    assert logins(host) == [] and connection.details["paths"] == ["/dev/nvme0n1"]
    connector.disconnect(initiator(host), connection)
    release_all(run.ledger)
    assert list(host.controllers) == ["nvme0"] and session_entries(run) == []


def test_nvme_cleanup_after_a_crash_disconnects_the_runs_controller_only(host: FakeHost, run: Run) -> None:
    host.controllers["nvme0"] = (NQN, "traddr=10.0.0.7,trsvcid=4420")  # the same subsystem on another port: not ours
    host.mapped = [1]
    connector = NvmeTcpConnector(ProtocolConfig(name="nvme", connector="nvme-tcp"), run)
    connector.connect(initiator(host), nvme_volume(1))
    assert list(host.controllers) == ["nvme0", "nvme1"]
    release_all(run.ledger)
    assert list(host.controllers) == ["nvme0"]


def test_identity_links_are_the_devices_own_never_model_serial() -> None:
    namespace = {"wwid": f"uuid.{ns_uuid(3)}", "nguid": "00000000-0000-0000-0000-000000000003", "uuid": ns_uuid(3)}
    assert scan.identity_links(namespace) == [f"nvme-uuid.{ns_uuid(3)}", f"nvme-eui.{nguid(3)}"]
    assert scan.identity_links({"wwid": "eui.00ab", "nguid": "00000000-0000-0000-0000-000000000000"}) == ["nvme-eui.00ab"]
    assert scan.identity_links({"device/wwid": wwn(5)}) == [f"wwn-0x{wwn(5)[4:]}"]
    assert scan.identity_links({"device/serial": "21f96b3888792e69ba5a"}) == []


def test_by_id_path_falls_back_to_the_kernel_name_when_only_a_shared_link_exists(host: FakeHost) -> None:
    host.devices["nvme0n1"] = {"nguid": nguid(1)}
    host.links["nvme-Linux_21f96b3888792e69ba5a"] = "nvme0n1"
    assert scan.by_id_path(initiator(host), "/dev/nvme0n1", host.devices["nvme0n1"]) == "/dev/nvme0n1"
    host.links[f"nvme-eui.{nguid(1)}"] = "nvme0n1"
    assert scan.by_id_path(initiator(host), "/dev/nvme0n1", host.devices["nvme0n1"]) == f"/dev/disk/by-id/nvme-eui.{nguid(1)}"
