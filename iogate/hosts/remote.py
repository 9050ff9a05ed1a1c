"""Resources on another host (a LUN on the target, a session on an initiator).

Kind "remote": the ledger keeps the host's transport and an idempotent undo
script; cleanup runs that script over the same transport. When the resource
lives inside the lab VM, `vanishes_with` names the VM's qemu marker: once that
process is gone, so is the resource, and there is nothing left to undo.
"""

from __future__ import annotations

from typing import Any

from iogate.hosts.initiator import Initiator
from iogate.lab import HostConfig
from iogate.run.ledger import Entry, Ledger
from iogate.run.resources import marker_pids, register_remover

KIND = "remote"


def intend(ledger: Ledger, host: Initiator, what: str, undo: str, vanishes_with: str | None = None) -> Entry:
    """Journal a remote resource (before creating it) with the script that removes it.

    `vanishes_with`: the qemu marker of the lab VM the resource lives in; by default the host's own
    (HostConfig.vanishes_with), so a host inside a lab VM journals nothing cleanup must reach once
    the VM is gone."""
    return ledger.intend(
        KIND,
        host=host.name,
        transport=host.config.transport,
        ssh_key=host.config.ssh_key,
        what=what,
        undo=undo,
        vanishes_with=vanishes_with or host.config.vanishes_with,
    )


def vanished(attrs: dict[str, Any]) -> bool:
    """Is the resource gone with the lab VM it lived in (no process carries the VM's marker any more)?"""
    marker = attrs.get("vanishes_with")
    return bool(marker) and not marker_pids(marker)


def _remove_remote(attrs: dict[str, Any]) -> str | None:
    if vanished(attrs):
        return None
    host = Initiator.from_config(HostConfig(name=attrs["host"], transport=attrs["transport"], ssh_key=attrs.get("ssh_key")))
    host.run(attrs["undo"])
    return f"removed {attrs['what']} on host {attrs['host']}"


register_remover(KIND, _remove_remote)
