"""The local array's dedupe pass really removes fio's duplicate blocks, and only those.

fio's dedupe_percentage makes that share of the written blocks (of size `bs`)
repeat an earlier block; the pass (iogate.arrays.dedupe_pass) hashes 64 KiB
blocks at 64 KiB offsets, so data written at bs=64k lines up with it, in
whatever order it was written. The fills write in random order, as a VM's
disk fills over time; one writes sequentially (duperemove, the pass before,
hashed per extent and found nothing in a file laid down as one extent).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.local import LocalArray
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import ArrayError
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, Lab
from iogate.run import Run

pytestmark = pytest.mark.integration

VOLUME_BYTES = 128 << 20


def filled(lab: Lab, run: Run, array: LocalArray, dedupe_pct: int, name: str = "dd", random_pct: int = 100) -> Volume:
    volume = array.create_volume(name, VOLUME_BYTES)
    guard = Guard()
    guard.admit(volume.identity)
    initiator = Initiator.from_config(lab.hosts[0])
    connection = BlockConnector(lab.protocols[0], run).connect(initiator, volume)
    fill = WorkloadSpec("fill", read_pct=0, random_pct=random_pct, bs=64 << 10, iodepth=8, time_based=False, runtime_s=0,
                        dedupe_pct=dedupe_pct)
    FioEngine(run, {initiator.name: initiator}, guard).run_plan(RunPlan("fill", (JobSpec("fill", fill, connection),)))
    return volume


def test_half_duplicate_blocks_are_reclaimed(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    filled(local_lab, local_run, local_array, dedupe_pct=50)
    evidence = local_array.dedupe_run()
    print(evidence)
    assert evidence["pool_used_before_bytes"] - evidence["pool_used_after_bytes"] == evidence["saved_bytes"]
    # Half the 128 MiB repeats earlier blocks; measured 62 MiB reclaimed (duperemove: 59-61). Require most of it.
    assert evidence["saved_bytes"] >= 0.35 * VOLUME_BYTES
    assert evidence["saved_bytes"] <= 0.55 * VOLUME_BYTES


def test_unique_blocks_reclaim_nothing(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    filled(local_lab, local_run, local_array, dedupe_pct=0)
    evidence = local_array.dedupe_run()
    print(evidence)
    assert abs(evidence["saved_bytes"]) <= 0.02 * VOLUME_BYTES


def test_a_second_pass_finds_little_left(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    filled(local_lab, local_run, local_array, dedupe_pct=50)
    first = local_array.dedupe_run()
    second = local_array.dedupe_run()
    assert second["saved_bytes"] <= 0.1 * first["saved_bytes"]


def test_a_scoped_pass_dedupes_its_volumes_only(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    """The dedupe event's pass over its datastore leaves the other volumes' duplicates for a later pass."""
    datastore = filled(local_lab, local_run, local_array, dedupe_pct=50, name="datastore")
    filled(local_lab, local_run, local_array, dedupe_pct=50, name="other")
    scoped = local_array.dedupe_run([datastore])
    assert scoped["scope"] == "datastore"
    # The datastore's own half (59-61 MiB measured unscoped), not the other volume's.
    assert 0.35 * VOLUME_BYTES <= scoped["saved_bytes"] <= 0.55 * VOLUME_BYTES
    rest = local_array.dedupe_run()
    assert rest["scope"] == "every volume in the pool"
    assert rest["saved_bytes"] >= 0.35 * VOLUME_BYTES


def test_a_sequential_fill_is_deduped_too(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    """Blocks, not extents: a volume written front to back (one extent) gives up its duplicates as well."""
    filled(local_lab, local_run, local_array, dedupe_pct=50, random_pct=0)
    evidence = local_array.dedupe_run()
    print(evidence)
    assert 0.35 * VOLUME_BYTES <= evidence["saved_bytes"] <= 0.55 * VOLUME_BYTES
    assert evidence["deduped_bytes"] >= evidence["saved_bytes"]


def test_a_volume_not_of_this_array_is_neither_deduped_nor_read(local_lab: Lab, local_run: Run, local_array: LocalArray,
                                                              tmp_path: Path) -> None:
    """A file the run did not make (here one beside the pool) is refused by name before anything reads it."""
    stranger_file = tmp_path / "stranger.img"
    stranger_file.write_bytes(bytes(1 << 20))
    stranger = Volume(name="stranger", size_bytes=1 << 20, identity=DeviceIdentity(backing_file=str(stranger_file)))
    with pytest.raises(ArrayError, match=f"volume stranger \\({stranger_file}\\) is not a volume of this array"):
        local_array.dedupe_run([stranger])
    now = datetime.now(UTC)
    with pytest.raises(ArrayError, match="volume stranger .* is not a volume of this array"):
        local_array.volume_metrics(stranger, now - timedelta(seconds=5), now)
