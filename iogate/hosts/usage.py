"""Whether a block device is in use: mounted, held, swapped on, or carrying file systems.

Identity says a device is the one the run may write; this says nobody else
depends on it right now. The guard asks both, and a device in use is refused
whatever the allow list or a static lab says: a write to a mounted file
system, an LVM physical volume, an md member or active swap destroys data
that fio alone would not protect (it refuses only mounted devices, and only
by name).

PROBE is a shell fragment run inside identity's probe (same round trip), with
$dev (the resolved device) and $name (its kernel name) set. It prints one line
per finding, for the device and each of its partitions:

    mount=NAME MOUNTPOINT      holder=NAME HOLDER [dm name]
    swap=NAME                  fs=NAME TYPE          pttype=TYPE
"""

from __future__ import annotations

# Mounts are matched by major:minor (field 3 of mountinfo) and by source (after
# " - "): btrfs reports a virtual major:minor, so the source is what names it.
PROBE = r"""
parts=$(for p in /sys/class/block/$name/*/partition; do [ -e "$p" ] && basename "$(dirname "$p")"; done)
for n in $name $parts; do
  d=$(cat /sys/class/block/$n/dev 2>/dev/null)
  awk -v d="$d" -v src="/dev/$n" -v n="$n" '{
    for (i = 7; i <= NF; i++) if ($i == "-") break
    if ($3 == d || $(i + 2) == src) print "mount=" n " " $5
  }' /proc/self/mountinfo
  for h in /sys/class/block/$n/holders/*; do
    [ -e "$h" ] && echo "holder=$n $(basename "$h") $(cat "$h/dm/name" 2>/dev/null)"
  done
  awk -v dv="/dev/$n" 'NR > 1 && $1 == dv {print "swap=" substr(dv, 6)}' /proc/swaps
  t=$(blkid -p -o value -s TYPE /dev/$n 2>/dev/null) && [ -n "$t" ] && echo "fs=$n $t"
done
pt=$(blkid -p -o value -s PTTYPE "$dev" 2>/dev/null) && [ -n "$pt" ] && echo "pttype=$pt"
"""
KEYS = frozenset({"mount", "holder", "swap", "fs", "pttype"})

# Signatures on the whole device that mean another system owns it even when
# nothing is active right now (an LVM PV of a VG not activated, an md member
# of an array not assembled, a swap area not switched on, an encrypted volume).
_OWNED_SIGNATURES = frozenset({"LVM2_member", "linux_raid_member", "swap", "crypto_LUKS", "zfs_member", "bcache", "ceph"})


def _lines(facts: dict[str, str], key: str) -> list[str]:
    return [line for line in facts.get(key, "").split("\n") if line.strip()]


def in_use(facts: dict[str, str], *, destructive: bool = False) -> list[str]:
    """Why the device must not be written (empty: free). `destructive` (the lab's word for a volume
    whose old contents may go) waives only the file-system checks, never a live mount, holder or swap."""
    device = facts.get("device", "").removeprefix("/dev/")
    reasons = []
    for line in _lines(facts, "mount"):
        name, _, target = line.partition(" ")
        what = "the root file system (/)" if target == "/" else f"a file system mounted at {target}"
        reasons.append(f"{_part(name, device)} carries {what}")
    for line in _lines(facts, "holder"):
        name, holder, *label = line.split()
        reasons.append(f"{_part(name, device)} is held by {holder}{f' ({label[0]})' if label else ''} (LVM, md or device-mapper)")
    for name in _lines(facts, "swap"):
        reasons.append(f"{_part(name, device)} is active swap")
    if destructive:
        return reasons
    signatures = [line.split(" ", 1) for line in _lines(facts, "fs")]
    partitions = [f"{name} ({kind})" for name, kind in signatures if name != device]
    if facts.get("pttype") and partitions:
        reasons.append(f"it has a {facts['pttype']} partition table with file systems on {', '.join(partitions)} "
                       "(mark the volume `destructive: true` if they may be overwritten)")
    for name, kind in signatures:
        if name == device and kind in _OWNED_SIGNATURES:
            reasons.append(f"it carries a {kind} signature (mark the volume `destructive: true` if it may be overwritten)")
    return reasons


def _part(name: str, device: str) -> str:
    return "it" if name == device else f"its partition {name}"
