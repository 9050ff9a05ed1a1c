"""What a block device *is*: loop backing file, SCSI WWN, NVMe NGUID/EUI, serial.

Read from sysfs on the host that owns the device, so the same code checks local
loop devices, iSCSI LUNs on a remote initiator and NVMe namespaces in a guest.
"""

from __future__ import annotations

import shlex

from iogate.errors import HostError
from iogate.hosts import usage
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity

# One shell round trip reads every identity sysfs may hold for the device.
_PROBE = r"""
dev=$(readlink -f {dev}); name=$(basename "$dev")
[ -b "$dev" ] || {{ echo "missing=$dev"; exit 0; }}
echo "device=$dev"
echo "size_bytes=$(( $(cat /sys/block/$name/size) * 512 ))"
for key in loop/backing_file wwid device/wwid device/serial serial nguid eui device/vpd_pg83; do
  f=/sys/block/$name/$key
  [ -r "$f" ] && printf '%s=%s\n' "$key" "$(head -c 200 "$f" | tr -d '\0\n' | tr -c '[:print:]' '.')"
done
{usage}
true
"""


def read_identity(initiator: Initiator, device: str) -> dict[str, str]:
    """sysfs identity attributes of a block device on a host (keys like 'loop/backing_file')."""
    output = initiator.run(_PROBE.format(dev=shlex.quote(device), usage=usage.PROBE)).stdout
    facts: dict[str, str] = {}
    for key, value in (line.split("=", 1) for line in output.splitlines() if "=" in line):
        # Usage keys repeat (one line per mount, holder, partition): keep every one.
        facts[key] = f"{facts[key]}\n{value}" if key in usage.KEYS and key in facts else value
    if "missing" in facts:
        raise HostError(f"host {initiator.name}: {device} is not a block device ({facts['missing']})")
    return facts


def normalized(value: str) -> str:
    """An identity as bare lowercase hex: no naa./eui./nvme./uuid. prefix, no dashes."""
    # Linux shows an NVMe namespace with a UUID as wwid "uuid.<uuid>" (ONTAP's namespace identity).
    text = value.strip().lower()
    for prefix in ("naa.", "eui.", "nvme.", "uuid."):
        text = text.removeprefix(prefix)
    return text.replace("-", "")


def matches(facts: dict[str, str], identity: DeviceIdentity) -> bool:
    """True when the device's sysfs facts prove it is the identified device."""
    if identity.backing_file:
        return facts.get("loop/backing_file") == identity.backing_file
    if identity.wwn:
        wanted = normalized(identity.wwn)
        return any(normalized(facts.get(k, "")).endswith(wanted) for k in ("wwid", "device/wwid")) if wanted else False
    if identity.nguid:
        wanted = normalized(identity.nguid)
        return any(normalized(facts.get(k, "")) == wanted for k in ("nguid", "eui", "wwid"))
    if identity.serial:
        return any(facts.get(k, "").strip() == identity.serial for k in ("device/serial", "serial"))
    return False


def describe(facts: dict[str, str]) -> str:
    """The most telling identity of a device, for refusal messages."""
    for key in ("loop/backing_file", "wwid", "device/wwid", "nguid", "eui", "device/serial", "serial"):
        if facts.get(key):
            return f"{key.split('/')[-1]} {facts[key]}"
    return "no identity in sysfs"
