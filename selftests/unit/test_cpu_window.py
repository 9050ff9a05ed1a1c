"""Busy % over the measured window (iogate/metrics/cpu_window.py), worked by hand, and the real sampler
(iogate/hosts/cpu_sampler.py) on this machine: samples a second apart, nothing left behind."""

from __future__ import annotations

import itertools
import subprocess
import time
from pathlib import Path

import pytest

from iogate.hosts.cpu_sampler import CpuSampler
from iogate.hosts.initiator import Initiator
from iogate.lab import HostConfig
from iogate.metrics.cpu_window import CpuSample, busy_over, parse_samples
from iogate.run.ledger import Ledger


def _line(t_us: int, user: int, idle: int) -> str:
    return f"{t_us} cpu {user} 0 0 {idle} 0 0 0 0 0 0"


def test_busy_over_takes_the_samples_inside_the_window_only() -> None:
    # Set-up second (t 0-1 s): 200 of 200 ticks busy; measured seconds 1-3: 40 of 400 busy; drain: busy again.
    text = "\n".join([_line(0, 0, 0), _line(1_000_000, 200, 0), _line(2_000_000, 220, 180),
                      _line(3_000_000, 240, 360), _line(4_000_000, 440, 360)])
    samples = parse_samples(text)
    assert busy_over(samples, 1000, 3000) == pytest.approx(10.0)  # (240-200) / (600-200)
    assert busy_over(samples, 0, 4000) == pytest.approx(55.0)     # (440-0) / (800-0): what the point read


def test_too_few_samples_inside_give_no_figure() -> None:
    samples = [CpuSample(1000.0, 0, 0), CpuSample(1500.0, 10, 100), CpuSample(5000.0, 20, 200)]
    assert busy_over(samples, 900, 1600) is None   # two samples, 0.5 s apart
    assert busy_over(samples, 1600, 4000) is None  # none inside


def test_a_line_cut_short_or_foreign_is_skipped() -> None:
    assert [s.t_ms for s in parse_samples(f"{_line(2_000_000, 1, 1)}\n2000\nnoise cpu 1 2\n")] == [2000.0]


def test_the_sampler_samples_each_second_and_leaves_nothing(tmp_path: Path) -> None:
    host = Initiator.from_config(HostConfig(name="localhost", transport="local://"))
    ledger = Ledger.create(tmp_path)
    path = str(tmp_path / "cpu.samples")
    sampler = CpuSampler.start(ledger, host, path, max_s=120)
    deadline = time.monotonic() + 60  # a wait, not a margin: a loaded machine only takes longer
    while len(parse_samples(Path(path).read_text())) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    samples = sampler.finish(ledger)
    assert len(samples) >= 3, samples
    gaps = [b.t_ms - a.t_ms for a, b in itertools.pairwise(samples)]
    assert all(gap >= 990 for gap in gaps), gaps  # `read -t 1` never returns early
    assert abs(samples[-1].t_ms - time.time() * 1000) < 60_000  # epoch microseconds read as ms
    assert not Path(path).exists() and not Path(f"{path}.fifo").exists()
    left = subprocess.run(["pgrep", "-f", path], capture_output=True, text=True).stdout
    assert left == "", left
    assert ledger.open_entries() == []


def test_a_sampler_left_behind_ends_by_itself(tmp_path: Path) -> None:
    host = Initiator.from_config(HostConfig(name="localhost", transport="local://"))
    path = str(tmp_path / "cpu.samples")
    CpuSampler.start(Ledger.create(tmp_path), host, path, max_s=1)
    deadline = time.monotonic() + 10
    while subprocess.run(["pgrep", "-f", path], capture_output=True).returncode == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert subprocess.run(["pgrep", "-f", path], capture_output=True).returncode != 0
    assert len(parse_samples(Path(path).read_text())) == 2  # max_s + 1 samples, then the loop ends


class _Unreachable(Initiator):
    """A host whose link is down: any command would hang, so any command fails the test."""

    def run_unchecked(self, command: str, *args: str, **_: object):  # type: ignore[override]
        raise AssertionError(f"a command went to the lost host: {command!r}")


def test_an_abandoned_sampler_sends_the_lost_host_nothing_and_is_killed_here(tmp_path: Path) -> None:
    host = Initiator.from_config(HostConfig(name="localhost", transport="local://"))
    ledger = Ledger.create(tmp_path)
    path = str(tmp_path / "cpu.samples")
    sampler = CpuSampler.start(ledger, host, path, max_s=120)
    sampler.host = _Unreachable.from_config(HostConfig(name="localhost", transport="local://"))
    sampler.abandon(ledger)
    deadline = time.monotonic() + 30  # a wait for the kill to land, not a margin
    while subprocess.run(["pgrep", "-f", path], capture_output=True).returncode == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert subprocess.run(["pgrep", "-f", path], capture_output=True, text=True).stdout == ""
    assert ledger.open_entries() == []
