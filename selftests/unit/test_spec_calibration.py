"""criteria/local.yaml's bounds are its calibration's: beyond the worst observed value by the stated margin, no looser.

Re-renders the committed calibration rows (criteria/local.calibration/) against
the spec's current bounds with tools/calibrate.py's own rule: a bound that an
observed run failed is too tight, one beyond the margin rule is too loose.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import calibrate  # noqa: E402

ROWS = ROOT / "criteria" / "local.calibration"
SPEC = ROOT / "criteria" / "local.yaml"


def test_every_calibrated_bound_sits_at_the_margin_beyond_the_worst_observed_value() -> None:
    runs = json.loads((ROWS / "runs.json").read_text())["runs"]
    args = argparse.Namespace(spec=SPEC, n=0, n_for=[], profile="smoke", lab=ROOT / "labs" / "local.yaml", note="",
                              margin=0.25, floor_margin=0.05, points=5.0)
    results = {family: calibrate.collect(calibrate.load_rows(ROWS / f"{family}.jsonl"), SPEC, family) for family in runs}
    text = calibrate.record(results, {f: [tuple(r) for r in v] for f, v in runs.items()}, args, [])
    offending = [line for line in text.splitlines() if line.endswith(("| TOO TIGHT |", "| looser than rule |"))]
    assert not offending, "\n".join(offending)
    assert sum(len(checks) for checks in results.values()) >= 20
