"""A lab's min_window_s: every run point and every event phase measures at least that long, whatever the profile.

The lab VM's figures swing +-30 % over the smoke profile's 4 s windows (criteria/labvm.quiet/README.md): its spec
is calibrated over longer windows, and a run judged by it must measure windows as long (labs/labvm.yaml).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.errors import IOGateError
from iogate.events.load import phase_s
from iogate.lab import load_lab
from iogate.lab.profiles import PROFILES

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / "labs" / "local.yaml"


def test_smoke_is_raised_to_the_window_and_its_event_phases_with_it() -> None:
    raised = PROFILES["smoke"].with_min_window(12)
    assert (raised.runtime_s, raised.tile_runtime_s, raised.ramp_s) == (12, 36, 1)  # smoke: 4 s, 8 s, ramp 1 s
    assert phase_s(raised) == 12  # baseline, event and recovery windows: 36 / 3
    assert phase_s(PROFILES["smoke"]) == 4


def test_a_profile_longer_than_the_window_is_kept() -> None:
    quick = PROFILES["quick"]
    assert quick.with_min_window(12) == quick  # 20 s points, 120 s tiles
    assert PROFILES["smoke"].with_min_window(None) == PROFILES["smoke"]


def test_a_window_of_zero_is_refused_naming_the_key(tmp_path: Path) -> None:
    lab = tmp_path / "lab.yaml"
    lab.write_text(LOCAL.read_text() + "min_window_s: 0\n")
    with pytest.raises(IOGateError, match="min_window_s") as caught:
        load_lab(lab)
    assert str(lab) in str(caught.value)


PROBE = '''
import os


def test_lengths(profile):
    with open(os.environ["PROBE_LOG"], "a") as out:
        out.write(f"{profile.runtime_s:g} {profile.tile_runtime_s:g}\\n")
'''


def _session(tmp_path: Path, *labs: Path) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["plugins.options", "plugins.parametrize", "plugins.scheduling"]\n')
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PROBE_LOG": str(tmp_path / "log.txt")}
    done = subprocess.run([sys.executable, "-m", "pytest", "test_probe.py", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist",
                           "--rootdir", str(tmp_path), "--results-db", str(tmp_path / "r.sqlite"), "--profile", "smoke",
                           *[a for lab in labs for a in ("--lab", str(lab))]],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    log = tmp_path / "log.txt"
    return done, log.read_text().splitlines() if log.exists() else []


def _lab(tmp_path: Path, name: str, window: str = "") -> Path:
    text = LOCAL.read_text().replace("name: local\n", f"name: {name}\n", 1).replace("  - name: nbd\n    connector: nbd\n", "")
    path = tmp_path / f"{name}.yaml"
    path.write_text(text + (f"min_window_s: {window}\n" if window else ""))
    return path


def test_a_session_on_a_lab_with_a_window_runs_its_lengths_and_says_so(tmp_path: Path) -> None:
    done, lengths = _session(tmp_path, _lab(tmp_path, "slow", "12"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert lengths == ["12 36"]
    assert "profile smoke" in done.stdout and "windows at least 12 s (min_window_s of lab slow)" in done.stdout


def test_labs_compared_in_one_session_all_run_the_longest_window(tmp_path: Path) -> None:
    done, lengths = _session(tmp_path, _lab(tmp_path, "plain"), _lab(tmp_path, "slow", "12"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert lengths == ["12 36", "12 36"]
    assert done.stdout.count("windows at least 12 s (min_window_s of lab slow)") == 2  # on each lab's line
