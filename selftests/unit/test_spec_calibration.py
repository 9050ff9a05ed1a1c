"""A calibrated spec's bounds are its calibration's: beyond the worst observed value by the stated margin, no looser.

Re-renders the committed calibration rows (criteria/<lab>.calibration/) against
the spec's current bounds with tools/calibrate.py's own rule: a bound that an
observed run failed is too tight, one beyond the margin rule is too loose.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import calibrate  # noqa: E402

# spec -> the fewest checks its record must cover (every check of every family it calibrates)
CALIBRATED = {"local": 20, "netns": 12, "emulated": 14, "labvm": 17}


def status_of(line: str) -> str:
    """A record row's last cell (its status, with what was left out after it)."""
    cells = line.rstrip().rstrip("|").rsplit("|", 1)
    return cells[-1].strip() if line.startswith("|") and len(cells) == 2 else ""


@pytest.mark.parametrize("name", sorted(CALIBRATED))
def test_every_calibrated_bound_sits_at_the_margin_beyond_the_worst_observed_value(name: str) -> None:
    rows, spec = ROOT / "criteria" / f"{name}.calibration", ROOT / "criteria" / f"{name}.yaml"
    runs = json.loads((rows / "runs.json").read_text())["runs"]
    args = argparse.Namespace(spec=spec, n=0, n_for=[], profile="smoke", lab=ROOT / "labs" / f"{name}.yaml", note="",
                              margin=0.25, floor_margin=0.05, points=5.0)
    results = {family: calibrate.collect(calibrate.load_rows(rows / f"{family}.jsonl"), spec, family) for family in runs}
    text = calibrate.record(results, {f: [tuple(r) for r in v] for f, v in runs.items()}, args, [])
    offending = [line for line in text.splitlines() if status_of(line).startswith(("TOO TIGHT", "looser than rule", "no data"))]
    assert not offending, "\n".join(offending)
    assert sum(len(checks) for checks in results.values()) >= CALIBRATED[name]
    loaded = calibrate.load_spec(spec)
    unobserved = {family: sorted(set(loaded.for_family(family).checks) - set(results[family])) for family in runs}
    assert not any(unobserved.values()), f"checks of calibrated families with no observed value: {unobserved}"


def test_a_pooled_calibration_holds_every_sources_rows_and_runs(tmp_path: Path) -> None:
    """The emulated spec is calibrated over three vendors, one calibration each, pooled (calibrate.py --merge)."""
    row = {"criterion": "iops_min", "measured": 0.0, "bound": 230, "unit": "IOPS", "passed": True, "test": "t"}
    sources = []
    for vendor, (iops, seconds) in {"pure": (280.0, 500.0), "ontap": (270.0, 520.0)}.items():
        source = tmp_path / vendor
        source.mkdir()
        (source / "baseline.jsonl").write_text(json.dumps(row | {"measured": iops}) + "\n")
        (source / "runs.json").write_text(json.dumps({"runs": {"baseline": [[0, seconds]]}, "loads": [f"{vendor} a", f"{vendor} b"]}))
        sources.append(source)
    pooled = tmp_path / "pooled"
    calibrate.pool(sources, pooled, ["baseline", "tiles"])
    assert [r["measured"] for r in calibrate.load_rows(pooled / "baseline.jsonl")] == [280.0, 270.0]
    assert calibrate.load_rows(pooled / "tiles.jsonl") == []
    saved = json.loads((pooled / "runs.json").read_text())
    assert saved == {"runs": {"baseline": [[0, 500.0], [0, 520.0]]}, "loads": ["pure a", "pure b", "ontap a", "ontap b"]}


def test_a_row_judged_on_a_saturated_generator_is_left_out_of_the_observed_values_and_failures() -> None:
    """Such a row measured the initiator (plugins/verdicts.py: measurement_invalid), not the lab: counting its
    value would push a proposed bound out by the machine's load, and counting its failure would call a
    calibrated bound too tight."""
    spec = ROOT / "criteria" / "local.yaml"
    bound = calibrate.current_bound(calibrate.load_spec(spec).for_family("baseline")["iops_min"], 0.0)
    row = {"criterion": "iops_min", "bound": bound, "unit": "IOPS", "test": "t"}
    rows = [row | {"measured": bound * 2, "passed": True},
            row | {"measured": bound / 2, "passed": False, "measurement_invalid": "generator saturated: localhost cpu 97 %"},
            row | {"measured": bound * 3, "passed": True, "measurement_invalid": None},
            # A pass judged on a saturated generator is no calibration value either (its figure may be the host's).
            row | {"measured": bound * 9, "passed": True, "measurement_invalid": "generator saturated: localhost cpu 99 %"}]
    observed = calibrate.collect(rows, spec, "baseline")["iops_min"]
    assert (observed.values, observed.failed, observed.invalid) == ([bound * 2, bound * 3], 0, 2)
    args = argparse.Namespace(spec=spec, n=3, n_for=[], profile="smoke", lab=ROOT / "labs" / "local.yaml", note="",
                              margin=0.25, floor_margin=0.05, points=5.0)
    line = next(li for li in calibrate.record({"baseline": {"iops_min": observed}}, {"baseline": [(0, 1.0)] * 3}, args, [])
                .splitlines() if li.startswith("| iops_min "))
    assert status_of(line).endswith("(2 left out: generator saturated)"), line
    assert not status_of(line).startswith("TOO TIGHT"), line


