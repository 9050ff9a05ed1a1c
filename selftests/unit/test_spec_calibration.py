"""A calibrated spec's bounds are its calibration's: beyond the worst observed value by the stated margin, no looser.

Re-renders the committed calibration rows (criteria/<lab>.calibration/) against
the spec's current bounds with tools/calibrate.py's own rule: a bound that an
observed run failed is too tight, one beyond the margin rule is too loose.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import calibrate  # noqa: E402

# spec -> the fewest checks its record must cover (every check of every family it calibrates)
CALIBRATED = {"local": 20, "netns": 12, "emulated": 16}


@pytest.mark.parametrize("name", sorted(CALIBRATED))
def test_every_calibrated_bound_sits_at_the_margin_beyond_the_worst_observed_value(name: str) -> None:
    rows, spec = ROOT / "criteria" / f"{name}.calibration", ROOT / "criteria" / f"{name}.yaml"
    runs = json.loads((rows / "runs.json").read_text())["runs"]
    args = argparse.Namespace(spec=spec, n=0, n_for=[], profile="smoke", lab=ROOT / "labs" / f"{name}.yaml", note="",
                              margin=0.25, floor_margin=0.05, points=5.0)
    results = {family: calibrate.collect(calibrate.load_rows(rows / f"{family}.jsonl"), spec, family) for family in runs}
    text = calibrate.record(results, {f: [tuple(r) for r in v] for f, v in runs.items()}, args, [])
    offending = [line for line in text.splitlines() if line.endswith(("| TOO TIGHT |", "| looser than rule |", "| no data |"))]
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
