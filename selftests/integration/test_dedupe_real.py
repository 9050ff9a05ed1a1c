"""The local array's dedupe pass really removes fio's duplicate blocks, and only those.

fio's dedupe_percentage makes that share of the written blocks (of size `bs`)
repeat an earlier block; duperemove hashes 64 KiB blocks, so data written at
bs=64k lines up with it. duperemove 0.11 hashes per extent: a file laid down
sequentially is one extent and its duplicates go unseen, so the fill writes
in random order (one extent per block), as a VM's disk fills over time.
"""

from __future__ import annotations

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.local import LocalArray
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab
from iogate.run import Run

pytestmark = pytest.mark.integration

VOLUME_BYTES = 128 << 20


def filled(lab: Lab, run: Run, array: LocalArray, dedupe_pct: int, name: str = "dd") -> Volume:
    volume = array.create_volume(name, VOLUME_BYTES)
    guard = Guard()
    guard.admit(volume.identity)
    initiator = Initiator.from_config(lab.hosts[0])
    connection = BlockConnector(lab.protocols[0], run).connect(initiator, volume)
    fill = WorkloadSpec("fill", read_pct=0, random_pct=100, bs=64 << 10, iodepth=8, time_based=False, runtime_s=0, dedupe_pct=dedupe_pct)
    FioEngine(run, {initiator.name: initiator}, guard).run_plan(RunPlan("fill", (JobSpec("fill", fill, connection),)))
    return volume


def test_half_duplicate_blocks_are_reclaimed(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    filled(local_lab, local_run, local_array, dedupe_pct=50)
    evidence = local_array.dedupe_run()
    print(evidence)
    assert evidence["pool_used_before_bytes"] - evidence["pool_used_after_bytes"] == evidence["reclaimed_bytes"]
    # Half the 128 MiB repeats earlier blocks; measured 59-61 MiB reclaimed. Require most of it.
    assert evidence["reclaimed_bytes"] >= 0.35 * VOLUME_BYTES
    assert evidence["reclaimed_bytes"] <= 0.55 * VOLUME_BYTES


def test_unique_blocks_reclaim_nothing(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    filled(local_lab, local_run, local_array, dedupe_pct=0)
    evidence = local_array.dedupe_run()
    print(evidence)
    assert abs(evidence["reclaimed_bytes"]) <= 0.02 * VOLUME_BYTES


def test_a_second_pass_finds_little_left(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    filled(local_lab, local_run, local_array, dedupe_pct=50)
    first = local_array.dedupe_run()
    second = local_array.dedupe_run()
    assert second["reclaimed_bytes"] <= 0.1 * first["reclaimed_bytes"]


def test_a_scoped_pass_dedupes_its_volumes_only(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    """The dedupe event's pass over its datastore leaves the other volumes' duplicates for a later pass."""
    datastore = filled(local_lab, local_run, local_array, dedupe_pct=50, name="datastore")
    filled(local_lab, local_run, local_array, dedupe_pct=50, name="other")
    scoped = local_array.dedupe_run([datastore])
    assert scoped["scope"] == "datastore"
    # The datastore's own half (59-61 MiB measured unscoped), not the other volume's.
    assert 0.35 * VOLUME_BYTES <= scoped["reclaimed_bytes"] <= 0.55 * VOLUME_BYTES
    rest = local_array.dedupe_run()
    assert rest["scope"] == "every volume in the pool"
    assert rest["reclaimed_bytes"] >= 0.35 * VOLUME_BYTES
