"""What the experiments start from: labs/labvm.yaml pointed at the VM `labvm up --workdir /var/tmp/iogate-exp`
started, its array set up (LinuxTarget) and the guest as the host. Run from a checkout with PYTHONPATH at its root."""
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from iogate.arrays.base import Volume
from iogate.arrays.linux_target import LinuxTarget
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab, load_lab, registry
from iogate.labs.labvm.vanishing import vanishing_with
from iogate.run import Run
from iogate.run.resources import release_all

WORK = "/var/tmp/iogate-exp"
LAB_FILE = Path(__file__).resolve().parents[3] / "labs" / "labvm.yaml"


def set_up() -> tuple[Lab, Run, LinuxTarget, Initiator]:
    lab = load_lab(LAB_FILE)
    state = json.loads(Path(WORK, "labvm.json").read_text())
    where = {"transport": state["transport"], "ssh_key": state["ssh_key"]}
    lab = lab.model_copy(update={"array": lab.array.model_copy(update={"options": {**lab.array.options, **where}}),
                                 "hosts": [h.model_copy(update=where) for h in lab.hosts], "workdir": WORK})
    lab = vanishing_with(lab, state["marker"])
    run = Run.start(WORK, "exp")
    array = LinuxTarget(lab, run)
    array.setup()
    return lab, run, array, Initiator.from_config(lab.hosts[0])


class Targets:
    """One volume per protocol, created on first use; `device(target)` connects it for one step and yields the
    path fio writes (target iscsi, nvme-tcp, or lv: the md device the iSCSI volume's target exports, no protocol)."""

    def __init__(self, lab: Lab, run: Run, array: LinuxTarget, guest: Initiator, prefix: str) -> None:
        self.lab, self.run, self.array, self.guest, self.prefix = lab, run, array, guest, prefix
        self.volumes: dict[str, Volume] = {}

    @contextmanager
    def device(self, target: str) -> Iterator[tuple[str, Volume]]:
        proto = "iscsi" if target == "lv" else target
        if proto not in self.volumes:
            self.volumes[proto] = self.array.create_volume(f"{self.prefix}{proto.replace('-', '')}", 256 << 20, export=proto)
        volume = self.volumes[proto]
        protocol = self.lab.protocol(proto)
        connector = registry.connector_class(protocol.connector)(protocol, self.run)
        connection = connector.connect(self.guest, volume)
        try:
            yield (connection.filename if target != "lv" else self.array._owned(volume).device), volume
        finally:
            connector.disconnect(self.guest, connection)

    def close(self) -> None:
        for volume in self.volumes.values():
            self.array.delete_volume(volume)
        self.array.teardown()
        release_all(self.run.ledger)


def jobs_32(guest: Initiator, dev: str, offsets_mib: Callable[[int], int], size_mib: int = 8) -> tuple[int, dict[str, Any]]:
    """vm001..vm032 (4k randrw 75/25, iodepth 2, 5 s + 1 s ramp), vmNNN at offsets_mib(NNN): fio's rc and json."""
    jobs = "".join(f"[vm{n:03d}]\noffset={offsets_mib(n)}m\n" for n in range(1, 33))
    text = (f"[global]\ndirect=1\nioengine=libaio\nfilename={dev}\ntime_based=1\nruntime=5\nramp_time=1\nrw=randrw\n"
            f"rwmixread=75\nbs=4k\niodepth=2\nsize={size_mib}m\n{jobs}")
    guest.run("printf '%%s' %s > /root/jobs32.fio", text)
    result = guest.run_unchecked("cd /root && fio --output-format=json jobs32.fio")
    return result.rc, json.loads(result.stdout[result.stdout.index("{"):])


def ios(job: dict[str, Any]) -> int:
    return int(job["read"]["total_ios"] + job["write"]["total_ios"])
