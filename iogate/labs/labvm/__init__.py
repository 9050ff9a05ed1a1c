"""The lab VM: a Debian guest under qemu TCG that is a real Linux storage array.

It runs LIO (iSCSI), nvmet (NVMe/TCP), knfsd, LVM thin, dm-vdo and md RAID1,
with open-iscsi, nvme-cli and the NFS client as its own initiators, so the
protocol connectors and the linux_target driver run against real kernel code on
a machine whose own kernel has none of it. `recipe` says what the image holds,
`image` builds and caches it, `vm` boots it and waits for SSH, `cli` is
`python -m iogate labvm build|up|down`.
"""
