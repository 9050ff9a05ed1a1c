"""Hitachi NAS VM tiles: "VMs reach and maintain the configured I/O target".

A tile is 25 VMs (SQL, Web, Exchange, OLTP x light/medium/heavy; 625 IOPS in
all, workloads/vm_tiles.yaml). Every VM is one fio job whose rate is its target
IOPS, on its own region of a lab volume (its disk; I/O on the first 20 % of
it); tiles go to hosts in blocks (tiles 1-5 on host 1, 6-10 on host 2) and VM
disks round-robin over the volumes. The tile count comes from --tiles, else the
lab YAML's `tiles`, else the profile (smoke 1, quick 2, full 10). A functional
lab's `load_scale` (the TCG lab VM: 0.25) multiplies every VM's target; each VM
is judged against the whole IOPS fio paces it at, over intervals stretched by
1 / load_scale (20 s at 0.25) so an interval holds as many I/Os as the procedure's.

Verdicts (spec family `tiles`): target_iops_held per VM over vdbench-like 5 s
intervals (naming every VM that missed), latency_bound per workload type
(SQL, Web, Exchange, OLTP judged separately); the rules every family gets
(no_errors, no_stall) on the run, all applied by the judge (iogate/judging/judge.py `targets`).
"""

from __future__ import annotations

import allure
import pytest

from fixtures.session import per_lab
from fixtures.suite import attach_table
from iogate.engines.workload import RunPlan
from iogate.metrics.resample import judged_series
from iogate.procedures.hitachi import load_tiles, tile_jobs

TILE = load_tiles().tile


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "tiles" in metafunc.fixturenames:
        def tiles(s):  # type: ignore[no-untyped-def]
            count = metafunc.config.getoption("tiles", None) or s.lab.tiles or TILE.tiles_for(s.profile)
            return [(f"{count}tile{'s' if count > 1 else ''}", count)]

        per_lab(metafunc, "tiles", tiles)


@pytest.mark.tiles
@pytest.mark.hitachi
@allure.epic("Hitachi VM tiles")
@allure.feature("tiles")
@allure.story("every VM reaches and maintains its IOPS target")
def test_vm_tiles(tiles, lab, prefilled, connect, measure, profile, judge):
    runtime_s = TILE.runtime_s(profile.tile_runtime_s, lab.load_scale)
    hosts = [h.name for h in lab.hosts]
    plan = tile_jobs(TILE, tiles, hosts, prefilled, lambda volume, host: connect(lab.baseline, volume, host),
                     runtime_s=runtime_s, ramp_s=profile.ramp_s, scale=lab.load_scale)
    for key, value in {"protocol": lab.baseline, "tiles": tiles, "vms": len(plan.jobs), "load_scale": lab.load_scale,
                       "judge_interval_s": TILE.judge_interval_ms_at(lab.load_scale) / 1000,
                       "target_iops_total": sum(plan.targets.values()), "runtime_s": runtime_s, "ramp_s": profile.ramp_s}.items():
        allure.dynamic.parameter(key, value)
    result = measure(RunPlan(f"tiles-x{tiles}", plan.jobs))
    by_job = {(j.host, j.name): j for j in result.jobs}
    attach_table("VMs", [{"vm": job.name, "host": job.target.host, "volume": job.target.volume.name,
                          "kind": plan.kinds[job.name], "target_iops": plan.targets[job.name],
                          "measured_iops": round(sum(d.iops for d in by_job[(job.target.host, job.name)].directions.values()), 1)}
                         for job in plan.jobs])
    series = judged_series(result, TILE.judge_interval_ms_at(lab.load_scale))
    kinds = {kind: set(plan.of_kind(kind)) for kind in sorted(set(plan.kinds.values()))}
    judge.targets("tiles", result, series, plan.targets, kinds, min_intervals=TILE.min_intervals)
