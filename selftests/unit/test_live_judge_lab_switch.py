"""A lab whose hosts cannot spare the CPU for fio's report each second runs without a live judge.

The live judge reads fio's full json+ status report each second (fixtures/live.py -> engines/fio/runner.py
--status-interval=1). In the TCG lab VM that report (~400 KB a second for a 25-VM tile, read over ssh)
tripled the tile's p99 and held its jobs' ends 5-12 s past their runtime (emulated Huawei, 2026-12-06):
labs/labvm.yaml (and the emulated labs made from it) set `live_judge: false`. The same point on the same
lab with the switch on gets its watch; with it off, none: the point runs its planned time.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import fixtures.live as live
from fixtures.session import LabSession
from iogate.judging.spec import load_spec
from iogate.lab import load_lab
from iogate.lab.profiles import resolve_profile

ROOT = Path(__file__).resolve().parents[2]


def _request(family: str) -> Any:
    marker = SimpleNamespace(name=family)
    return SimpleNamespace(node=SimpleNamespace(iter_markers=lambda: iter([marker])))


def _plan() -> Any:
    """What watch_point reads of a plan: its jobs' names, rates and runtimes, and its hosts."""
    job = SimpleNamespace(name="vm1", workload=SimpleNamespace(rate_iops=None, runtime_s=30.0))
    return SimpleNamespace(jobs=(job,), hosts=("localhost",))


@pytest.mark.parametrize(("lab_file", "watched"), [("local.yaml", True), ("labvm.yaml", False)])
def test_a_lab_without_a_live_judge_gets_no_watch(monkeypatch: pytest.MonkeyPatch, lab_file: str, watched: bool) -> None:
    lab = load_lab(ROOT / "labs" / lab_file)
    assert lab.live_judge is watched
    session = LabSession(lab, load_spec(ROOT / "criteria" / "local.yaml"), resolve_profile("smoke"))
    monkeypatch.setattr(live, "lab_of", lambda node: session)
    assert (live.watch_point(_request("baseline"), _plan()) is not None) is watched
