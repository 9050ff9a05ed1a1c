"""Find a host's block device by identity (WWN, NGUID, serial), never by its name.

One shell round trip lists the identity attributes of every block device in
sysfs (what /dev/disk/by-id is built from); iogate.hosts.identity.matches decides.
Shared by the iSCSI, NVMe/TCP, FC and multipath connectors.
"""

from __future__ import annotations

import shlex
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
  for key in wwid device/wwid nguid uuid eui device/serial serial; do
    f=$d/$key
    [ -r "$f" ] && printf '%s\t%s\t%s\n' "$n" "$key" "$(head -c 200 "$f" | tr -d '\0\n' | tr -c '[:print:]' '.')"
  done
done
true
"""


def device_facts(initiator: Initiator) -> dict[str, dict[str, str]]:
    """The sysfs identity attributes of every block device on the host, by kernel name."""
    facts: dict[str, dict[str, str]] = defaultdict(dict)
    for line in initiator.run(_LIST).stdout.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3:
            facts[parts[0]][parts[1]] = parts[2]
    return dict(facts)


def _matching(initiator: Initiator, wanted: DeviceIdentity) -> dict[str, dict[str, str]]:
    return {name: attrs for name, attrs in sorted(device_facts(initiator).items()) if identity.matches(attrs, wanted)}


def find_devices(initiator: Initiator, wanted: DeviceIdentity) -> list[str]:
    """Every /dev/<name> on the host whose sysfs identity is `wanted` (several = several paths)."""
    return [f"/dev/{name}" for name in _matching(initiator, wanted)]


def _wait(initiator: Initiator, wanted: DeviceIdentity, timeout_s: float, what: str, rescan: str | None) -> dict[str, dict[str, str]]:
    deadline = time.monotonic() + timeout_s
    while True:
        initiator.run_unchecked("udevadm settle -t 5 2>/dev/null")
        found = _matching(initiator, wanted)
        if found:
            return found
        if time.monotonic() > deadline:
            raise HostError(f"host {initiator.name}: {what}: no block device with {wanted.describe()} after {timeout_s:.0f} s")
        time.sleep(1)
        if rescan:
            # The array may map the volume after the first scan of a shared session/controller looked.
            initiator.run_unchecked(rescan)


def wait_for_devices(initiator: Initiator, wanted: DeviceIdentity, timeout_s: float, what: str,
                     rescan: str | None = None) -> list[str]:
    """Poll (udev settling in between, `rescan` run before each retry) until the device shows up;
    HostError naming it if not."""
    return [f"/dev/{name}" for name in _wait(initiator, wanted, timeout_s, what, rescan)]


def identity_links(facts: dict[str, str]) -> list[str]:
    """The /dev/disk/by-id names udev derives from a device's own identity (its WWN, NGUID, UUID).

    Never the names built from model and serial (nvme-<model>_<serial>, scsi-S<vendor>_<model>...):
    every namespace of an NVMe controller shares its serial, so that link points at whichever
    namespace udev saw last."""
    names: list[str] = []
    for key in ("wwid", "device/wwid"):
        kind, _, rest = facts.get(key, "").strip().lower().partition(".")
        if rest and kind in _WWID_LINK:
            names.append(f"{_WWID_LINK[kind]}{rest}")
    nguid = facts.get("nguid", "").strip().lower().replace("-", "")
    if nguid.strip("0"):
        names.append(f"nvme-eui.{nguid}")
    uuid = facts.get("uuid", "").strip().lower()
    if uuid.replace("-", "").strip("0"):
        names.append(f"nvme-uuid.{uuid}")
    return list(dict.fromkeys(names))


# sysfs wwid prefix -> the by-id link prefix udev's 60-persistent-storage.rules give it.
_WWID_LINK = {"naa": "wwn-0x", "eui": "nvme-eui.", "uuid": "nvme-uuid."}


def by_id_path(initiator: Initiator, device: str, facts: dict[str, str]) -> str:
    """The by-id link named after the device's own identity (`facts`, its sysfs attributes) that
    resolves to it, else the kernel name itself (found by identity a moment ago)."""
    names = [n for n in identity_links(facts) if "/" not in n]
    if not names:
        return device
    script = 'for n in %s; do l=/dev/disk/by-id/$n; [ -L "$l" ] && [ "$(readlink -f "$l")" = %s ] && { echo "$l"; break; }; done; true'
    link = initiator.run(script % (" ".join(shlex.quote(n) for n in names), "%s"), device).stdout.strip()
    return link or device


def device_connection(protocol: str, initiator: Initiator, volume: Volume, timeout_s: float, what: str,
                      details: dict[str, Any] | None = None, rescan: str | None = None) -> Connection:
    """The volume's block device once it shows up (found by identity), by a by-id path tied to that
    identity; every path found goes into the details as "paths"."""
    found = _wait(initiator, volume.identity, timeout_s, what, rescan)
    first = next(iter(found))
    devices = [f"/dev/{name}" for name in found]
    return Connection.to_device(protocol, initiator.name, volume, by_id_path(initiator, f"/dev/{first}", found[first]),
                                details={**(details or {}), "paths": devices})
