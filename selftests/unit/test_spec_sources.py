"""Where a bound comes from, and which case a check judges: read from the spec, carried by every verdict.

Each check of a shipped spec says where its bound comes from (`source:`:
[published] with the reference, [vendor], [BUYER], calibrated N=..., or
[hand-set] with why); Check.evaluate puts it and the check's description on
the verdict, so a reviewer reads them beside the figures. The case lists that
check names are validated against (iogate/judging/cases.py) are the tests' own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.judging import cases
from iogate.judging.spec import SOURCE_KINDS, load_named, load_spec

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ["poc", "nightly", "local", "netns", "emulated"]


@pytest.mark.parametrize("name", SHIPPED)
def test_every_check_of_a_shipped_spec_says_where_its_bound_comes_from(name: str) -> None:
    spec = load_named(name)
    unsourced = [f"{family}.{check.name}" for family, checks in spec.families.items() for check in checks if not check.source]
    assert not unsourced, unsourced
    for checks in spec.families.values():
        for check in checks:
            assert any(check.source.startswith(kind) for kind in SOURCE_KINDS), check.source


@pytest.mark.parametrize("name", ["local", "netns", "emulated"])
def test_a_calibrated_spec_says_calibrated_for_every_bound_its_record_proposes(name: str) -> None:
    """A lab spec's figures come from its record; a check the record proposes a bound for is `calibrated N=...`."""
    record = (ROOT / "criteria" / f"{name}.calibration.md").read_text()
    spec = load_named(name)
    for family, checks in spec.families.items():
        for check in checks:
            proposed = [line for line in _rows(record, family) if line[0] == check.name and line[8]]
            if proposed:
                assert check.source.startswith("calibrated N="), (family, check.name, check.source)


def _rows(record: str, family: str) -> list[list[str]]:
    section = record.split(f"\n## {family}\n", 1)[1].split("\n## ", 1)[0] if f"\n## {family}\n" in record else ""
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| check ") and not line.startswith("| ---")]


def test_a_verdict_carries_the_checks_description_and_source(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("""\
version: 1
families:
  protocols:
    checks:
      iops_vs_baseline_protocol:
        criterion: relative_to_baseline
        description: Each protocol within 5 % of the baseline protocol.
        source: '[published] NetApp/VMware: within 5 % of the baseline'
        tolerance_pct: 5
""")
    check = load_spec(path).for_family("protocols")["iops_vs_baseline_protocol"]
    verdict = check.evaluate({"iscsi": 1000.0, "nvme": 549.0}, "iscsi")  # NVMe at 54.9 %: 45.1 points below
    assert not verdict.passed
    assert verdict.description == "Each protocol within 5 % of the baseline protocol."
    assert verdict.bound_source == "[published] NetApp/VMware: within 5 % of the baseline"
    assert verdict.row()["bound_source"] == verdict.bound_source and verdict.row()["description"] == verdict.description
    overridden = check.evaluate({"iscsi": 1000.0, "nvme": 549.0}, "iscsi", tolerance_pct=50)
    assert overridden.passed and overridden.bound == 50
    assert overridden.bound_source == "set by the test (tolerance_pct=50), not the spec"


def test_the_case_lists_are_the_tests_and_the_catalogs() -> None:
    import tests.test_frontend_backend as kpi
    import tests.test_mirror_impact as mirror
    import tests.test_snapshot_impact as snapshot

    assert cases.kpi_cases() == tuple(kpi.CASES) == ("frontend_read", "backend_read", "frontend_write", "backend_write")
    assert cases.SNAPSHOT_CASES == tuple(case.name for case in snapshot.CASES)
    assert cases.MIRROR_CASES == tuple(mirror.MIRROR_CASES)


@pytest.mark.parametrize(("family", "name"), [
    ("kpi", "speed_frontend_read_latency_max"), ("kpi", "throughput_backend_write_at_latency"), ("kpi", "speed_latency_max"),
    ("kpi", "throughput_at_latency"), ("kpi", "steady_state"), ("kpi", "no_errors"), ("events", "snapshot_read_drop_max"),
    ("events", "snapshot_p99_latency_max"), ("events", "mirror_backend_write_drop_max"), ("events", "dedupe_targets_held"),
    ("baseline", "frontend_raed"),  # no family of cases: any name
])
def test_names_of_real_cases_and_names_of_no_case_are_accepted(family: str, name: str) -> None:
    assert cases.problem(family, name) is None


@pytest.mark.parametrize(("family", "name", "nearest"), [
    ("kpi", "speed_frontend_raed_latency_max", "speed_frontend_read_"),
    ("kpi", "speed_frnotend_read_latency_max", "speed_frontend_read_"),
    ("kpi", "throughput_bakend_write_at_latency", "throughput_backend_write_"),
    ("kpi", "speed_read_latency_max", "speed_backend_read_"),  # "read" alone: both read cases share a word; the closer spelling
    ("events", "snapshot_raed_drop_max", "snapshot_read_"),
    ("events", "snapshot_frontend_wirte_drop_max", "snapshot_frontend_write_"),
])
def test_a_misspelt_case_is_refused_naming_the_nearest(family: str, name: str, nearest: str) -> None:
    problem = cases.problem(family, name)
    assert problem is not None and f"nearest: {nearest}..." in problem, problem
