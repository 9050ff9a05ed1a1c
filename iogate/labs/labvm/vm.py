"""Boot the lab VM under qemu TCG and wait for its sshd.

The root disk is attached with snapshot=on: every boot starts from the cached
image and throws its writes away, so the image never needs repair. A second,
sparse virtio disk (serial "iogate-pool", /dev/disk/by-id/virtio-iogate-pool in
the guest) is the array's pool. The guest's network is qemu user mode with
restrict=on: it reaches nothing but itself; the host reaches its sshd through a
hostfwd on 127.0.0.1. qemu, the pool disk and the logs are in the run's ledger
(qemu with a marker in its command line, so `cleanup` finds it after a crash).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from iogate.labs.labvm.image import Image, LabVMError
from iogate.run import Run
from iogate.run.ledger import Entry
from iogate.run.resources import release
from iogate.units import parse_size_bytes

POOL_DISK_SERIAL = "iogate-pool"
POOL_DEVICE = f"/dev/disk/by-id/virtio-{POOL_DISK_SERIAL}"
BOOT_TIMEOUT_S = 300
# panic=1 oops=panic with qemu's -no-reboot: a guest kernel that oopses ends qemu at once, so the
# tests fail fast on "connection refused" with the console in the post-mortem, not after minutes
# of ssh timeouts against a dead guest.
# systemd.unified_cgroup_hierarchy=0: the cgroup v1 blkio hierarchy, whose root group takes throttle
# rules; v2 has no io.max on its root, and LIO's and nvmet's kernel threads submit from the root
# group, so only v1 lets an emulated array cap its volumes on the target side (selftests/vendors).
KERNEL_ARGS = ("root=LABEL=labvm-root rw console=ttyS0 net.ifnames=0 mitigations=off fsck.mode=skip "
               "systemd.show_status=0 quiet panic=1 oops=panic systemd.unified_cgroup_hierarchy=0")
MARKER_ARG = "iogate.marker"  # on the guest's kernel command line: the VM's marker, read back over ssh
# How qemu runs the vCPUs (qemu_argv says why each). "multi" boots the guest on one vCPU (maxcpus=1) and
# brings the others up once every module it uses is loaded (LabVM.bring_up_cpus).
TCG_THREADS = ("single", "multi")
DEFAULT_TCG_THREADS = "multi"  # the emulated spec's bounds were taken so (criteria/emulated.calibration.md)
# Every module the lab's array and initiator load in the guest (LIO with every backstore rtslib loads, nvmet,
# NFS server and client with its GSS module for 4.1, the iSCSI initiator and its SCSI disks, NVMe/TCP, LVM thin
# pools, mirrors, VDO), loaded while one vCPU runs (six of them added when the labvm tier caught them loading
# late). The labvm tier fails when the guest loaded any other module after its vCPUs came up
# (modules_loaded_since_boot).
GUEST_MODULES = ("configfs target_core_mod iscsi_target_mod target_core_iblock target_core_file target_core_pscsi "
                 "uio target_core_user nvmet nvmet_tcp nfsd nvme_tcp nvme_fabrics iscsi_tcp libiscsi_tcp sd_mod "
                 "nfs nfsv3 nfsv4 rpcsec_gss_krb5 dm_mod dm_thin_pool dm_snapshot raid1")
GUEST_MODULES_IF_BUILT = "dm_vdo"  # the backports kernel's (image.py build facts); the stock one has none


@dataclass
class LabVM:
    """A running guest: reach it at ssh://root@127.0.0.1:port with ssh_key."""

    image: Image
    run: Run
    port: int
    pid: int
    marker: str
    serial_log: Path
    entries: list[Entry]
    boot_seconds: float = 0.0
    tcg_threads: str = DEFAULT_TCG_THREADS
    boot_modules: frozenset[str] = frozenset()

    @property
    def transport(self) -> str:
        return f"ssh://root@127.0.0.1:{self.port}"

    @property
    def ssh_key(self) -> str:
        return str(self.image.ssh_key)

    def ssh_argv(self, command: str) -> list[str]:
        return [
            "ssh",
            "-i",
            self.ssh_key,
            "-p",
            str(self.port),
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "LogLevel=ERROR",
            "root@127.0.0.1",
            command,
        ]

    def ssh(self, command: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
        """Run a command in the guest (for set-up and diagnosis; drivers use testinfra)."""
        return subprocess.run(self.ssh_argv(command), capture_output=True, text=True, timeout=timeout_s, check=False)

    def set_clock(self) -> None:
        """Step the guest's clock to this machine's. It boots from qemu's RTC, which holds whole seconds,
        and under TCG it drifts while qemu is starved of CPU; the suite's preflight refuses a host more
        than 100 ms off (per-second logs must line up with the controller's event times). The time is
        sent once the guest's shell answers, so the connection's set-up does not make it stale."""
        setter = subprocess.Popen(self.ssh_argv('echo ready; read -r t; date -u -s "@$t" >/dev/null'),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert setter.stdin is not None and setter.stdout is not None
        try:
            if setter.stdout.readline().strip() == "ready":
                setter.stdin.write(f"{time.time():.6f}\n")
                setter.stdin.flush()
            _, said = setter.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            setter.kill()
            raise LabVMError(f"lab VM: setting its clock over SSH (port {self.port}) took over 60 s") from None
        if setter.returncode != 0:
            raise LabVMError(f"lab VM: cannot set its clock: exit {setter.returncode}: {said.strip()[-500:]}")

    def modules(self) -> frozenset[str]:
        """The modules loaded in the guest now."""
        listed = self.ssh("cut -d' ' -f1 /proc/modules", timeout_s=60)
        if listed.returncode != 0:
            raise LabVMError(f"lab VM: cannot list its modules: {listed.stderr.strip()[-300:]}")
        return frozenset(listed.stdout.split())

    def modules_loaded_since_boot(self) -> list[str]:
        """Modules loaded after the vCPUs came up: under multi-threaded TCG such a load may patch live code
        on one vCPU while another runs it (add them to GUEST_MODULES)."""
        return sorted(self.modules() - self.boot_modules)

    def bring_up_cpus(self, cpus: int) -> None:
        """Load GUEST_MODULES on the one vCPU the guest booted with, then bring the other vCPUs online."""
        script = (f"modprobe -a {GUEST_MODULES} && {{ modprobe -a {GUEST_MODULES_IF_BUILT} 2>/dev/null || true; }} && udevadm settle && "
                  f"for cpu in $(seq 1 {cpus - 1}); do echo 1 > /sys/devices/system/cpu/cpu$cpu/online; done; nproc")
        done = self.ssh(script, timeout_s=300)
        online = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
        if online != [str(cpus)]:
            raise LabVMError(f"lab VM: loading its modules and bringing {cpus} vCPUs online failed (exit {done.returncode}): "
                             f"{(done.stdout + done.stderr).strip()[-500:]}")
        self.boot_modules = self.modules()

    def alive(self) -> bool:
        try:
            return self.marker in Path(f"/proc/{self.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return False

    def stop(self) -> list[str]:
        """Stop qemu (no guest shutdown: it hangs with sessions open; the disks are disposable)."""
        if self.alive():
            os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.1)
        return release(self.run.ledger, self.entries)


def require_free_port(port: int) -> None:
    """Refuse a port something already listens on: qemu would fail to forward it, and the sshd answering
    there (another lab VM) would pass for this one's."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise LabVMError(f"lab VM: port 127.0.0.1:{port} (the lab's ssh transport) is in use ({exc.strerror}): another lab VM "
                             f"(`python -m iogate labvm down --workdir <its workdir>`) or another program listens there") from None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def qemu_argv(image: Image, *, marker: str, port: int, pool_disk: Path, serial_log: Path, memory_mib: int, cpus: int,
              tcg_threads: str = DEFAULT_TCG_THREADS) -> list[str]:
    if tcg_threads not in TCG_THREADS:
        raise LabVMError(f"lab VM: tcg_threads {tcg_threads!r}: one of {', '.join(TCG_THREADS)}")
    return [
        "qemu-system-x86_64",
        "-name",
        marker,
        # single: one host thread runs the vCPUs in turn, switching on qemu's 100 ms kick
        # (TCG_KICK_PERIOD) when both are busy: the guest's I/O stalls 100-430 ms in several
        # seconds of an emulated tile (issue 30). multi: a host thread per vCPU (2 or fewer
        # stall seconds per tile where single had 8-13, docs/selftests.md); it raced the kernel's live code
        # patching (text_poke's int3: "Oops: int3" in __alloc_skb while udev loaded modules at
        # boot), hence the boot on one vCPU and the modules loaded before the others come up.
        # multi is the default; criteria/emulated.yaml was calibrated on it (#30).
        "-accel",
        f"tcg,thread={tcg_threads}",
        "-no-reboot",
        "-cpu",
        "max",
        "-m",
        str(memory_mib),
        "-smp",
        str(cpus),
        "-nographic",
        "-monitor",
        "none",
        "-serial",
        f"file:{serial_log}",
        "-kernel",
        str(image.kernel),
        "-initrd",
        str(image.initrd),
        "-append",
        # The marker on the kernel command line is how boot knows the sshd that answers is this VM's.
        f"{KERNEL_ARGS} {MARKER_ARG}={marker}" + (" maxcpus=1" if tcg_threads == "multi" else ""),
        "-drive",
        f"file={image.root},if=virtio,format=raw,snapshot=on,cache=unsafe",
        "-drive",
        f"file={pool_disk},if=none,id=pool,format=raw,cache=unsafe,discard=unmap",
        "-device",
        f"virtio-blk-pci,drive=pool,serial={POOL_DISK_SERIAL}",
        # restrict=on: the guest reaches nothing outside; hostfwd still lets us in.
        "-nic",
        f"user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:22",
    ]


PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """preexec_fn: ask the kernel to SIGKILL this child when its parent goes away."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


def launch(argv: list[str], *, stdout: IO[bytes] | int | None = None, die_with_caller: bool = False) -> subprocess.Popen[bytes]:
    """Start argv in its own session; with die_with_caller the kernel SIGKILLs it when the caller dies.

    PR_SET_PDEATHSIG fires when the parent *thread* that forked the child exits, not the process:
    call this from the main thread (never from a worker thread or executor), or the child is killed
    as soon as that thread ends.
    """
    preexec = die_with_parent if die_with_caller else None
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.STDOUT,
                            start_new_session=True, preexec_fn=preexec)


def boot(
    run: Run,
    image: Image,
    *,
    memory_mib: int = 2048,
    cpus: int = 2,
    pool_size: str = "16G",
    port: int | None = None,
    timeout_s: float = BOOT_TIMEOUT_S,
    die_with_caller: bool = False,
    tcg_threads: str = DEFAULT_TCG_THREADS,
) -> LabVM:
    """Start qemu, wait until root can log in over SSH; stop it again on failure."""
    if shutil.which("qemu-system-x86_64") is None:
        raise LabVMError("qemu-system-x86_64 not found (apt-get install qemu-system-x86)")
    if port:
        require_free_port(port)  # a port the caller named, before anything is made
    else:
        port = free_port()
    ledger = run.ledger
    entries: list[Entry] = []
    pool_disk = run.path("labvm", "pool.raw")
    serial_log = run.path("labvm", "serial.log")
    entries.append(entry := ledger.intend("file", path=str(pool_disk)))
    with pool_disk.open("wb") as handle:
        handle.truncate(parse_size_bytes(pool_size))
    ledger.created(entry)
    marker = f"iogate-labvm-{run.run_id}"
    argv = qemu_argv(image, marker=marker, port=port, pool_disk=pool_disk, serial_log=serial_log, memory_mib=memory_mib, cpus=cpus,
                     tcg_threads=tcg_threads)
    entries.append(entry := ledger.intend("process", name="qemu lab VM", marker=marker))
    started = time.monotonic()
    with run.path("labvm", "qemu.log").open("w") as qemu_log:
        process = launch(argv, stdout=qemu_log, die_with_caller=die_with_caller)
    ledger.created(entry, pid=process.pid)
    vm = LabVM(image=image, run=run, port=port, pid=process.pid, marker=marker, serial_log=serial_log, entries=entries,
               tcg_threads=tcg_threads)
    try:
        _wait_for_ssh(vm, process, timeout_s)
        if tcg_threads == "multi":
            vm.bring_up_cpus(cpus)
        vm.set_clock()
    except BaseException:
        vm.stop()
        raise
    vm.boot_seconds = time.monotonic() - started
    return vm


def _wait_for_ssh(vm: LabVM, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log = (vm.run.run_dir / "labvm" / "qemu.log").read_text(errors="replace").strip()
            raise LabVMError(f"lab VM: qemu exited {process.returncode} during boot: {log[-1000:]} (serial log {vm.serial_log})")
        try:
            answer = vm.ssh("cat /proc/cmdline", timeout_s=20)
        except subprocess.TimeoutExpired:
            answer = None
        if answer is not None and answer.returncode == 0:
            if f"{MARKER_ARG}={vm.marker}" in answer.stdout.split():
                return
            raise LabVMError(f"lab VM: the sshd on 127.0.0.1:{vm.port} is not this VM's (its kernel command line has no "
                             f"{MARKER_ARG}={vm.marker}): another machine answers on the lab's port")
        time.sleep(2)
    tail = vm.serial_log.read_text(errors="replace").splitlines()[-10:] if vm.serial_log.exists() else []
    raise LabVMError(f"lab VM: sshd on 127.0.0.1:{vm.port} not up after {timeout_s:.0f} s; serial log {vm.serial_log}:\n" + "\n".join(tail))
