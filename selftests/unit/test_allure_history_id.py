"""Measured figures never identify a test: the same test run twice with different measurements keeps one
Allure history id (its trend, flaky and regressed marks depend on it).

A test here records the event tests' evidence exactly as they do (fixtures.events.attach_rise: the mean
latency rise; a dedupe pass's reclaimed_bytes, excluded) with figures that differ between two runs, in a
pytest of its own with allure-pytest; the two result files must carry the same historyId. The control
records a figure as an identifying parameter and must get two ids: the comparison can fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = '''
import os

import allure

from fixtures.events import attach_rise
from iogate.metrics.windows import DirectionWindow, Window, WindowStats

FIGURE = float(os.environ["PROBE_LATENCY_NS"])


def stats(name, start_ms, latency_ns):
    intervals = tuple((start_ms + 1000 * (i + 1), 100.0, latency_ns) for i in range(4))
    return WindowStats(Window(name, start_ms, start_ms + 4000), DirectionWindow(intervals, label=name), {})


def test_event_evidence():
    allure.dynamic.parameter("case", "read")
    evidence = attach_rise(stats("baseline", 0, 1e6), stats("event", 4000, FIGURE), "impact (evidence)",
                           reclaimed_bytes=int(FIGURE))
    allure.dynamic.parameter("reclaimed_bytes", evidence["reclaimed_bytes"], excluded=True)


def test_control_measured_as_identity():
    allure.dynamic.parameter("mean latency rise", FIGURE)
'''


def history_ids(tmp_path: Path, latency_ns: float, run: str) -> dict[str, str]:
    results = tmp_path / f"allure-{run}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PROBE_LATENCY_NS": str(latency_ns)}
    done = subprocess.run([sys.executable, "-m", "pytest", str(tmp_path / "test_probe.py"), "-q", "-p", "no:cacheprovider",
                           "--alluredir", str(results), "--rootdir", str(tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    ids = {}
    for path in results.glob("*-result.json"):
        result = json.loads(path.read_text())
        ids[result["name"]] = result["historyId"]
        if result["name"] == "test_event_evidence":
            shown = {p["name"]: p for p in result.get("parameters", [])}
            assert shown["mean latency rise (evidence)"].get("excluded") is True, shown
    return ids


def test_a_test_run_twice_with_other_measurements_keeps_its_history_id(tmp_path: Path) -> None:
    (tmp_path / "test_probe.py").write_text(PROBE)
    first = history_ids(tmp_path, 2e6, "first")  # mean latency rise 100 %
    second = history_ids(tmp_path, 3.5e6, "second")  # 250 %
    assert set(first) == set(second) == {"test_event_evidence", "test_control_measured_as_identity"}
    assert first["test_event_evidence"] == second["test_event_evidence"]
    # The control: a measured figure as an identifying parameter makes a new test of every run.
    assert first["test_control_measured_as_identity"] != second["test_control_measured_as_identity"]
