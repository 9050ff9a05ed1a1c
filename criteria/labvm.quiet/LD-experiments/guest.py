"""What both experiments start from: labs/labvm.yaml pointed at the VM `labvm up --workdir /var/tmp/iogate-exp`
started, its array set up (LinuxTarget) and the guest as the host. Run from a checkout with PYTHONPATH at its root."""
import json
from pathlib import Path

from iogate.arrays.linux_target import LinuxTarget
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab, load_lab
from iogate.labs.labvm.vanishing import vanishing_with
from iogate.run import Run

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
