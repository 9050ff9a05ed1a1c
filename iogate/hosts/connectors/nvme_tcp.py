"""`nvme-tcp`: nvme-cli discover + connect to the volume's subsystem; the namespace is found by NGUID.

The volume's NvmeTcpExport carries `traddr`, `trsvcid` and `subsys_nqn`. The
host NQN is the initiator's own (/etc/nvme/hostnqn) unless the options name
one; the array must allow it. A vendor array presents one subsystem for every
volume mapped to a host, so the controller is shared
(iogate.hosts.connectors.sessions): the first volume of the run on a (host,
subsystem, address) connects, the next ones rescan its namespaces, the last one
to go disconnects it. The ledger holds that disconnect, of this controller only
(`nvme disconnect -d`, never `-n`, which would end every controller of the
subsystem); a controller that was there before the run is used, never ended.
A namespace has nothing of its own to remove: the kernel drops it when the
array unmaps it.
"""

from __future__ import annotations

import shlex
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from iogate.arrays.base import Volume
from iogate.arrays.exports import NvmeTcpExport
from iogate.errors import HostError
from iogate.hosts import remote
from iogate.hosts.connectors import scan, sessions
from iogate.hosts.connectors.base import Connection, JournalledConnector, required_export
from iogate.hosts.initiator import Initiator

# Every fabrics controller: name, transport, subsystem NQN, address ("traddr=..,trsvcid=.."), host NQN.
_CONTROLLERS = r"""
for c in /sys/class/nvme/nvme*; do
  [ -r "$c/subsysnqn" ] || continue
  printf '%s\t%s\t%s\t%s\t%s\n' "${c##*/}" "$(cat $c/transport)" "$(cat $c/subsysnqn)" "$(cat $c/address)" "$(cat $c/hostnqn 2>/dev/null)"
done; true
"""

# Disconnect the controller(s) named by $1 (a glob) that still are tcp to this subsystem and address.
_DISCONNECT = r"""
for c in /sys/class/nvme/{name}; do
  [ -r "$c/subsysnqn" ] || continue
  [ "$(cat $c/transport)" = tcp ] && [ "$(cat $c/subsysnqn)" = {nqn} ] || continue
  case ",$(cat $c/address)," in *,traddr={traddr},*) ;; *) continue;; esac
  case ",$(cat $c/address)," in *,trsvcid={trsvcid},*) nvme disconnect -d "${{c##*/}}" >/dev/null 2>&1;; esac
done; true
"""


class NvmeTcpOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    hostnqn: str | None = None
    nr_io_queues: int | None = None
    queue_size: int | None = None
    ctrl_loss_tmo_s: int | None = None
    discovery: bool = True
    device_timeout_s: float = 60


def _address(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split(",") if "=" in part)


def controller(initiator: Initiator, nqn: str, traddr: str, trsvcid: str, hostnqn: str | None = None) -> str | None:
    """The host's NVMe/TCP controller to `nqn` at traddr:trsvcid (from `hostnqn`, if given), if there is one."""
    for line in initiator.run(_CONTROLLERS).stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 5:
            continue
        name, transport, subsys, address, host = parts[:5]
        where = _address(address)
        if (transport, subsys, where.get("traddr"), where.get("trsvcid")) == ("tcp", nqn, traddr, trsvcid) and (
            hostnqn is None or host == hostnqn
        ):
            return name
    return None


def disconnect_script(nqn: str, traddr: str, trsvcid: str, name: str = "nvme*") -> str:
    return _DISCONNECT.format(name=name, nqn=shlex.quote(nqn), traddr=traddr, trsvcid=trsvcid)


class NvmeTcpConnector(JournalledConnector):
    Options: ClassVar[type[BaseModel]] = NvmeTcpOptions
    options: NvmeTcpOptions

    def connect(self, initiator: Initiator, volume: Volume) -> Connection:
        export = required_export(self.protocol.name, volume, NvmeTcpExport, "NVMe/TCP", "traddr", "subsys_nqn")
        traddr, trsvcid, nqn = export.traddr, str(export.trsvcid or 4420), export.subsys_nqn
        initiator.run("modprobe nvme-tcp 2>/dev/null || true")
        at = sessions.key(self.run, initiator.name, nqn, f"{traddr}:{trsvcid}")

        def rescan(name: str) -> None:
            initiator.run("nvme ns-rescan /dev/%s", name)

        shared = sessions.acquire(
            self.run, at, volume.name,
            existing=lambda: controller(initiator, nqn, traddr, trsvcid, self.options.hostnqn),
            rescan=rescan,
            log_in=lambda: self._connect(initiator, nqn, traddr, trsvcid, export.vanishes_with),
        )
        try:
            return scan.device_connection(self.protocol.name, initiator, volume, self.options.device_timeout_s, f"NVMe/TCP {nqn}",
                                          {"subsys_nqn": nqn, "traddr": f"{traddr}:{trsvcid}", "controller": shared.handle},
                                          rescan=f"nvme ns-rescan /dev/{shared.handle} >/dev/null 2>&1")
        except HostError:
            sessions.drop(self.run, at, volume.name, quiet=True)
            raise

    def _connect(self, initiator: Initiator, nqn: str, traddr: str, trsvcid: str, vanishes_with: str | None) -> sessions.Shared:
        # Before the connect the controller has no name yet: the undo ends any of ours at this address
        # (there was none before: `existing` found none).
        entry = remote.intend(self.run.ledger, initiator, f"NVMe/TCP controller {nqn} at {traddr}:{trsvcid}",
                              disconnect_script(nqn, traddr, trsvcid), vanishes_with)
        host_args = ["-q", self.options.hostnqn] if self.options.hostnqn else []
        try:
            if self.options.discovery:
                log = initiator.run("nvme discover -t tcp -a %s -s %s" + " %s" * len(host_args), traddr, trsvcid, *host_args).stdout
                if nqn not in log:
                    raise HostError(f"host {initiator.name}: discovery at {traddr}:{trsvcid} does not list {nqn}")
            extra = host_args[:]
            for flag, value in (
                ("--nr-io-queues", self.options.nr_io_queues),
                ("--queue-size", self.options.queue_size),
                ("--ctrl-loss-tmo", self.options.ctrl_loss_tmo_s),
            ):
                if value is not None:
                    extra += [flag, str(value)]
            initiator.run("nvme connect -t tcp -a %s -s %s -n %s" + " %s" * len(extra), traddr, trsvcid, nqn, *extra)
            name = controller(initiator, nqn, traddr, trsvcid, self.options.hostnqn)
            if name is None:
                raise HostError(f"host {initiator.name}: connected to {nqn} at {traddr}:{trsvcid}, but no such controller in sysfs")
        except HostError:
            sessions.release_quietly(self.run, entry)
            raise
        self.run.ledger.created(entry, undo=disconnect_script(nqn, traddr, trsvcid, name))
        return sessions.Shared(name, entry)

    def disconnect(self, initiator: Initiator, connection: Connection) -> None:
        export = connection.volume.export_of(NvmeTcpExport)
        if export is not None:
            address = f"{export.traddr}:{export.trsvcid or 4420}"
            sessions.drop(self.run, sessions.key(self.run, initiator.name, export.subsys_nqn, address), connection.volume.name)
