"""Ground truth for target_iops_held: a tile on a volume the array caps by QoS.

The local array's cgroup blkio throttle caps a volume at exactly N IOPS (reads
and writes capped separately, in the tile's own read/write proportion). A tile
whose targets sum to 0.8 N must hold every target; the same tile scaled to
1.3 N cannot, and the verdict must say so and name the VMs that missed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from criteria.spec import load_named
from iogate.arrays.local import LocalArray
from iogate.catalog import TileSpec, VMJobs, load_tiles, tile_jobs
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import RunPlan
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab, QoS
from iogate.metrics.resample import judged_series
from iogate.metrics.types import RunResult
from iogate.run import Run
from iogate.verdict import Verdict

pytestmark = pytest.mark.integration

CAP_IOPS = 600  # N: the volume's total cap
RAMP_S = 2


@pytest.fixture
def tile() -> TileSpec:
    return load_tiles().tile


@pytest.fixture
def capped_tile_run(local_lab: Lab, local_run: Run, local_array: LocalArray, tile: TileSpec) -> Iterator:
    """run(scale) -> (jobs, result): one tile with targets x scale on a volume capped at CAP_IOPS."""
    reads = round(CAP_IOPS * tile.read_fraction)
    volume = local_array.create_volume("capped", 512 << 20, QoS(read_iops=reads, write_iops=CAP_IOPS - reads))
    guard = Guard()
    guard.admit(volume.identity)
    initiator = Initiator.from_config(local_lab.hosts[0])
    connection = BlockConnector(local_lab.protocols[0], local_run).connect(initiator, volume)
    engine = FioEngine(local_run, {initiator.name: initiator}, guard)

    def run(scale: float) -> tuple[VMJobs, RunResult]:
        jobs = tile_jobs(tile, 1, [initiator.name], [volume], lambda _v, _h: connection,
                         runtime_s=tile.runtime_s(0), ramp_s=RAMP_S, scale=scale)
        return jobs, engine.run_plan(RunPlan(f"tile-x{scale:.3g}", jobs.jobs))

    yield run


def held(jobs: VMJobs, result: RunResult, tile: TileSpec) -> Verdict:
    check = load_named("local").for_family("tiles")["targets_held"]
    return check.evaluate(judged_series(result, tile.judge_interval_ms), jobs.targets)


def test_tile_at_80_pct_of_the_cap_holds_every_target(capped_tile_run, tile: TileSpec) -> None:
    scale = 0.8 * CAP_IOPS / tile.total_iops
    jobs, result = capped_tile_run(scale)
    assert sum(jobs.targets.values()) == pytest.approx(0.8 * CAP_IOPS, rel=0.01)
    verdict = held(jobs, result, tile)
    assert verdict.passed, verdict.line()
    assert len(verdict.evidence) == tile.vm_count


def test_tile_at_130_pct_of_the_cap_fails_and_names_the_vms_that_missed(capped_tile_run, tile: TileSpec) -> None:
    scale = 1.3 * CAP_IOPS / tile.total_iops
    jobs, result = capped_tile_run(scale)
    assert sum(jobs.targets.values()) == pytest.approx(1.3 * CAP_IOPS, rel=0.01)
    # The cap really bit: the tile got about N, not 1.3 N.
    assert result.total_iops == pytest.approx(CAP_IOPS, rel=0.1)
    verdict = held(jobs, result, tile)
    assert not verdict.passed, verdict.line()
    missed = [row["vm"] for row in verdict.evidence if not row["passed"]]
    assert missed, verdict.line()
    for vm in missed:
        assert vm.split("/", 1)[1] in jobs.targets
    for vm in missed[:10]:  # the detail names the first ten, then counts the rest
        assert vm in verdict.detail
    # The VMs that ask most cannot be served their share first: every heavy VM missed.
    heavies = {f"localhost/{name}" for name in jobs.targets if "-heavy-" in name}
    assert heavies <= set(missed), verdict.detail
