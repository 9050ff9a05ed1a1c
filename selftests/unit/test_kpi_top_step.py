"""The judge says how long a backend THROUGHPUT top step must run for its steady-state window (judge.py
top_step_runtime_s): a 4 s smoke step gave 2 or 3 one-second rounds, and a 3-round window failed a steady array
(make accept, local lab, test_kpi_throughput[local-backend_write]: "only 2 rounds, a window needs 3")."""

from __future__ import annotations

from pathlib import Path

from iogate.judging.judge import SpecJudge
from iogate.judging.spec import load_spec

CRITERIA = Path(__file__).resolve().parents[2] / "criteria"


def test_a_three_round_window_needs_five_seconds_and_a_five_round_window_seven() -> None:
    local, poc = SpecJudge(load_spec(CRITERIA / "local.yaml")), SpecJudge(load_spec(CRITERIA / "poc.yaml"))
    # local.yaml: window_rounds 3 -> 3 rounds + the dropped last second + one for the grid's edges = 5 s
    assert local.top_step_runtime_s("backend_write", 4, backend=True) == 5
    # poc.yaml: SNIA's window of 5 -> 7 s
    assert poc.top_step_runtime_s("backend_write", 4, backend=True) == 7


def test_a_longer_profile_and_a_frontend_case_keep_their_runtime() -> None:
    local = SpecJudge(load_spec(CRITERIA / "local.yaml"))
    assert local.top_step_runtime_s("backend_write", 60, backend=True) == 60
    assert local.top_step_runtime_s("frontend_read", 4, backend=False) == 4
