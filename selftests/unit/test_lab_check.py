"""`iogate lab check` and `iogate --help`: what a new user runs first.

The plan's figures are worked by hand from the example lab (4 x 100 GiB per set; Pure
exports a volume over one protocol, so iSCSI and NVMe/TCP each get a set, and the KPI
cases a third; Pure can snapshot, so one 256 MiB event volume).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.__main__ import main as iogate_main
from iogate.arrays.pure import Pure
from iogate.arrays.vendor_base import VendorSdk
from iogate.lab import load_lab, support
from iogate.lab.check import check
from iogate.lab.plan import EVENT_VOLUMES
from iogate.lab.reachable import array_lines
from iogate.units import parse_size_bytes

ROOT = Path(__file__).resolve().parents[2]
PURE = ROOT / "labs" / "examples" / "pure.yaml"
COMMANDS = ["cleanup", "percentiles", "report", "lab", "labvm", "export", "vdbench-parse"]


@pytest.fixture
def pure_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PURE_API_TOKEN", "example-api-token")


def test_iogate_help_lists_every_command_and_exits_0() -> None:
    done = subprocess.run([sys.executable, "-m", "iogate", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for command in COMMANDS:
        assert re.search(rf"^  {re.escape(command)} +\S", done.stdout, re.MULTILINE), command


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_exits_0(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert iogate_main([command, "--help"]) == 0
    assert "usage:" in capsys.readouterr().out


def test_lab_check_help_lists_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert iogate_main(["lab", "check", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--criteria", "--profile", "--connect", "lab"):
        assert option in out


def test_an_unknown_command_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert iogate_main(["no-such-command"]) == 2
    assert "unknown command 'no-such-command'" in capsys.readouterr().err


def test_example_lab_checks_offline_and_prints_its_plan(pure_token: None) -> None:
    ok, lines = check(PURE, profile_name="smoke")
    text = "\n".join(lines)
    assert ok, text
    assert "volumes  baseline, tiles, scaling, sweep, protocols over iscsi: 4 x 100 GiB = 400 GiB, prefilled" in text
    assert "volumes  sweep, protocols over nvme-tcp: 4 x 100 GiB = 400 GiB, prefilled" in text
    assert "volumes  kpi over iscsi: 4 x 100 GiB = 400 GiB, prefilled" in text
    assert "volumes  events (events-snap) over iscsi: 1 x 256 MiB = 256 MiB, prefilled" in text
    # 3 x 400 GiB + 256 MiB = 1200.25 GiB = 1.1721 TiB, 13 volumes, all of it prefilled
    assert "capacity 13 volume(s), 1.172 TiB provisioned at most at once; prefill writes 1.172 TiB" in text
    assert "skip     test_dedupe_during_load: array driver pure lacks capability dedupe" in text
    assert "test_replica_initial_sync: array driver pure lacks capability replicate (set array.options.protection_group)" in text
    assert "test_client_stepping" not in text  # two hosts: it runs
    assert re.search(r"^  estimate ~\S+ (min|h|s) in all", text, re.MULTILINE)
    assert lines[-1].startswith("lab check: everything holds")


def test_a_missing_sdk_fails_the_check_naming_file_and_line(pure_token: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(support.SDKS, "pure", ("iogate_no_such_sdk_module", "py-pure-client"))
    ok, lines = check(PURE)
    assert not ok
    (failed,) = [line for line in lines if line.lstrip().startswith("FAIL")]
    assert f"{PURE} line 9: array.driver: the pure driver needs the vendor SDK py-pure-client" in failed


def test_a_refused_lab_fails_the_check_with_file_and_line(tmp_path: Path) -> None:
    broken = tmp_path / "lab.yaml"
    broken.write_text((ROOT / "labs" / "local.yaml").read_text().replace("size: 1GiB", "size: 200"))
    ok, lines = check(broken)
    assert not ok
    assert any(re.search(rf"FAIL  {re.escape(str(broken))} line \d+: volumes.size: 200 has no unit", line) for line in lines), lines


def test_an_unknown_spec_fails_the_check(tmp_path: Path) -> None:
    ok, lines = check(ROOT / "labs" / "local.yaml", criteria=str(tmp_path / "missing.yaml"))
    assert not ok
    assert any("FAIL" in line and "missing.yaml" in line for line in lines)


def test_the_whole_suite_beyond_the_local_pool_fails_the_check(tmp_path: Path) -> None:
    # 4 x 1 GiB for baseline, 4 x 1 GiB for kpi, events 256 + 160 + 256 MiB = 8.656 GiB > 8 GiB.
    lab = tmp_path / "lab.yaml"
    lab.write_text((ROOT / "labs" / "local.yaml").read_text().replace("count: 2", "count: 4"))
    assert load_lab(lab).volumes.count == 4  # the lab's own set (4 GiB) fits: only the plan shows it will not
    ok, lines = check(lab)
    assert not ok
    assert any("array.options.pool_size: the run provisions 8.656 GiB of volumes" in line for line in lines), lines


def test_event_volume_sizes_are_the_tests_own() -> None:
    from tests import test_dedupe_during_load, test_mirror_impact, test_snapshot_impact

    assert dict((name, size) for _, name, size in EVENT_VOLUMES) == {
        "events-snap": parse_size_bytes(test_snapshot_impact.VOLUME_SIZE),
        "events-dedupe": test_dedupe_during_load.VOLUME_MIB << 20,
        "events-mirror": parse_size_bytes(test_mirror_impact.VOLUME_SIZE),
    }


def test_connect_reports_an_array_login_that_fails(pure_token: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(options: object, array: str) -> object:
        raise ConnectionRefusedError(f"{array}: connection refused")

    monkeypatch.setattr(Pure, "sdk", VendorSdk(connect=refuse, caller=Pure.sdk.caller, delete=Pure.sdk.delete))
    lab = load_lab(PURE)
    [(ok, text)] = array_lines(lab, Pure, Pure.Options.model_validate(lab.array.options))
    assert not ok and "flasharray-1: login and discovery failed" in text and "connection refused" in text


def test_a_static_lab_is_told_how_many_volumes_the_suite_asks_for() -> None:
    # The example lists one iSCSI LUN; the suite asks 2 (baseline set) + 2 (kpi) + 1 (snapshot hook) + 1 (dedupe hook).
    ok, lines = check(ROOT / "labs" / "examples" / "static.yaml")
    text = "\n".join(lines)
    assert ok, text
    assert "note     the whole suite asks the static array for 6 volume(s) over iscsi; the lab lists 1 of at least 160 MiB" in text
    assert "skip     test_replica_initial_sync: array driver static lacks capability replicate" in text
    assert "test_snapshot_impact" not in text and "test_dedupe_during_load" not in text  # its hooks do both


def test_the_check_says_which_families_the_labs_spec_leaves_unjudged(tmp_path: Path) -> None:
    """A spec judging baseline only, and events by the rules alone: the other families' tests would fail 'nothing
    judged' under it, and the check says so before a run (the families listed by hand, in the order of the spec's
    family names). Events names only no_errors: a rule every family gets, no check of the array."""
    spec = tmp_path / "two.yaml"
    spec.write_text("version: 1\nfamilies:\n  baseline:\n    checks:\n      iops_min:\n        criterion: throughput_min\n"
                    "        metric: iops\n        minimum: 100\n        source: '[hand-set] a floor'\n"
                    "  events:\n    checks:\n      no_errors:\n"
                    "        criterion: no_io_errors\n        source: '[hand-set] no I/O error'\n")
    ok, lines = check(ROOT / "labs" / "local.yaml", profile_name="smoke", criteria=str(spec))
    text = "\n".join(lines)
    assert ok, text
    assert (f"acceptance spec {spec} loads; it judges baseline "
            "(no checks for sweep, tiles, kpi, protocols, scaling, events, regression: their tests would fail 'nothing judged')"
            ) in text


def test_an_iscsi_lun_queue_below_the_protocol_points_outstanding_ios_is_named(tmp_path: Path) -> None:
    """The lab VM at open-iscsi's default LUN queue depth (32): 32 VMs x 2 I/Os on its one LUN is 64, the single VM's
    2 disks x 64 on it 128: the host holds half of them back. At the shipped depth of 128 neither is over."""
    lab = tmp_path / "labvm.yaml"
    lab.write_text("\n".join(line for line in (ROOT / "labs" / "labvm.yaml").read_text().splitlines() if "node_settings" not in line))
    ok, lines = check(lab, profile_name="smoke")
    text = "\n".join(lines)
    assert ok, text
    assert ("note     protocol iscsi: the protocols points keep more I/Os outstanding on one host's LUN (vms32-4k 64, "
            "single-vm-8k-qd128 128) than its iSCSI LUN queue depth 32 (node.session.queue_depth, open-iscsi's default)") in text
    ok, lines = check(ROOT / "labs" / "labvm.yaml", profile_name="smoke")
    assert ok and not any("queue depth" in line for line in lines), lines


def test_outstanding_ios_per_lun_follow_the_placement_over_hosts_and_volumes() -> None:
    from iogate.procedures.netapp import NetAppPoint, outstanding_per_lun

    vms32 = NetAppPoint("vms32-4k", vms=32, bs="4k", read_pct=75, random_pct=100, outstanding_per_vm=2)
    single = NetAppPoint("single", vms=1, bs="8k", read_pct=60, random_pct=100, outstanding_per_vm=64, disks_per_vm=2)
    assert outstanding_per_lun(vms32, ["h1"], 1, 1 << 30) == 64
    # VMs 1-16 on h1, 17-32 on h2, disks alternating over 2 volumes: 8 VMs x 2 per host and LUN.
    assert outstanding_per_lun(vms32, ["h1", "h2"], 2, 1 << 30) == 16
    assert outstanding_per_lun(single, ["h1", "h2"], 1, 1 << 30) == 128
    assert outstanding_per_lun(single, ["h1"], 2, 1 << 30) == 64  # one disk on each volume
