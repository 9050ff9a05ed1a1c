"""A lab whose array and hosts live in a lab VM, told which qemu process they vanish with.

What a session leaves in the guest (LVM volumes, LIO and nvmet exports, iSCSI sessions, fio's working
directory) goes with the VM. The ledger journals it with the VM's qemu marker (`vanishes_with`), so
`iogate cleanup` after a killed session skips what went with the VM instead of reaching for it over
ssh, where it cannot connect, or where another lab VM answering on the same port would get the undo.
"""

from __future__ import annotations

from iogate.lab import Lab, registry

FIELD = "vanishes_with"


def vanishing_with(lab: Lab, marker: str) -> Lab:
    """The lab with every host, and the array where its driver has the option, marked with the VM's qemu marker."""
    update: dict[str, object] = {"hosts": [host.model_copy(update={FIELD: marker}) for host in lab.hosts]}
    if FIELD in registry.array_driver_class(lab.array.driver).Options.model_fields:
        update["array"] = lab.array.model_copy(update={"options": {**lab.array.options, FIELD: marker}})
    return lab.model_copy(update=update)
