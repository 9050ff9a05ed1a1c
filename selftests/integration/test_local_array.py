"""The local array provisions real loop devices and leaves nothing behind."""

from pathlib import Path

import pytest

from iogate.arrays.local import LocalArray
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.lab import Lab, QoS
from iogate.run import Run
from iogate.run.resources import loop_backing_file
from selftests.conftest import block_target, loop_devices
from selftests.exports import block_device

pytestmark = pytest.mark.integration


def test_volumes_are_direct_io_loop_devices_in_an_xfs_pool(local_array: LocalArray) -> None:
    volume = local_array.create_volume("v1", 64 << 20)
    device = block_device(volume)
    assert loop_backing_file(device) == volume.identity.backing_file
    name = Path(device).name
    assert Path(f"/sys/block/{name}/loop/dio").read_text().strip() == "1"
    assert Path(f"/sys/block/{name}/size").read_text().strip() == str((64 << 20) // 512)
    mounts = Path("/proc/mounts").read_text()
    assert f" {local_array.pool_dir} xfs " in mounts
    assert [v.name for v in local_array.list_volumes()] == ["v1"]


def with_pool_on(lab: Lab, medium: str) -> Lab:
    options = {**lab.array.options, "pool_medium": medium}
    return lab.model_copy(update={"array": lab.array.model_copy(update={"options": options})})


def test_the_embedded_labs_pool_is_in_memory_not_on_this_machines_disk(local_array: LocalArray) -> None:
    """labs/local.yaml keeps its pool image in a tmpfs of pool_size in the run's directory: the host
    disk's stalls (journal commits, discards) are not in the lab's data path."""
    backing = Path(loop_backing_file(next(line.split()[0] for line in Path("/proc/mounts").read_text().splitlines()
                                          if line.split()[1] == str(local_array.pool_dir))))
    tmpfs = [line.split() for line in Path("/proc/mounts").read_text().splitlines() if line.split()[2] == "tmpfs"]
    holder = next((fields for fields in tmpfs if backing.is_relative_to(fields[1])), None)
    assert holder is not None, f"the pool image {backing} is on no tmpfs"
    assert Path(holder[1]).is_relative_to(local_array.run.run_dir)
    assert f"size={8 << 20}k" in holder[3]  # pool_size 8 GiB, as the kernel writes it


@pytest.mark.parametrize("medium", ["memory", "disk"])
def test_teardown_removes_everything(local_lab: Lab, local_run: Run, medium: str) -> None:
    array = LocalArray(with_pool_on(local_lab, medium), local_run)
    array.setup()
    volume = array.create_volume("v1", 32 << 20)
    array.set_qos(volume, QoS(read_iops=100))
    array.teardown()
    assert str(local_run.run_dir) not in loop_devices()
    assert str(local_run.run_dir) not in Path("/proc/mounts").read_text()
    assert not array.cgroup.exists()
    assert local_run.ledger.open_entries() == []


def test_snapshot_is_a_reflink_and_restore_rolls_back(local_array: LocalArray) -> None:
    volume = local_array.create_volume("v1", 16 << 20)
    image = Path(volume.identity.backing_file or "")
    with image.open("r+b") as handle:
        handle.write(b"A" * 4096)
    snapshot = local_array.snapshot_create(volume, "s1")
    with image.open("r+b") as handle:
        handle.write(b"B" * 4096)
    local_array.snapshot_restore(volume, snapshot)
    assert image.read_bytes()[:4096] == b"A" * 4096
    local_array.snapshot_delete(snapshot)
    assert not Path(snapshot.location).exists()


def test_qos_cap_is_exact(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    """The ground-truth lever: a 400 read IOPS cap holds within 3 % whatever the machine does."""
    _, connection, engine = block_target(local_lab, local_run, local_array, "v1", 64 << 20, QoS(read_iops=400))
    workload = WorkloadSpec("capped", read_pct=100, bs=4 << 10, iodepth=16, runtime_s=3)
    result = engine.run_plan(RunPlan("qos", (JobSpec("r", workload, connection),)))
    assert result.total("read").iops == pytest.approx(400, rel=0.03)
