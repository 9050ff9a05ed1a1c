"""Workload catalogs against the methodology digest's numbers, and their file:line errors."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.exports import BlockExport
from iogate.engines.fio.jobfile import job_options
from iogate.engines.workload import Extent, JobSpec, RateProcess, rate_split
from iogate.errors import LabFileError
from iogate.hosts.connectors.base import Connection
from iogate.lab import DeviceIdentity
from iogate.lab.profiles import PROFILES, resolve_profile
from iogate.procedures.dell import load_sweeps
from iogate.procedures.hitachi import load_tiles, tile_jobs
from iogate.procedures.iogen import load_iogen
from iogate.procedures.netapp import load_netapp
from iogate.procedures.placement import REGION_ALIGN_BYTES, hosts_for_groups, place_vms
from iogate.procedures.prefill import PREFILL
from iogate.units import parse_size_bytes

TILE = load_tiles().tile
DELL = load_sweeps().dell
IOGEN = load_iogen().iogen
NETAPP = load_netapp().netapp


def volume(name: str, size: int = 1 << 30) -> Volume:
    return Volume(name, size, DeviceIdentity(backing_file=f"/pool/{name}.img"), (BlockExport(device=f"/dev/{name}"),))


# -- Hitachi tile ------------------------------------------------------------------

def test_a_tile_is_25_vms_and_625_iops() -> None:
    vms = TILE.vms_of_tile()
    assert len(vms) == TILE.vm_count == 25
    assert sum(vm.target_iops for vm in vms) == TILE.total_iops == 625
    assert len({vm.name for vm in vms}) == 25


def test_tile_weights_targets_and_counts_are_the_digests() -> None:
    table = {(vm.profile, vm.level): (vm.weight, vm.count) for vm in TILE.vms}
    assert table == {
        ("SQL", "light"): (10, 3), ("SQL", "medium"): (25, 1), ("SQL", "heavy"): (70, 1),
        ("Web", "light"): (10, 6), ("Web", "medium"): (25, 2), ("Web", "heavy"): (70, 2),
        ("Exchange", "light"): (10, 3), ("Exchange", "medium"): (25, 1), ("Exchange", "heavy"): (70, 1),
        ("OLTP", "light"): (10, 3), ("OLTP", "medium"): (25, 1), ("OLTP", "heavy"): (70, 1),
    }
    # The weight is the VM's target IOPS.
    assert {vm.level: vm.target_iops for vm in TILE.vms_of_tile() if vm.kind == "Web"} == {"light": 10, "medium": 25, "heavy": 70}
    per_kind = {kind: sum(vm.target_iops for vm in TILE.vms_of_tile() if vm.kind == kind) for kind in TILE.io_profiles}
    assert per_kind == {"SQL": 125, "Web": 250, "Exchange": 125, "OLTP": 125}


def test_tile_io_profiles_disks_and_duration_are_the_digests() -> None:
    profiles = {name: (parse_size_bytes(p.bs), p.random_pct, p.read_pct) for name, p in TILE.io_profiles.items()}
    assert profiles == {"SQL": (64 << 10, 100, 66), "Web": (8 << 10, 75, 95), "Exchange": (8 << 10, 80, 55), "OLTP": (8 << 10, 100, 70)}
    assert (TILE.disk_fill_pct, TILE.io_span_pct) == (50, 20)
    assert TILE.disk_gb * TILE.vm_count == 1600
    assert TILE.tiles["full"] == 10
    assert PROFILES["full"].tile_runtime_s == TILE.baseline_hours * 3600
    # Smoke shortens the time, never the targets: 4 judged 5 s intervals + fio's exit second + the grid's half-second.
    assert TILE.runtime_s(PROFILES["smoke"].tile_runtime_s) == 22
    assert TILE.runtime_s(PROFILES["full"].tile_runtime_s) == 6 * 3600


def test_scaled_tile_scales_targets_only() -> None:
    vms = TILE.vms_of_tile(scale=0.5)
    assert sum(vm.target_iops for vm in vms) == pytest.approx(312.5)
    assert [vm.io for vm in vms] == [vm.io for vm in TILE.vms_of_tile()]


@pytest.mark.parametrize(("total", "read_pct", "expected"), [
    (10, 66, "7,3"), (10, 95, "9,1"), (70, 95, "66,4"), (10, 100, "10,"), (10, 0, ",10"), (1, 50, "1,1"),
    (1, 70, "1,1"), (2, 70, "1,1"), (3, 99, "2,1"), (12.5, 70, "8,4"),  # 12.5 rounds to 12 (half to even); 70 % = 8.4
])
def test_rate_split_caps_each_direction_the_mix_has(total: int, read_pct: int, expected: str) -> None:
    assert rate_split(total, read_pct) == expected


def test_a_scaled_tile_judges_each_vm_against_the_whole_iops_fio_paces_it_at() -> None:
    """At a functional lab's load_scale 0.25 a 10 IOPS VM is paced at 2 (fio's rate is whole IOPS; 2.5 rounds half
    to even): judged against 2.5 it would miss every interval by design."""
    vols = [volume("v1", 64 << 30)]
    plan = tile_jobs(TILE, 1, ["h1"], vols, lambda v, h: Connection("block", h, v, "/dev/v1", "/dev/v1"),
                     runtime_s=21, ramp_s=2, scale=0.25)
    by_level = {name.split("-", 1)[1].rsplit("-", 1)[0]: target for name, target in plan.targets.items()}
    assert by_level == {f"{kind}-{level}": iops for kind in ("sql", "web", "exchange", "oltp")
                        for level, iops in (("light", 2.0), ("medium", 6.0), ("heavy", 18.0))}
    assert [job.workload.rate_iops for job in plan.jobs] == [job.target_iops for job in plan.jobs]
    assert [job.target_iops for job in plan.jobs] == list(plan.targets.values())


def test_a_scaled_tile_is_judged_over_intervals_holding_the_procedures_io_count() -> None:
    """5 s at full rate; 20 s at load_scale 0.25 (a 10 IOPS VM paced at 2-2.5 does 40-50 I/Os an interval, as at
    full rate); whole seconds, never fewer I/Os. The smoke tile then lasts 4 such intervals + 2 s (fio's exit second,
    and a grid that may begin half a second after the measured start)."""
    assert [TILE.judge_interval_ms_at(scale) for scale in (1.0, 0.5, 0.4, 0.25)] == [5000, 10000, 13000, 20000]
    assert TILE.runtime_s(PROFILES["smoke"].tile_runtime_s, 0.25) == 82
    assert TILE.runtime_s(PROFILES["smoke"].tile_runtime_s) == 22


def test_tile_vm_job_rate_is_its_target_and_stays_in_its_region() -> None:
    vm = next(v for v in TILE.vms_of_tile() if v.name == "web-light-1")
    (placement,) = place_vms([[vm.name]], ["h1"], [volume("v1")], span_pct=TILE.io_span_pct)
    workload = TILE.workload(vm, placement.region, runtime_s=30, ramp_s=5)
    connection = Connection("block", "h1", volume("v1"), "/dev/v1", "/dev/v1")
    options = job_options(JobSpec("t01-web-light-1", workload, connection, vm.target_iops), "/logs/x")
    # 95 % read at 10 IOPS: 9 reads + 1 write, not fio's "10" (= 10 each way).
    assert options["rate_iops"] == "9,1"
    assert workload.rate_iops == 10 and workload.rate_process is RateProcess.LINEAR  # one split, in the job renderer
    assert options["rate_process"] == "linear"
    assert workload.size == Extent.of_bytes(placement.region.span_bytes)
    assert parse_size_bytes(options["size"]) == placement.region.span_bytes
    assert placement.region.span_bytes == pytest.approx(0.2 * placement.region.region_bytes, abs=REGION_ALIGN_BYTES)
    assert (options["dedupe_percentage"], options["buffer_compress_percentage"]) == ("50", "50")


# -- layout ------------------------------------------------------------------------

def test_ten_tiles_on_two_hosts_go_one_to_five_then_six_to_ten() -> None:
    assert hosts_for_groups(10, ["h1", "h2"]) == ["h1"] * 5 + ["h2"] * 5
    assert hosts_for_groups(3, ["h1", "h2", "h3", "h4"]) == ["h1", "h2", "h3"]


def test_vm_disks_get_own_aligned_regions_round_robin_over_volumes() -> None:
    vols = [volume("v1"), volume("v2")]
    names = [vm.name for vm in TILE.vms_of_tile()]
    placements = place_vms([names, names], ["h1", "h2"], vols, span_pct=20)
    assert len(placements) == 50 and len({p.name for p in placements}) == 50
    assert {p.host for p in placements if p.group == 1} == {"h1"} and {p.host for p in placements if p.group == 2} == {"h2"}
    assert sum(p.region.volume == "v1" for p in placements) == 25
    for vol in ("v1", "v2"):
        regions = sorted((p.region for p in placements if p.region.volume == vol), key=lambda r: r.offset_bytes)
        for left, right in itertools.pairwise(regions):
            assert left.offset_bytes + left.region_bytes <= right.offset_bytes
        assert regions[-1].offset_bytes + regions[-1].region_bytes <= 1 << 30
        assert all(r.offset_bytes % REGION_ALIGN_BYTES == 0 and r.span_bytes % REGION_ALIGN_BYTES == 0 for r in regions)


def test_too_many_vms_for_the_volumes_is_an_error() -> None:
    with pytest.raises(ValueError, match="do not fit"):
        place_vms([[f"vm{i}" for i in range(100)]], ["h1"], [volume("v1", 1 << 20)])


# -- Dell sweep ----------------------------------------------------------------------

def test_dell_grid_is_the_digests() -> None:
    assert DELL.grid.read_pct == [0, 50, 70, 100]
    assert DELL.grid.bs == ["4k", "8k", "16k", "32k"]
    assert DELL.grid.threads == [1, 2, 4, 8, 16, 32]
    assert len(DELL.grid_for(PROFILES["full"]).points()) == 96
    assert (DELL.random_pct, DELL.warmup_s, DELL.elapsed_s) == (100, 20, 60)
    assert (PROFILES["full"].runtime_s, PROFILES["full"].ramp_s) == (DELL.elapsed_s, DELL.warmup_s)


def test_the_suites_prefill_is_dells() -> None:
    assert (PREFILL.read_pct, PREFILL.random_pct, PREFILL.bs, PREFILL.iodepth) == (0, 0, 256 << 10, DELL.prefill.threads)
    assert parse_size_bytes(DELL.prefill.bs) == 256 << 10
    assert (PREFILL.compress_pct, PREFILL.dedupe_pct) == (50, 50)


def test_profiles_shrink_the_grid() -> None:
    smoke = DELL.grid_for(PROFILES["smoke"]).points()
    quick = DELL.grid_for(PROFILES["quick"]).points()
    assert 3 <= len(smoke) <= 6 < len(quick) < 96
    assert [p.id for p in smoke] == ["rd70-4k-t1", "rd70-4k-t4", "rd70-4k-t16"]
    full = {p.id for p in DELL.grid.points()}
    assert {p.id for p in quick} <= full


def test_every_writing_workload_has_the_data_pattern() -> None:
    for point in DELL.grid.points():
        workload = DELL.workload(point, 60, 20)
        expected = (50, 50) if point.read_pct < 100 else (0, 0)
        assert (workload.compress_pct, workload.dedupe_pct) == expected, point.id
        assert workload.iodepth == point.threads and workload.random_pct == 100
    for case in IOGEN.cases:
        workload = IOGEN.workload(case, 1, 1, 4, 1)
        assert (workload.compress_pct, workload.dedupe_pct) == ((50, 50) if workload.writes else (0, 0))


def test_profile_file_replaces_grids(tmp_path: Path) -> None:
    path = tmp_path / "profile.yaml"
    path.write_text("base: smoke\ngrids:\n  sweep: {read_pct: [100], bs: [8k], threads: [2, 64]}\n  kpi_parallelism: [3]\n"
                    "  netapp: {vms: [4], bs: [8k], single_vm: false}\n")
    profile = resolve_profile("smoke", path)
    assert [p.id for p in DELL.grid_for(profile).points()] == ["rd100-8k-t2", "rd100-8k-t64"]
    assert IOGEN.throughput_steps(profile) == [3]
    assert [p.id for p in NETAPP.points(profile)] == ["vms4-8k"]


def test_a_bad_profile_grid_names_the_key(tmp_path: Path) -> None:
    path = tmp_path / "profile.yaml"
    path.write_text("base: smoke\ngrids:\n  sweep: {read_pct: [120], bs: [4k], threads: [1]}\n")
    with pytest.raises(LabFileError, match=r"grids\.sweep: read_pct\.0"):
        DELL.grid_for(resolve_profile("smoke", path))


# -- IOgen and NetApp ----------------------------------------------------------------

def test_iogen_cases_and_views() -> None:
    assert set(IOGEN.cases) == {"frontend_read", "backend_read", "frontend_write", "backend_write"}
    assert {c: (IOGEN.cases[c].read_pct, IOGEN.cases[c].working_set) for c in IOGEN.cases} == {
        "frontend_read": (100, "frontend"), "backend_read": (100, "backend"),
        "frontend_write": (0, "frontend"), "backend_write": (0, "backend")}
    assert (IOGEN.speed.processes, IOGEN.speed.iodepth) == (1, 1)
    assert IOGEN.throughput_steps(PROFILES["full"]) == [1, 2, 4, 8, 16, 32, 64]
    assert IOGEN.workload("frontend_read", 4, 1, 4, 1).size == Extent.of_bytes(16 << 20)  # 16MiB
    assert IOGEN.workload("backend_read", 4, 1, 4, 1).size is None


def test_netapp_points_are_the_digests() -> None:
    points = {p.id: p for p in NETAPP.points(PROFILES["full"])}
    scaling = [p for p in points.values() if p.disks_per_vm == 1]
    assert sorted({p.vms for p in scaling}) == [32, 64, 96, 128]
    assert sorted(p.outstanding_total for p in scaling if p.bs == "4k") == [64, 128, 192, 256]
    assert {(p.read_pct, p.random_pct) for p in scaling} == {(75, 100)}
    single = points["single-vm-8k-qd128"]
    assert (single.vms, single.disks_per_vm, single.outstanding_per_vm * single.disks_per_vm, single.read_pct) == (1, 2, 128, 60)
    assert (NETAPP.ramp_s, NETAPP.measure_s, NETAPP.restore_between_tests) == (600, 900, True)


# -- file errors -----------------------------------------------------------------------

def test_a_broken_catalog_names_file_and_line(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[2] / "workloads" / "vm_tiles.yaml").read_text()
    broken = tmp_path / "vm_tiles.yaml"
    good = "Web:      {bs: 8k,  random_pct: 75,  read_pct: 95}"
    broken.write_text(text.replace(good, good.replace("random_pct: 75, ", "random_pct: 175,")))
    line = next(n for n, text_line in enumerate(broken.read_text().splitlines(), 1) if "random_pct: 175" in text_line)
    with pytest.raises(LabFileError, match=rf"{broken} line {line}: tile\.io_profiles\.Web\.random_pct"):
        load_tiles(broken)


def test_a_vm_with_an_unknown_profile_is_refused(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[2] / "workloads" / "vm_tiles.yaml").read_text()
    broken = tmp_path / "vm_tiles.yaml"
    broken.write_text(text.replace("{profile: OLTP,     level: heavy", "{profile: DB2,      level: heavy"))
    with pytest.raises(LabFileError, match=r"DB2"):
        load_tiles(broken)
