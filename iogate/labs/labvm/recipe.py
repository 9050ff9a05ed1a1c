"""What the lab VM image holds, as one shell script run as root on the build host.

The script's text is the recipe: its hash is stamped next to the cached image,
so any change here rebuilds the image on the next `labvm build` or tier run.
"""

from __future__ import annotations

import hashlib

SUITE = "bookworm"

# Installed with apt inside the chroot (apt resolves dependencies better than
# debootstrap --include). No targetcli: it needs dbus; the driver writes configfs.
GUEST_PACKAGES = (
    "openssh-server",
    "open-iscsi",
    "nvme-cli",
    "nfs-kernel-server",
    "nfs-common",
    "fio",
    "lvm2",
    "thin-provisioning-tools",
    "mdadm",
    "iproute2",
    "procps",
    "initramfs-tools",
    "busybox",
    "e2fsprogs",
)

# Modules the guest kernel must load before root is mounted (loaded explicitly).
INITRD_MODULES = ("virtio_pci", "virtio_blk", "ext4")

BUILD_SCRIPT = r"""
set -euo pipefail
root=$1 mirror=$2 pubkey=$3 out=$4 image_size=$5 packages=$6 suite=$7 initrd_modules=$8

unmount_chroot() {
  for m in dev/pts dev sys proc; do
    if mountpoint -q "$root/$m"; then umount -l "$root/$m"; fi
  done
}
trap unmount_chroot EXIT
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }

debootstrap --variant=minbase --include=systemd-sysv,udev,kmod "$suite" "$root" "$mirror"
mount -t proc proc "$root/proc"; mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"; mount --bind /dev/pts "$root/dev/pts"
# Services must not start inside the chroot.
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"; chmod +x "$root/usr/sbin/policy-rc.d"
printf 'deb %s %s main\ndeb %s %s-backports main\n' "$mirror" "$suite" "$mirror" "$suite" > "$root/etc/apt/sources.list"
in_root apt-get update -q
in_root apt-get install -y -q --no-install-recommends $packages
printf '%s\n' $initrd_modules >> "$root/etc/initramfs-tools/modules"

# The backports kernel (6.12) runs about twice as fast under TCG and has dm-vdo.
if in_root apt-get install -y -q --no-install-recommends -t "$suite-backports" linux-image-amd64; then
  kernel_origin=backports
else
  in_root apt-get install -y -q --no-install-recommends linux-image-amd64
  kernel_origin=stock
fi
# vdoformat for dm-vdo volumes, where the mirror has it.
if in_root apt-get install -y -q --no-install-recommends -t "$suite-backports" vdo; then vdo_tools=yes; else vdo_tools=no; fi

echo labvm > "$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 labvm\n' > "$root/etc/hosts"
printf 'LABEL=labvm-root / ext4 defaults,noatime 0 0\n' > "$root/etc/fstab"
printf '[Match]\nName=e*\n[Network]\nDHCP=ipv4\n' > "$root/etc/systemd/network/20-dhcp.network"
in_root systemctl enable systemd-networkd ssh
in_root systemctl mask systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer \
  e2scrub_all.timer e2scrub_reap.service fstrim.timer serial-getty@ttyS0.service getty@tty1.service || true
install -d -m 700 "$root/root/.ssh"; install -m 600 "$pubkey" "$root/root/.ssh/authorized_keys"
printf 'PermitRootLogin prohibit-password\nUseDNS no\nPasswordAuthentication no\n' > "$root/etc/ssh/sshd_config.d/iogate.conf"
# Each boot of the image is one disposable lab: a fixed host NQN is fine.
[ -s "$root/etc/nvme/hostnqn" ] || { mkdir -p "$root/etc/nvme"; in_root nvme gen-hostnqn > "$root/etc/nvme/hostnqn"; }

in_root apt-get clean
rm -rf "$root/var/lib/apt/lists/"* "$root/usr/sbin/policy-rc.d"
unmount_chroot

cp "$(ls "$root"/boot/vmlinuz-* | sort -V | tail -1)" "$out/vmlinuz"
cp "$(ls "$root"/boot/initrd.img-* | sort -V | tail -1)" "$out/initrd.img"
basename "$(ls "$root"/boot/vmlinuz-* | sort -V | tail -1)" | sed 's/^vmlinuz-//' > "$out/kernel-release"
printf 'kernel_origin=%s\nvdo_tools=%s\n' "$kernel_origin" "$vdo_tools" > "$out/build-facts"
mkfs.ext4 -q -F -L labvm-root -d "$root" "$out/root.img" "$image_size"
"""


def recipe_hash(image_size: str) -> str:
    """The build recipe's fingerprint: script, packages, suite, size."""
    text = "\n".join([BUILD_SCRIPT, SUITE, " ".join(GUEST_PACKAGES), " ".join(INITRD_MODULES), image_size])
    return hashlib.sha256(text.encode()).hexdigest()[:16]
