"""The nbd protocol really goes through nbdkit: fio's nbd engine -> Unix socket -> nbdkit -> the volume."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from iogate.arrays.local import LocalArray
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.hosts.connectors.nbd import NbdConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DEFAULT_LAB, Lab, load_lab
from iogate.run import Run
from selftests.exports import block_device

pytestmark = pytest.mark.integration


@pytest.fixture
def local_lab():  # type: ignore[no-untyped-def]
    """The embedded lab in a short workdir: a Unix socket path may not exceed 107 bytes (pytest's tmp_path can)."""
    workdir = tempfile.mkdtemp(prefix="iognbd-", dir="/tmp")
    yield load_lab(DEFAULT_LAB).model_copy(update={"workdir": workdir})
    shutil.rmtree(workdir, ignore_errors=True)


def nbdkit_serving(socket: str) -> list[int]:
    """Pids of nbdkit processes whose command line names this socket."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"nbdkit") and socket.encode() in argv:
                pids.append(int(entry.name))
    return pids


def unix_socket_entries(path: str) -> int:
    """Sockets bound to this path in /proc/net/unix: the listener plus one per accepted connection."""
    return sum(1 for line in Path("/proc/net/unix").read_text().splitlines()[1:] if line.split()[-1] == path)


def open_files(pid: int) -> set[str]:
    try:
        return {os.path.realpath(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    except OSError:
        return set()


def test_fio_drives_the_volume_through_nbdkit(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    volume = local_array.create_volume("v1", 64 << 20)
    guard = Guard()
    guard.admit(volume.identity)
    initiator = Initiator.from_config(local_lab.hosts[0])
    connector = NbdConnector(local_lab.protocol("nbd"), local_run)
    connection = connector.connect(initiator, volume)
    socket = connection.details["socket"]
    pids = nbdkit_serving(socket)
    assert len(pids) == 1, f"nbdkit for {socket}: {pids}"

    engine = FioEngine(local_run, {initiator.name: initiator}, guard)
    workload = WorkloadSpec("nbd-rw", read_pct=70, bs=4 << 10, iodepth=4, numjobs=2, runtime_s=3)
    peak_connections = 0
    device_open = False
    finished = threading.Event()

    def watch() -> None:
        nonlocal peak_connections, device_open
        while not finished.is_set():
            peak_connections = max(peak_connections, unix_socket_entries(socket) - 1)
            device_open = device_open or block_device(volume) in open_files(pids[0])
            time.sleep(0.1)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = engine.run_plan(RunPlan("nbd", (JobSpec("j", workload, connection),)))
    finally:
        finished.set()
        watcher.join()
    assert peak_connections >= 2, "fio's two processes never connected to nbdkit's socket"
    # nbdkit opened the volume's own loop device while serving: the I/O landed on the volume.
    assert device_open, f"nbdkit {pids[0]} never opened {block_device(volume)}"
    assert nbdkit_serving(socket) == pids
    assert result.total_iops > 0 and result.errors == 0
    fio_json = json.loads(Path(result.artifacts["localhost fio json+"]).read_text())
    options = fio_json["jobs"][0]["job options"]
    assert options["ioengine"] == "nbd"
    assert socket in options["uri"]
    assert "filename" not in options or not options["filename"].startswith("/dev/")

    connector.disconnect(initiator, connection)
    deadline = time.monotonic() + 5
    while nbdkit_serving(socket) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert nbdkit_serving(socket) == []
