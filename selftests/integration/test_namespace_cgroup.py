"""A namespace host's processes go under the array's blkio cgroup when its block volume is connected.

Real kernel objects: a network namespace holding a sleeping process (as `lab up`
leaves sshd and fio --server), a cgroup v1 blkio group, the block connector; and a
namespace with nothing in it, which is an error naming the host and namespace.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.exports import BlockExport
from iogate.errors import HostError
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, HostConfig, ProtocolConfig
from iogate.run import Run

BLKIO = Path("/sys/fs/cgroup/blkio")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0 or not BLKIO.is_dir(), reason="network namespaces and blkio cgroups need root"),
]


@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"iogcgt{os.getpid() % 100000}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield name
    finally:
        for pid in subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split():
            subprocess.run(["kill", "-9", pid])
        subprocess.run(["ip", "netns", "del", name], check=True)


@pytest.fixture
def cgroup() -> Iterator[Path]:
    path = BLKIO / f"iogate-test-{os.getpid()}"
    path.mkdir()
    try:
        yield path
    finally:
        for pid in (path / "cgroup.procs").read_text().split():
            (BLKIO / "cgroup.procs").write_text(pid)
        path.rmdir()


def _connect(namespace: str, cgroup: Path, tmp_path: Path) -> None:
    host = Initiator.from_config(HostConfig(name="h9", transport="local://", namespace=namespace))
    volume = Volume(name="v0", size_bytes=1 << 20, identity=DeviceIdentity(backing_file="/nonexistent"),
                    exports=(BlockExport(device="/dev/null", cgroup=str(cgroup)),))
    run = Run.start(tmp_path, "cgroup")
    BlockConnector(ProtocolConfig(name="block", connector="block"), run).connect(host, volume)


def test_every_process_of_the_namespace_joins_the_volumes_cgroup(namespace: str, cgroup: Path, tmp_path: Path) -> None:
    sleeper = subprocess.Popen(["ip", "netns", "exec", namespace, "sleep", "300"])
    try:
        deadline = time.monotonic() + 30  # ip netns exec has to exec sleep inside the namespace first
        while str(sleeper.pid) not in subprocess.run(["ip", "netns", "pids", namespace], capture_output=True,
                                                      text=True).stdout.split():
            assert time.monotonic() < deadline, "sleep never showed up in its namespace"
            time.sleep(0.05)
        assert str(sleeper.pid) not in (cgroup / "cgroup.procs").read_text().split()
        _connect(namespace, cgroup, tmp_path)
        assert str(sleeper.pid) in (cgroup / "cgroup.procs").read_text().split()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_an_empty_namespace_is_an_error_naming_the_host(namespace: str, cgroup: Path, tmp_path: Path) -> None:
    with pytest.raises(HostError, match=rf"host h9: no process in network namespace {namespace} to put under {cgroup}"):
        _connect(namespace, cgroup, tmp_path)
