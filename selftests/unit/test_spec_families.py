"""A spec's checks are wired to the tests when it loads (iogate/judging/families.py), not when a test trips over them.

Refused at load, naming file:line, family and check: a check a test reads by
name that is missing or has another criterion, a check no test would apply
(it would silently never be judged), a check whose criterion cannot judge what
its test hands it. The shipped specs pass; the tests name their checks and
criteria through constants, never as string literals.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from iogate.errors import LabFileError
from iogate.judging import families, registry
from iogate.judging.spec import FAMILIES, load_named, load_spec

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["poc", "nightly", "local", "emulated"])
def test_each_shipped_spec_wires_every_check_to_a_test(name: str) -> None:
    spec = load_named(name)
    for family in FAMILIES:
        checks = {check.name: check.criterion for check in spec.for_family(family)}
        assert families.problems(family, checks) == [], (name, family)
    assert spec.for_family("events")[families.NO_ERRORS].criterion == "no_io_errors"


def test_every_family_declares_how_its_tests_apply_checks_with_known_criteria() -> None:
    assert set(families.USES) == set(FAMILIES)
    for family, uses in families.USES.items():
        for use in uses:
            assert use.criteria and use.criteria <= set(registry.REGISTRY), (family, use)
            assert not use.required or use.name, (family, use)


def test_a_spec_missing_a_check_its_tests_read_by_name_is_refused_at_load(tmp_path: Path) -> None:
    path = write(tmp_path, """\
version: 1
families:
  events:
    checks:
      snapshot_read_drop_max: {criterion: throughput_impact, max_drop_pct: 5}
""")
    with pytest.raises(LabFileError) as refused:
        load_spec(path)
    message = str(refused.value)
    assert message.startswith(f"{path} line 4: families.events.checks.no_errors: family events has no check no_errors (no_io_errors)")
    assert "every event test" in message


def test_a_check_read_by_name_with_another_criterion_is_refused_at_its_criterion_line(tmp_path: Path) -> None:
    path = write(tmp_path, """\
version: 1
families:
  events:
    checks:
      no_errors:
        criterion: throughput_min
        minimum: 1
""")
    with pytest.raises(LabFileError, match=r"spec\.yaml line 6: families\.events\.checks\.no_errors\.criterion: criterion throughput_min "
                                           r"cannot judge what the events tests hand the check no_errors: .*\(use no_io_errors\)"):
        load_spec(path)


@pytest.mark.parametrize(
    ("family", "check", "criterion", "bounds", "error"),
    [
        # A name no test selects: never judged.
        ("events", "snapshots_drop", "throughput_impact", "max_drop_pct: 5",
         r"line 5: families\.events\.checks\.snapshots_drop: no events test applies .*snapshot_\*"),
        ("scaling", "efficiency_typo", "scaling_efficiency", "min_efficiency_pct: 50",
         r"line 5: families\.scaling\.checks\.efficiency_typo: no scaling test applies .*linear_efficiency_min"),
        # A criterion that cannot judge what the test hands the check.
        ("kpi", "latency_max", "latency_bound", "max_latency: 1ms",
         r"line 6: families\.kpi\.checks\.latency_max\.criterion: criterion latency_bound cannot judge what the kpi tests hand "
         r"every other check: .*\(use no_io_errors, steady_state; or name it speed_\* or throughput_\*\)"),
        ("kpi", "speed_steady", "steady_state", "max_rounds: 25",
         r"line 6: families\.kpi\.checks\.speed_steady\.criterion: criterion steady_state cannot judge what the kpi tests hand "
         r"checks named speed_\*: the SPEED run \(use latency_bound, no_io_errors, throughput_min\)"),
        ("events", "snapshot_held", "target_iops_held", "tolerance: 0.1",
         r"line 6: families\.events\.checks\.snapshot_held\.criterion: criterion target_iops_held cannot judge"),
        ("events", "replica_knee", "knee", "method: chord", r"criterion knee cannot judge what the events tests hand"),
        ("tiles", "curve", "knee", "method: chord", r"families\.tiles\.checks\.curve\.criterion: criterion knee cannot judge"),
        ("sweep", "steady", "steady_state", "max_rounds: 25", r"families\.sweep\.checks\.steady\.criterion: criterion steady_state"),
        ("baseline", "impact", "throughput_impact", "max_drop_pct: 5", r"families\.baseline\.checks\.impact\.criterion"),
        ("scaling", "linear_efficiency_min", "relative_to_baseline", "tolerance_pct: 5",
         r"families\.scaling\.checks\.linear_efficiency_min\.criterion: .*\(use scaling_efficiency\)"),
        ("regression", "iops_vs_stored_baseline", "throughput_min", "minimum: 1",
         r"families\.regression\.checks\.iops_vs_stored_baseline\.criterion: .*\(use relative_to_baseline\)"),
    ],
)
def test_a_check_no_test_can_apply_is_refused_at_load(tmp_path: Path, family: str, check: str, criterion: str, bounds: str,
                                                      error: str) -> None:
    events_ok = "      no_errors: {criterion: no_io_errors}\n" if family == "events" else ""
    path = write(tmp_path, f"version: 1\nfamilies:\n  {family}:\n    checks:\n      {check}:\n        criterion: {criterion}\n"
                           f"        {bounds}\n{events_ok}")
    with pytest.raises(LabFileError, match=error) as refused:
        load_spec(path)
    assert str(refused.value).startswith(str(path))


def test_every_problem_of_a_family_is_named_at_once(tmp_path: Path) -> None:
    path = write(tmp_path, """\
version: 1
families:
  events:
    checks:
      dedupe_knee: {criterion: knee, min_knee_iops: 1}
      other: {criterion: no_io_errors}
""")
    with pytest.raises(LabFileError) as refused:
        load_spec(path)
    lines = str(refused.value).splitlines()
    assert len(lines) == 3
    assert [line.split(": ")[1] for line in lines] == [
        "families.events.checks.no_errors", "families.events.checks.dedupe_knee.criterion", "families.events.checks.other"]


def test_a_family_the_spec_leaves_out_is_not_required(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, "version: 1\nfamilies:\n  baseline:\n    checks:\n      e: {criterion: no_io_errors}\n"))
    assert len(spec.for_family("events")) == 0


def test_the_tests_name_checks_and_criteria_through_constants() -> None:
    """A criterion renamed in its module, or a check name or prefix changed in iogate/judging/families.py, follows into
    the tests through the constants they import: no test or fixture spells one as a string literal."""
    names = set(registry.REGISTRY) | {value for key, value in vars(families).items() if key.isupper() and isinstance(value, str)}
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    literal = re.compile(rf"""(["'])({alternatives})\1""")
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for folder in ("tests", "fixtures") for path in sorted((ROOT / folder).glob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1) if literal.search(line)]
    assert not found, found
