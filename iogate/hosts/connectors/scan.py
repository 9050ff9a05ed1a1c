"""Find a host's block device by identity (WWN, NGUID, serial), never by its name.

One shell round trip lists the identity attributes of every block device in
sysfs (what /dev/disk/by-id is built from); iogate.hosts.identity.matches decides.
Shared by the iSCSI, NVMe/TCP, FC and multipath connectors.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from iogate.arrays.base import Volume
from iogate.errors import HostError
from iogate.hosts import identity
from iogate.hosts.connectors.base import Connection
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity

_LIST = r"""
for d in /sys/block/*; do
  n=${d##*/}
  case $n in loop*|ram*|zram*) continue;; esac
  # Hidden NVMe path devices (nvme0c0n1) have no /dev node: only the head is usable.
  [ "$(cat $d/hidden 2>/dev/null)" = 1 ] && continue
  [ -b /dev/$n ] || continue
  for key in wwid device/wwid nguid eui device/serial serial; do
    f=$d/$key
    [ -r "$f" ] && printf '%s\t%s\t%s\n' "$n" "$key" "$(head -c 200 "$f" | tr -d '\0\n' | tr -c '[:print:]' '.')"
  done
done
true
"""


def find_devices(initiator: Initiator, wanted: DeviceIdentity) -> list[str]:
    """Every /dev/<name> on the host whose sysfs identity is `wanted` (several = several paths)."""
    facts: dict[str, dict[str, str]] = defaultdict(dict)
    for line in initiator.run(_LIST).stdout.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3:
            facts[parts[0]][parts[1]] = parts[2]
    return sorted(f"/dev/{name}" for name, attrs in facts.items() if identity.matches(attrs, wanted))


def wait_for_devices(initiator: Initiator, wanted: DeviceIdentity, timeout_s: float, what: str) -> list[str]:
    """Poll (udev settling in between) until the device shows up; HostError naming it if not."""
    deadline = time.monotonic() + timeout_s
    while True:
        initiator.run_unchecked("udevadm settle -t 5 2>/dev/null")
        devices = find_devices(initiator, wanted)
        if devices:
            return devices
        if time.monotonic() > deadline:
            raise HostError(f"host {initiator.name}: {what}: no block device with {wanted.describe()} after {timeout_s:.0f} s")
        time.sleep(1)


def by_id_path(initiator: Initiator, device: str) -> str:
    """The stable /dev/disk/by-id name of a device (wwn-/nvme-eui. first), else the device itself."""
    script = (
        "for l in /dev/disk/by-id/wwn-* /dev/disk/by-id/nvme-eui.* /dev/disk/by-id/*; do "
        '[ -L "$l" ] && [ "$(readlink -f "$l")" = %s ] && { echo "$l"; break; }; done; true'
    )
    link = initiator.run(script, device).stdout.strip()
    return link or device


def device_connection(protocol: str, initiator: Initiator, volume: Volume, timeout_s: float, what: str,
                      details: dict[str, Any] | None = None) -> Connection:
    """The volume's block device once it shows up (found by identity), by its stable by-id path;
    every path found goes into the details as "paths"."""
    devices = wait_for_devices(initiator, volume.identity, timeout_s, what)
    return Connection.to_device(protocol, initiator.name, volume, by_id_path(initiator, devices[0]),
                                details={**(details or {}), "paths": devices})
