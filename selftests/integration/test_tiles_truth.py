"""Ground truth for target_iops_held: a tile on a volume the array caps by QoS.

The local array's cgroup blkio throttle caps a volume at exactly N IOPS (reads
and writes capped separately, in the tile's own read/write proportion). A tile
whose targets sum to 0.8 N must hold every target; the same tile scaled to
1.3 N cannot, and the verdict must say so and name the VMs that missed. The
0.8 N tile with its fio stopped (SIGSTOP) for two judging intervals must fail
too: fio logs nothing while stopped, and a missing interval is 0 IOPS.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.arrays.local import LocalArray
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import RunPlan
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.judging.spec import load_named
from iogate.lab import Lab, QoS
from iogate.metrics.resample import judged_series
from iogate.metrics.types import RunResult
from iogate.procedures.hitachi import TileSpec, load_tiles, tile_jobs
from iogate.procedures.placement import VMJobs
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
    # the targets are the whole IOPS fio paces each VM at: the rounding moves the sum by ~1 %
    assert sum(jobs.targets.values()) == pytest.approx(0.8 * CAP_IOPS, rel=0.02)
    verdict = held(jobs, result, tile)
    assert verdict.passed, verdict.line()
    assert len(verdict.evidence) == tile.vm_count


def test_tile_at_130_pct_of_the_cap_fails_and_names_the_vms_that_missed(capped_tile_run, tile: TileSpec) -> None:
    scale = 1.3 * CAP_IOPS / tile.total_iops
    jobs, result = capped_tile_run(scale)
    # the targets are the whole IOPS fio paces each VM at: the rounding moves the sum by ~1 %
    assert sum(jobs.targets.values()) == pytest.approx(1.3 * CAP_IOPS, rel=0.02)
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


def fio_pids(under: str) -> list[int]:
    """This test's own fio processes (main and job processes): command line names a job file under `under`."""
    found = subprocess.run(["pgrep", "-f", under], capture_output=True, text=True).stdout.split()
    return [int(p) for p in found if Path(f"/proc/{p}/comm").exists() and Path(f"/proc/{p}/comm").read_text().strip() == "fio"]


def stop_fio_for(under: str, after_s: float, stop_s: float) -> tuple[list[int], list[int]]:
    """SIGSTOP this test's fio `after_s` seconds after it appears, for `stop_s`; returns ([stop_ms], [cont_ms])."""
    stopped: list[int] = []
    resumed: list[int] = []

    def stall() -> None:
        while not (pids := fio_pids(under)):
            time.sleep(0.05)
        time.sleep(after_s)
        pids = fio_pids(under)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        stopped.append(int(time.time() * 1000))
        time.sleep(stop_s)
        resumed.append(int(time.time() * 1000))
        for pid in pids:
            os.kill(pid, signal.SIGCONT)

    threading.Thread(target=stall, daemon=True).start()
    return stopped, resumed


def test_a_tile_whose_fio_is_stopped_fails_naming_the_vms_and_the_intervals(capped_tile_run, local_run: Run,
                                                                             tile: TileSpec) -> None:
    """The tile that holds every target at 80 % of the cap (test above), with its fio SIGSTOPped for two judging
    intervals: no I/O completes, fio logs nothing, and every VM must miss the interval(s) inside the stop."""
    scale = 0.8 * CAP_IOPS / tile.total_iops
    stop_s = 2 * tile.judge_interval_s + 1  # always holds one whole judging interval, whatever the phase
    stopped, resumed = stop_fio_for(str(local_run.path("points")), RAMP_S + 3, stop_s)
    jobs, result = capped_tile_run(scale)
    assert stopped and resumed, "fio ended before it could be stopped"
    coarse = judged_series(result, tile.judge_interval_ms)
    verdict = held(jobs, result, tile)
    assert not verdict.passed, verdict.line()
    assert len(verdict.evidence) == tile.vm_count
    # Every VM stalled, so every VM missed, and the detail names ten of them with the intervals they missed.
    assert all(not row["passed"] and row["missed_intervals"] for row in verdict.evidence), verdict.detail
    for row in verdict.evidence[:10]:
        assert row["vm"] in verdict.detail
    assert "missed intervals" in verdict.detail
    # The judged interval(s) lying wholly inside the stop are 0 IOPS for every VM (fio's own clock stamps them).
    inside = {s.t_ms for s in coarse.samples if s.t_ms - tile.judge_interval_ms >= stopped[0] and s.t_ms <= resumed[0]}
    assert inside, f"no judged interval inside the stop [{stopped[0]}, {resumed[0]}]"
    for vm in jobs.targets:
        assert sum(s.iops for s in coarse.samples if s.job == vm and s.t_ms in inside) == 0, vm
