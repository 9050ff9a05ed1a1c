"""The lab VM's vCPU threads: multi-threaded TCG by default, booting on one vCPU and bringing the rest up only
after the guest's modules are loaded; single on request (iogate/labs/labvm/vm.py)."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from iogate.labs.labvm import vm as vm_mod
from iogate.labs.labvm.image import Image, LabVMError
from iogate.labs.labvm.vm import GUEST_MODULES, LabVM, qemu_argv


def _argv(tcg_threads: str) -> list[str]:
    return qemu_argv(Image(Path("/cache")), marker="m", port=2222, pool_disk=Path("/p.raw"), serial_log=Path("/s.log"),
                     memory_mib=2048, cpus=2, tcg_threads=tcg_threads)


def _after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_single_threaded_boots_every_vcpu() -> None:
    argv = _argv("single")
    assert _after(argv, "-accel") == "tcg,thread=single"
    assert "maxcpus" not in _after(argv, "-append")
    assert _after(argv, "-smp") == "2"


def test_multi_threaded_by_default_booting_on_one_vcpu() -> None:
    argv = qemu_argv(Image(Path("/cache")), marker="m", port=2222, pool_disk=Path("/p.raw"), serial_log=Path("/s.log"),
                     memory_mib=2048, cpus=2)
    assert argv == _argv("multi")
    assert _after(argv, "-accel") == "tcg,thread=multi"
    assert _after(argv, "-append").split()[-1] == "maxcpus=1"
    assert _after(argv, "-smp") == "2"  # the second vCPU exists, offline until bring_up_cpus


def test_an_unknown_thread_mode_is_refused_naming_the_choices() -> None:
    with pytest.raises(LabVMError, match="'many': one of single, multi"):
        _argv("many")


class ScriptedGuest(LabVM):
    """A LabVM whose ssh answers from a script: what bring_up_cpus sent, and what lsmod says."""

    def __init__(self, online: str, modules: list[str]) -> None:
        super().__init__(image=Image(Path("/cache")), run=None, port=1, pid=1, marker="m", serial_log=Path("/s"),  # type: ignore[arg-type]
                         entries=[], tcg_threads="multi")
        self.online, self.loaded, self.sent = online, modules, []  # type: list[str]

    def ssh(self, command: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
        self.sent.append(command)
        said = "\n".join(self.loaded) if "/proc/modules" in command else f"some modprobe chatter\n{self.online}\n"
        return subprocess.CompletedProcess(command, 0, said, "")


def test_modules_load_before_the_other_vcpus_come_up() -> None:
    guest = ScriptedGuest("2", ["nvmet", "nvme_tcp"])
    guest.bring_up_cpus(2)
    script = guest.sent[0]
    assert script.index("modprobe -a " + GUEST_MODULES) < script.index("/sys/devices/system/cpu/cpu$cpu/online")
    assert "seq 1 1" in script
    assert guest.boot_modules == {"nvmet", "nvme_tcp"}
    guest.loaded = ["nvmet", "nvme_tcp", "xfs", "btrfs"]
    assert guest.modules_loaded_since_boot() == ["btrfs", "xfs"]


def test_a_vcpu_that_did_not_come_up_fails_the_boot() -> None:
    with pytest.raises(LabVMError, match="bringing 2 vCPUs online failed"):
        ScriptedGuest("1", []).bring_up_cpus(2)


def test_the_marker_is_on_the_guests_kernel_command_line() -> None:
    assert "iogate.marker=m" in _after(_argv("multi"), "-append").split()


class AnsweringGuest(LabVM):
    """A LabVM whose port is answered by a guest with the given kernel command line."""

    def __init__(self, cmdline: str) -> None:
        super().__init__(image=Image(Path("/cache")), run=None, port=10022, pid=1, marker="iogate-labvm-r2",  # type: ignore[arg-type]
                         serial_log=Path("/s"), entries=[], tcg_threads="multi")
        self.cmdline = cmdline

    def ssh(self, command: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 0, self.cmdline, "")


class Running:
    def poll(self) -> None:
        return None


def test_an_sshd_that_is_another_vms_is_refused() -> None:
    # A first lab VM holds the port; the second qemu failed to forward it, but its boot reached the first one's sshd.
    other = AnsweringGuest("root=LABEL=labvm-root quiet iogate.marker=iogate-labvm-r1 maxcpus=1\n")
    with pytest.raises(LabVMError, match="sshd on 127.0.0.1:10022 is not this VM's .*iogate.marker=iogate-labvm-r2"):
        vm_mod._wait_for_ssh(other, Running(), timeout_s=5)  # type: ignore[arg-type]


def test_its_own_sshd_is_accepted() -> None:
    vm_mod._wait_for_ssh(AnsweringGuest("root=LABEL=labvm-root iogate.marker=iogate-labvm-r2 maxcpus=1\n"), Running(),  # type: ignore[arg-type]
                         timeout_s=5)


def test_a_port_in_use_is_refused_before_qemu_starts() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(LabVMError, match=f"port 127.0.0.1:{port} .* is in use"):
            vm_mod.require_free_port(port)
    vm_mod.require_free_port(port)  # closed: free again
