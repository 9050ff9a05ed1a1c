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
