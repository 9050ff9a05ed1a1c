"""Failures of the lab surface as what they are: a full pool under a prefill, fio's own abort."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.local import LocalArray
from iogate.engines.fio.runner import FioEngine
from iogate.engines.helper import require_complete
from iogate.engines.workload import Extent, JobSpec, RunPlan, WorkloadSpec
from iogate.errors import EngineError
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, HostLiveness, Lab
from iogate.procedures.prefill import PREFILL
from iogate.run import Run
from iogate.run.resources import release_all
from selftests.conftest import block_target

pytestmark = pytest.mark.integration


@pytest.fixture
def small_pool(local_lab: Lab, local_run: Run) -> Iterator[LocalArray]:
    """A 320 MiB pool (XFS's smallest) that thin volumes can over-commit."""
    options = {**local_lab.array.options, "pool_size": "320MiB"}
    lab = local_lab.model_copy(update={"array": local_lab.array.model_copy(update={"options": options})})
    array = LocalArray(lab, local_run)
    array.setup()
    yield array
    array.teardown()


def test_prefill_into_full_pool_names_volume_host_errno_and_bytes(local_lab: Lab, local_run: Run, small_pool: LocalArray) -> None:
    volume, connection, engine = block_target(local_lab, local_run, small_pool, "big", 512 << 20)
    plan = RunPlan("prefill", (JobSpec(f"prefill-{volume.name}", PREFILL, connection),))
    with pytest.raises(EngineError, match=r"prefill prefill failed: volume big on host localhost: errno (28|5) \(E(NOSPC|IO)") as caught:
        require_complete(plan, engine.run_plan(plan), "prefill")
    done = int(str(caught.value).split(" after ")[1].split(" bytes")[0])
    assert 0 < done < 512 << 20  # it wrote until the pool was full, not the whole volume


class _Blind(Guard):
    """A guard that admits everything: what fio alone would do with a bad device."""

    def check(self, initiator: Initiator, connection: Connection) -> None:
        return None


def test_fio_abort_on_mounted_device_is_an_engine_error(local_lab: Lab, tmp_path: Path) -> None:
    image, mnt = tmp_path / "m.img", tmp_path / "mnt"
    with image.open("wb") as handle:
        handle.truncate(32 << 20)
    mnt.mkdir()
    device = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True, check=True).stdout.strip()
    run = Run.start(tmp_path / "work", "abort")
    try:
        subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
        subprocess.run(["mount", device, str(mnt)], check=True)
        initiator = Initiator.from_config(local_lab.hosts[0])
        engine = FioEngine(run, {initiator.name: initiator}, _Blind())
        volume = Volume("m", 32 << 20, DeviceIdentity(backing_file=str(image)))
        target = Connection("block", initiator.name, volume, device, device)
        workload = WorkloadSpec("w", read_pct=0, runtime_s=1)
        with pytest.raises(EngineError, match="fio aborted.*appears mounted.*Aborting"):
            engine.run_plan(RunPlan("p", (JobSpec("w", workload, target),)))
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        subprocess.run(["losetup", "-d", device], check=False)
        release_all(run.ledger)


def test_fio_server_abort_is_an_engine_error_in_client_server_mode(tmp_path: Path) -> None:
    """The same abort relayed by a fio server ("<host> fio: ... Aborting.") stops a cluster run too."""
    import socket

    from iogate.engines.fio.client_server import ClientServerEngine
    from iogate.hosts.preflight import fio_server_problem
    from iogate.lab import HostConfig

    with socket.socket() as probe:  # a free port of our own for the server
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    image, mnt = tmp_path / "cs.img", tmp_path / "mnt"
    with image.open("wb") as handle:
        handle.truncate(32 << 20)
    mnt.mkdir()
    device = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True, check=True).stdout.strip()
    server = subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run = Run.start(tmp_path / "work", "csabort")
    try:
        # The server must listen before the client connects: on a loaded machine it took longer than the mkfs
        # and mount below, and the run failed "fio: failed to connect" (a make check failure at e99d873).
        deadline = time.monotonic() + 60
        while fio_server_problem(HostConfig(name="me", address="127.0.0.1"), port, timeout_s=1) is not None:
            assert server.poll() is None, f"fio --server exited {server.returncode}"
            assert time.monotonic() < deadline, f"fio --server on port {port} did not listen within 60 s"
            time.sleep(0.1)
        subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
        subprocess.run(["mount", device, str(mnt)], check=True)
        me = Initiator.from_config(HostConfig(name="me", address="127.0.0.1"))
        engine = ClientServerEngine(run, {"me": me}, _Blind(), port=port, liveness=HostLiveness(interval_s=1.0), stop_timeout_s=10)
        target = Connection("block", "me", Volume("m", 32 << 20, DeviceIdentity(backing_file=str(image))), device, device)
        with pytest.raises(EngineError, match="a server aborted: fio: .*appears mounted.*Aborting"):
            engine.run_plan(RunPlan("p", (JobSpec("w", WorkloadSpec("w", read_pct=0, runtime_s=1), target),)))
    finally:
        server.kill()
        server.wait()
        subprocess.run(["umount", str(mnt)], check=False)
        subprocess.run(["losetup", "-d", device], check=False)
        release_all(run.ledger)


def test_fio_past_its_deadline_is_an_engine_error(local_lab: Lab, local_run: Run, local_array: LocalArray,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """I/O that does not end (a hung or crawling array) is stopped by the engine's deadline, and that is an
    error: fio's json after the SIGTERM looks like a short, clean run."""
    import iogate.engines.fio.runner as runner

    monkeypatch.setattr(runner, "GRACE_S", 2)
    _, connection, engine = block_target(local_lab, local_run, local_array, "slow", 64 << 20)
    crawl = WorkloadSpec("crawl", read_pct=0, random_pct=0, time_based=False, runtime_s=1, size=Extent.of_bytes(64 << 20), rate_iops=20)
    with pytest.raises(EngineError, match=r"host localhost: fio did not end within 3 s"):
        engine.run_plan(RunPlan("p", (JobSpec("w", crawl, connection),)))