def test_the_record_shows_the_specs_bound_of_a_share_of_intervals_not_the_first_runs() -> None:
    """Rows of target_iops_held taken at a provisional 55 % of intervals, under a spec that now holds 1.0: the record's
    spec column says 100 (what the spec holds); failures stay those at each run's own bounds (tolerance may differ)."""
    spec = ROOT / "criteria" / "local.yaml"
    assert calibrate.load_spec(spec).for_family("events")["dedupe_targets_held"].bound("min_fraction") == 1.0
    row = {"criterion": "dedupe_targets_held", "bound": 55.00000000000001, "unit": "% intervals", "test": "t"}
    rows = [row | {"measured": 100.0, "passed": True}, row | {"measured": 50.0, "passed": False}]
    observed = calibrate.collect(rows, spec, "events")["dedupe_targets_held"]
    assert (observed.bound, observed.failed) == (100.0, 1)


def test_recovery_rows_are_counted_apart_and_the_worst_names_its_window() -> None:
    """An events run judges snapshot_p99_latency_max on the event window and again on the recovery window
    (`snapshot_p99_latency_max[recovery]`): two runs give four values, which must read "2 + 2 [recovery]",
    not n = 4, and the worst value (90 ms, in a recovery window) says where it was measured."""
    spec = ROOT / "criteria" / "local.yaml"
    row = {"bound": 1.0, "unit": "ms", "test": "t", "passed": True}
    rows = [row | {"criterion": "snapshot_p99_latency_max", "measured": 40.0},
            row | {"criterion": "snapshot_p99_latency_max[recovery]", "measured": 90.0},
            row | {"criterion": "snapshot_p99_latency_max", "measured": 60.0},
            row | {"criterion": "snapshot_p99_latency_max[recovery]", "measured": 30.0}]
    observed = calibrate.collect(rows, spec, "events")["snapshot_p99_latency_max"]
    assert (observed.count, observed.worst, observed.worst_window) == ("2 + 2 [recovery]", 90.0, "recovery")
    args = argparse.Namespace(spec=spec, n=2, n_for=[], profile="smoke", lab=ROOT / "labs" / "local.yaml", note="",
                              margin=0.25, floor_margin=0.05, points=5.0)
    line = next(li for li in calibrate.record({"events": {"snapshot_p99_latency_max": observed}}, {"events": [(0, 1.0)] * 2},
                                              args, []).splitlines() if li.startswith("| snapshot_p99_latency_max "))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert (cells[2], cells[6]) == ("2 + 2 [recovery]", "90 [recovery]"), line


def test_a_rounds_pytest_output_is_kept_and_its_failures_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # A test that errors leaves no verdict row: without its output a failed calibration round cannot be read.
    said = ("..F.E\nFAILED tests/test_vm_tiles.py::test_vm_tiles[x] - p99\n"
            "ERROR tests/test_snapshot_impact.py::test_snapshot_impact[x-read] - AttributeError: judged_end_ms\n"
            "1 failed, 3 passed, 1 error in 9.00s\n")
    monkeypatch.setattr(calibrate.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1, stdout=said))
    log = tmp_path / "round-1.log"
    rc, _ = calibrate.run_family("events", tmp_path / "lab.yaml", tmp_path / "spec.yaml", "smoke", tmp_path / "rows.jsonl", [], log)
    assert rc == 1 and log.read_text() == said
    printed = capsys.readouterr().out
    assert "FAILED tests/test_vm_tiles.py::test_vm_tiles[x]" in printed
    assert "ERROR tests/test_snapshot_impact.py::test_snapshot_impact[x-read] - AttributeError" in printed
    assert "1 failed, 3 passed, 1 error" in printed
