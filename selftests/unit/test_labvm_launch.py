"""The lab VM launcher: with die_with_caller the child dies with the process that started it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

PARENT = """
import sys
from iogate.labs.labvm.vm import launch
child = launch(["sleep", "600"], die_with_caller=sys.argv[1] == "1")
print(child.pid, flush=True)
sys.stdin.read()
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().split()[2] != "Z"


def _child_of_killed_parent(flag: str) -> int:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, flag], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    assert _alive(pid)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    return pid


def test_child_dies_when_caller_is_sigkilled() -> None:
    pid = _child_of_killed_parent("1")
    for _ in range(600):  # generous poll limit: fails only if the child never dies
        if not _alive(pid):
            break
        time.sleep(0.05)
    assert not _alive(pid)


def test_without_flag_child_outlives_caller() -> None:
    pid = _child_of_killed_parent("0")
    try:
        time.sleep(0.5)
        assert _alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_a_session_boots_the_vm_to_die_with_it_and_does_not_wait(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """fixtures/lab.py's bring-up (labvm up_with_caller): boot is asked for die_with_caller, the state file is
    written, and the call returns while qemu still runs (the session goes on; `down` stops it later)."""
    from iogate.labs.labvm import cli

    asked: dict[str, object] = {}

    class _Vm:
        transport, ssh_key, pid, marker, port, boot_seconds = "ssh 127.0.0.1:1", "/k", 1, "m", 1, 0.0

        def alive(self) -> bool:
            raise AssertionError("up_with_caller waited for qemu to end")

    def boot(run, image, **kwargs):  # type: ignore[no-untyped-def]
        asked.update(kwargs)
        return _Vm()

    monkeypatch.setattr(cli.image_mod, "ensure_image", lambda: object())
    monkeypatch.setattr(cli.vm_mod, "boot", boot)
    assert cli.up_with_caller(tmp_path) == 0
    assert asked["die_with_caller"] is True
    assert (tmp_path / cli.STATE_NAME).exists()
