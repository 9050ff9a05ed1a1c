"""Labs this suite builds on one machine, for its own self-tests and for trying it out.

    netns.py  network-namespace hosts (veth, iSCSI/NVMe-TCP/NFS targets on this machine)
    labvm/    the qemu lab VM: image build, boot, remote commands in the guest
              (`python -m iogate labvm ...`)

A real lab (a vendor array and real hosts) needs neither.
"""
