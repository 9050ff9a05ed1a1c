"""target_iops_held: "VMs reach and maintain the configured I/O target" (Hitachi tiles)."""

from __future__ import annotations

import math
from pathlib import Path

from iogate.engines.fio.parse import parse_logs
from iogate.judging import target_iops_held
from iogate.metrics.types import Dir, Sample, Series
from iogate.metrics.windows import Window, event_windows

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
T0 = 1_795_300_000_000


def tile_series(iops_by_vm: dict[str, list[float]], host: str = "h1") -> Series:
    """Per VM and second: 70 % of the IOPS as reads, 30 % as writes (a stamp a few ms apart, as fio does)."""
    samples = []
    for n, (vm, per_second) in enumerate(iops_by_vm.items()):
        for k, iops in enumerate(per_second):
            t = T0 + 1000 * (k + 1) + n
            samples.append(Sample(t, vm, host, Dir.READ, 0.7 * iops, 1e5))
            samples.append(Sample(t + 2, vm, host, Dir.WRITE, 0.3 * iops, 1e5))
    return Series(tuple(samples))


def test_every_vm_on_target_passes() -> None:
    series = tile_series({"sql-heavy": [70.0] * 10, "web-light": [10.0] * 9 + [8.5]})
    verdict = target_iops_held.evaluate(series, {"sql-heavy": 70, "web-light": 10},
                                        target_iops_held.Params(tolerance=0.1, min_fraction=0.9))
    assert verdict.passed, verdict.line()
    assert verdict.intervals_considered == 20 and verdict.intervals_failing == 1  # web-light's 8.5 < 9
    assert verdict.measured == 90.0 and verdict.bound == 90.0


def test_a_vm_below_target_too_often_fails_and_is_named() -> None:
    series = tile_series({"sql-heavy": [70.0] * 10, "oltp-medium": [25.0] * 7 + [20.0] * 3})
    verdict = target_iops_held.evaluate(series, {"sql-heavy": 70, "oltp-medium": 25},
                                        target_iops_held.Params(tolerance=0.1, min_fraction=0.9))
    assert not verdict.passed
    assert verdict.measured == 70.0
    assert "missed: h1/oltp-medium (7/10 intervals, min 20.0 of 25 IOPS (floor 22.5), missed intervals 8-10)" in verdict.detail
    assert "sql-heavy (" not in verdict.detail
    assert verdict.intervals_failing == 3
    assert "3/20 intervals failing" in verdict.line()


def test_a_silent_vm_is_a_missed_vm() -> None:
    series = tile_series({"sql-heavy": [70.0] * 10})
    verdict = target_iops_held.evaluate(series, {"sql-heavy": 70, "exchange-light": 3}, target_iops_held.Params())
    assert not verdict.passed and "exchange-light (0/0 intervals" in verdict.detail


def test_targets_by_host_and_job_and_a_window() -> None:
    series = Series(tile_series({"vm1": [100.0] * 10}, "h1").samples + tile_series({"vm1": [50.0] * 10}, "h2").samples)
    per_host = target_iops_held.evaluate(series, {"h1/vm1": 100, "h2/vm1": 50}, target_iops_held.Params())
    assert per_host.passed and len(per_host.evidence) == 2
    same_target = target_iops_held.evaluate(series, {"vm1": 100}, target_iops_held.Params())
    assert not same_target.passed and "h2/vm1" in same_target.detail and "h1/vm1 (" not in same_target.detail
    dip = tile_series({"vm1": [100.0] * 5 + [10.0] * 5})
    first_half = Window("baseline", T0, T0 + 5000)
    assert target_iops_held.evaluate(dip, {"vm1": 100}, target_iops_held.Params(), window=first_half).passed
    assert not target_iops_held.evaluate(dip, {"vm1": 100}, target_iops_held.Params()).passed


def test_no_targets_is_not_a_pass() -> None:
    verdict = target_iops_held.evaluate(tile_series({"vm1": [1.0]}), {}, target_iops_held.Params())
    assert not verdict.passed and math.isnan(verdict.measured)


def test_real_fio_tile_holds_before_the_noisy_writer_and_misses_over_the_whole_run() -> None:
    files = {}
    for n, job in ((1, "vm_sql"), (2, "vm_web")):
        files[f"{job}_iops.{n}.log"] = (DATA / f"tiles_iops.{n}.log").read_text()
    samples, _ = parse_logs(files, "localhost")
    series = Series(tuple(samples))
    targets = {"vm_sql": 300, "vm_web": 100}  # what tiles.fio requested with rate_iops
    start = min(s.t_ms for s in samples) - 1000
    baseline, _, _ = event_windows(start, start + 9000, start + 3000, start + 6000)
    assert target_iops_held.evaluate(series, targets, target_iops_held.Params(), window=baseline).passed
    whole = target_iops_held.evaluate(series, targets, target_iops_held.Params())
    assert not whole.passed
    assert "vm_sql" in whole.detail and whole.intervals_considered == 16


def test_a_vm_judged_on_fewer_intervals_than_the_procedure_needs_fails() -> None:
    """Three seconds on target are not a VM that maintains its target over the procedure's four."""
    series = tile_series({"sql-heavy": [70.0] * 3})
    short = target_iops_held.evaluate(series, {"sql-heavy": 70}, target_iops_held.Params(), min_intervals=4)
    assert not short.passed
    assert "judged 3 of the 4 intervals expected" in short.detail, short.detail
    enough = target_iops_held.evaluate(tile_series({"sql-heavy": [70.0] * 4}), {"sql-heavy": 70}, target_iops_held.Params(),
                                       min_intervals=4)
    assert enough.passed, enough.line()


def test_a_window_the_series_does_not_reach_fails() -> None:
    """A 6 s window of 1 s intervals expects 4 per VM (6 but two: the phase and the exit second); the run's
    logs end 2 intervals into it (a VM that stops early on its own reads 0 IOPS on the run's grid:
    test_a_silent_vm_is_a_missed_vm)."""
    window = Window("event", T0 + 2000, T0 + 8000)
    series = tile_series({"sql-heavy": [70.0] * 4, "web-light": [10.0] * 4})
    verdict = target_iops_held.evaluate(series, {"sql-heavy": 70, "web-light": 10}, target_iops_held.Params(), window=window)
    assert not verdict.passed
    assert "h1/web-light (2/2 intervals" in verdict.detail and "judged 2 of the 4 intervals expected" in verdict.detail, verdict.detail
    whole = target_iops_held.evaluate(tile_series({"sql-heavy": [70.0] * 10, "web-light": [10.0] * 10}),
                                      {"sql-heavy": 70, "web-light": 10}, target_iops_held.Params(), window=window)
    assert whole.passed, whole.line()
