"""tools/rerun_on_guest_panic.py: a tier whose guest kernel panicked runs once more; nothing else is rerun."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "rerun_on_guest_panic.py"
spec = importlib.util.spec_from_file_location("rerun_on_guest_panic", TOOL)
assert spec is not None and spec.loader is not None
rerun = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rerun)

# A stand-in for the lab VM tier: each call appends a line to `calls`, then takes the next scripted outcome
# ("exit:panic" writes a panic record the way selftests/labvm/fixtures.py does, then exits).
TIER = """
import os, sys
from pathlib import Path
calls = Path(sys.argv[1]); outcomes = sys.argv[2].split(",")
n = len(calls.read_text().splitlines()) if calls.exists() else 0
calls.write_text(calls.read_text() + "run\\n" if calls.exists() else "run\\n")
code, _, panic = outcomes[n].partition(":")
if panic:
    Path(os.environ["IOGATE_GUEST_PANIC_RECORD"]).write_text("[ 261.674382] Kernel panic - not syncing: run " + str(n + 1) + "\\n")
sys.exit(int(code))
"""


def run_tier(tmp_path: Path, outcomes: str) -> tuple[int, int]:
    script = tmp_path / "tier.py"
    script.write_text(TIER)
    calls = tmp_path / "calls"
    status = rerun.main(["--", sys.executable, str(script), str(calls), outcomes])
    return status, len(calls.read_text().splitlines())


def test_a_failure_with_a_guest_panic_runs_once_more_and_takes_its_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_tier(tmp_path, "1:panic,0") == (0, 2)
    said = capsys.readouterr().out
    assert "Kernel panic - not syncing: run 1" in said
    assert "the tier's second run: exit 0" in said


def test_a_second_panic_fails_and_is_printed_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_tier(tmp_path, "1:panic,1:panic,0") == (1, 2)  # never a third run
    assert "Kernel panic - not syncing: run 2" in capsys.readouterr().out


def test_a_failure_without_a_panic_is_not_rerun(tmp_path: Path) -> None:
    assert run_tier(tmp_path, "1,0") == (1, 1)


def test_a_pass_is_not_rerun_even_after_a_panic(tmp_path: Path) -> None:
    # a panic in a passing run (the guest died after its last test) changes nothing
    assert run_tier(tmp_path, "0:panic,1") == (0, 1)


def test_nothing_collected_passes_through(tmp_path: Path) -> None:
    assert run_tier(tmp_path, "5,1") == (5, 1)


def test_no_command_is_a_usage_error() -> None:
    assert rerun.main(["--"]) == 2
