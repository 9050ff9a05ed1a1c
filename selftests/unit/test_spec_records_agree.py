"""A calibration record and its spec agree: the record's "spec" column is the bound the YAML holds.

criteria/<lab>.calibration.md lists, per check, the bound the spec held when
the record was rendered; a bound changed in the YAML and not in the record (or
the other way round) leaves a reviewer reading one figure and the suite judging
by another (local.calibration.md said 60 % where local.yaml held 0.55;
emulated.calibration.md 55 % where emulated.yaml holds 1.0). The bound in the
verdict's unit is read here from the YAML by hand-kept rules (a latency in ms,
a share of intervals in %), not through tools/calibrate.py, whose rendering is
what this checks.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from iogate.judging.spec import AcceptanceSpec, load_spec

ROOT = Path(__file__).resolve().parents[2]
RECORDS = sorted((ROOT / "criteria").glob("*.calibration.md"))

# criterion -> (bound key, factor to the verdict's unit)
BOUND_IN_VERDICT_UNIT = {
    "throughput_min": ("minimum", 1.0),
    "latency_bound": ("max_latency_ns", 1e-6),  # ns -> ms
    "latency_delta": ("max_rise_pct", 1.0),
    "throughput_impact": ("max_drop_pct", 1.0),
    "target_iops_held": ("min_fraction", 100.0),  # a fraction -> % intervals
    "iops_at_latency": ("min_iops", 1.0),
    "knee": ("min_knee_iops", 1.0),
    "relative_to_baseline": ("tolerance_pct", 1.0),
    "steady_state": ("max_rounds", 1.0),
    "scaling_efficiency": ("min_efficiency_pct", 1.0),
    "no_io_errors": ("max_errors", 1.0),
}


def record_rows(text: str) -> list[tuple[str, str, str, str]]:
    """(family, check, criterion, spec cell) of every table row of a record."""
    rows, family = [], ""
    for line in text.splitlines():
        if line.startswith("## "):
            family = line[3:].strip()
        elif line.startswith("| ") and not line.startswith(("| check ", "| --- ")):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows.append((family, cells[0], cells[1], cells[7]))
    return rows


def disagreements(text: str, spec: AcceptanceSpec) -> list[str]:
    found = []
    for family, name, criterion, cell in record_rows(text):
        check = spec.for_family(family).checks.get(name)
        if check is None:
            found.append(f"{family}.{name}: in the record, not in {spec.path.name}")
            continue
        if check.criterion != criterion:
            found.append(f"{family}.{name}: criterion {criterion} in the record, {check.criterion} in {spec.path.name}")
            continue
        key, factor = BOUND_IN_VERDICT_UNIT[check.criterion]
        held = float(check.bound(key)) * factor
        shown = float(f"{held:.4g}")  # the record prints 4 significant digits
        if not cell or not math.isclose(float(cell), shown, rel_tol=1e-9):
            found.append(f"{family}.{name}: record says {cell or 'nothing'}, {spec.path.name} holds {key} = {check.bound(key)!r} "
                         f"({shown:g} in the verdict's unit)")
    return found


def test_every_calibrated_spec_has_its_record() -> None:
    assert {r.name.removesuffix(".calibration.md") for r in RECORDS} == {"local", "netns", "emulated", "labvm"}


@pytest.mark.parametrize("record", RECORDS, ids=[r.name for r in RECORDS])
def test_a_records_bound_column_is_the_bound_its_yaml_holds(record: Path) -> None:
    spec = load_spec(record.with_name(record.name.replace(".calibration.md", ".yaml")))
    assert record_rows(record.read_text()), "a record with no table rows compares nothing"
    assert disagreements(record.read_text(), spec) == []


def test_a_record_that_disagrees_with_its_yaml_is_named(tmp_path: Path) -> None:
    """The disagreement issue 26 found, rebuilt: the record shows 60 % of intervals, the YAML holds 0.55; and a latency
    in ms against the YAML's 505ms, and a check the YAML does not have."""
    spec_path = tmp_path / "lab.yaml"
    spec_path.write_text("""\
version: 1
families:
  events:
    checks:
      dedupe_targets_held: {criterion: target_iops_held, tolerance: 0.2, min_fraction: 0.55}
      no_errors: {criterion: no_io_errors}
  baseline:
    checks:
      p99_latency_max: {criterion: latency_bound, max_latency: 505ms}
""")
    record = """\
## events

| check | criterion | n | min | median | max | worst | spec | proposed | unit | failed | status |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| dedupe_targets_held | target_iops_held | 28 | 58.33 | 100 | 100 | 58.33 | 60 |  | % intervals | 1 | 1 run(s) failed |
| no_errors | no_io_errors | 152 | 0 | 0 | 0 | 0 | 0 |  | errors | 0 | ok |
| replica_sync_drop_max | throughput_impact | 40 | -1.583 | 0.559 | 5.655 | 5.655 | 10.66 | 10.66 | % | 0 | ok |

## baseline

| check | criterion | n | min | median | max | worst | spec | proposed | unit | failed | status |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| p99_latency_max | latency_bound | 40 | 98.04 | 101.2 | 404.8 | 404.8 | 505 | 505.9 | ms | 0 | ok |
"""
    found = disagreements(record, load_spec(spec_path))
    assert found == [
        "events.dedupe_targets_held: record says 60, lab.yaml holds min_fraction = 0.55 (55 in the verdict's unit)",
        "events.replica_sync_drop_max: in the record, not in lab.yaml",
    ]
    assert disagreements(record.replace("| 58.33 | 60 |", "| 58.33 | 55 |"), load_spec(spec_path))[:1] == [
        "events.replica_sync_drop_max: in the record, not in lab.yaml"]
    assert disagreements(record.replace("| 404.8 | 505 |", "| 404.8 | 504 |"), load_spec(spec_path))[-1].startswith(
        "baseline.p99_latency_max: record says 504, lab.yaml holds max_latency_ns = 505000000.0 (505 in the verdict's unit)")
