"""The judge says how long a backend THROUGHPUT top step must run for its steady-state window (judge.py
top_step_runtime_s): a 4 s smoke step gave 2 or 3 one-second rounds, and a 3-round window failed a steady array
(make accept, local lab, test_kpi_throughput[local-backend_write]: "only 2 rounds, a window needs 3"); so did a 5 s
step whose two jobs' clones ticked 108 ms apart (test_judged_window_phases.py)."""

from __future__ import annotations

from pathlib import Path

from iogate.judging.judge import SpecJudge
from iogate.judging.spec import load_spec

CRITERIA = Path(__file__).resolve().parents[2] / "criteria"


def test_a_three_round_window_needs_six_seconds_and_a_five_round_window_eight() -> None:
    local, poc = SpecJudge(load_spec(CRITERIA / "local.yaml")), SpecJudge(load_spec(CRITERIA / "poc.yaml"))
    # local.yaml: window_rounds 3 -> 3 rounds + the dropped last second + a ragged head and tail round = 6 s
    assert local.top_step_runtime_s("backend_write", 4, backend=True) == 6
    # poc.yaml: SNIA's window of 5 -> 8 s
    assert poc.top_step_runtime_s("backend_write", 4, backend=True) == 8


def test_a_longer_profile_and_a_frontend_case_keep_their_runtime() -> None:
    local = SpecJudge(load_spec(CRITERIA / "local.yaml"))
    assert local.top_step_runtime_s("backend_write", 60, backend=True) == 60
    assert local.top_step_runtime_s("frontend_read", 4, backend=False) == 4
