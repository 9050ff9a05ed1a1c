"""The live judge (iogate/judging/live.py) on synthetic intervals: fail-fast only on monotonic checks, steady stop after
min_s, the stop asked one whole interval after the decisive one; fio's status reports as whole intervals."""

from __future__ import annotations

import json
from pathlib import Path

from iogate.engines.fio.live import StatusTail
from iogate.judging.live import PointWatch, point_watch
from iogate.judging.monotonic import LiveContext, is_monotonic
from iogate.judging.spec import Check, FamilySpec
from iogate.judging.steady_stop import SteadyStop
from iogate.judging.target_iops_held import Params as HeldParams
from iogate.judging.throughput_min import Params as MinParams
from iogate.lab.profiles import resolve_profile
from iogate.metrics.types import Dir, RunResult, Sample, Series

T0 = 1_800_000_000_000


def _family(*checks: Check) -> FamilySpec:
    return FamilySpec("tiles", {c.name: c for c in checks})


HELD = Check("targets_held", "tiles", "target_iops_held", HeldParams(tolerance=0.25, min_fraction=1.0))
IOPS_MIN = Check("iops_min", "tiles", "throughput_min", MinParams(minimum=10_000))


def _second(n: int, iops: float, *, job: str = "vm", host: str = "h1", lat: float = 1e6, d: Dir = Dir.READ) -> Sample:
    return Sample(T0 + n * 1000, job, host, d, iops, lat)


def _feed(watch: PointWatch, values: list[float], host: str = "h1") -> int | None:
    """Feed one interval a call; the number of the interval after which the watch asked to stop."""
    for n, iops in enumerate(values, 1):
        if watch.feed(host, [_second(n, iops, host=host)]):
            return n
    return None


def test_a_target_missed_past_its_bound_stops_one_interval_after_the_decisive_bucket() -> None:
    watch = point_watch(_family(HELD, IOPS_MIN), 60, context=LiveContext({"vm": 400}, 5000))
    # Buckets of 5 s: 1-5 held, 6-10 at 200 (floor 300): bucket 2 decides at 10 s; the stop is asked at 11 s.
    stopped = _feed(watch, [400.0] * 5 + [200.0] * 20)
    assert stopped == 11
    assert watch.decision is not None and watch.decision.kind == "fail_fast"
    assert "targets_held" in watch.decision.detail and "h1/vm" in watch.decision.detail


def test_a_non_monotonic_check_never_stops_and_fail_fast_off_never_stops() -> None:
    assert not is_monotonic("throughput_min") and is_monotonic("target_iops_held") and is_monotonic("no_stall")
    assert _feed(point_watch(_family(IOPS_MIN), 30), [10.0] * 30) is None  # far below its minimum: a mean may still change
    assert _feed(point_watch(_family(HELD), 30, fail_fast=False, context=LiveContext({"vm": 400}, 5000)), [0.0] * 30) is None


def test_a_bound_that_allows_misses_waits_until_they_are_spent() -> None:
    lenient = Check("targets_held", "tiles", "target_iops_held", HeldParams(tolerance=0.25, min_fraction=0.8))
    watch = point_watch(_family(lenient), 51, context=LiveContext({"vm": 400}, 5000))  # 10 planned buckets: 2 may miss
    stopped = _feed(watch, [400.0] * 10 + [100.0] * 41)
    assert stopped == 26, "bucket 5 (21-25 s) is the third miss"


def test_a_stall_stops_the_point() -> None:
    watch = point_watch(_family(), 60)  # the no_stall rule every family gets
    stopped = _feed(watch, [500.0] * 5 + [0.0] * 10)
    assert stopped == 8 and watch.decision is not None and "no I/O" in watch.decision.detail


def test_steady_stops_after_min_s_and_never_before() -> None:
    rule = SteadyStop(mode="steady", min_s=20, round_s=2)
    watch = point_watch(_family(), 120, steady=rule)
    stopped = _feed(watch, [500.0] * 60)
    assert stopped == 21 and watch.decision is not None and watch.decision.kind == "steady"
    assert "steady at round" in watch.decision.detail and "IOPS range 0.0 %" in watch.decision.detail
    result = watch.finish(RunResult("p", (), Series(), T0, T0 + 21_400))
    assert result.stop is not None and result.stop.sentence().startswith("stopped at 21 s of 120 s")


def test_a_drifting_run_is_not_steady_and_says_so_at_the_end() -> None:
    rule = SteadyStop(mode="steady", min_s=10, round_s=2)
    watch = point_watch(_family(), 40, steady=rule)
    assert _feed(watch, [100.0 + 20 * n for n in range(40)]) is None
    result = watch.finish(RunResult("p", (), Series(), T0, T0 + 40_000))
    assert result.stop is not None and result.stop.kind == "never_steady" and "never reached steady state" in result.stop.sentence()


def test_hosts_are_judged_only_where_all_have_published() -> None:
    rule = SteadyStop(mode="steady", min_s=10, round_s=2)
    watch = point_watch(_family(), 60, steady=rule, hosts={"h1", "h2"})
    assert _feed(watch, [500.0] * 30, host="h1") is None, "h2 has published nothing: nothing is judged"
    assert _feed(watch, [500.0] * 30, host="h2") == 11


def _report(stamp: int, elapsed: int, runtime: int, ios: int, mean_ns: float) -> str:
    job = {"jobname": "w", "elapsed": elapsed, "job_runtime": runtime,
           "read": {"total_ios": ios, "clat_ns": {"mean": mean_ns}}, "write": {"total_ios": 0, "clat_ns": {"mean": 0.0}}}
    return json.dumps({"timestamp_ms": stamp, "jobs": [job]}, indent=1) + "\n"


def test_status_reports_become_whole_intervals_after_the_ramp_reset() -> None:
    tail = StatusTail("h1", {"w": (Dir.READ,)}, first_elapsed_s=2)
    text = (_report(T0 + 900, 2, 900, 180, 0.0)  # the ramp's figures: reset by the next report
            + _report(T0 + 2000, 3, 1000, 500, 2e6) + _report(T0 + 3000, 4, 2000, 1000, 2e6) + _report(T0 + 4000, 5, 3000, 1600, 2.5e6))
    first = tail.feed(text[:len(text) // 2])
    rest = tail.feed(text[len(text) // 2:])
    samples = first + rest
    assert [(s.t_ms - T0, round(s.iops)) for s in samples] == [(2000, 500), (3000, 500), (4000, 600)]
    assert samples[-1].clat_mean_ns is not None and round(samples[-1].clat_mean_ns) == 3_333_333


def test_io_errors_past_the_bound_stop_at_once_and_only_with_fail_fast() -> None:
    watch = point_watch(_family(), 60)  # the no_errors rule: max_errors 0
    assert _feed(watch, [500.0] * 3) is None
    assert watch.errors("h1", {"vm": 5})
    assert watch.decision is not None and "no_errors" in watch.decision.detail and "h1/vm (error 5)" in watch.decision.detail
    assert watch.feed("h1", [_second(4, 500.0)]), "once decided on errors every later feed says stop"
    relaxed = point_watch(_family(), 60, fail_fast=False)
    assert not relaxed.errors("h1", {"vm": 5}) and relaxed.decision is None


def test_the_status_tail_names_the_jobs_fio_reports_an_error_for() -> None:
    tail = StatusTail("h1", {"w": (Dir.READ,)}, first_elapsed_s=2)
    report = json.loads(_report(T0 + 2000, 3, 1000, 500, 2e6))
    report["jobs"][0]["error"] = 5
    tail.feed(json.dumps(report))
    assert tail.failed == {"w": 5}


def test_fail_fast_is_on_in_every_profile_unless_opted_out(tmp_path: Path) -> None:
    # On again once the fresh-clone gate's two findings were fixed (docs/early-stop.md): every named profile and a
    # profile file that does not say otherwise; `fail_fast: false` in the file or --no-fail-fast (an override) opts out.
    assert all(resolve_profile(name).fail_fast for name in ("smoke", "quick", "full"))
    plain = tmp_path / "plain.yaml"
    plain.write_text("base: quick\nruntime_s: 60\n")
    off = tmp_path / "off.yaml"
    off.write_text("base: quick\nfail_fast: false\n")
    assert resolve_profile("quick", plain).fail_fast
    assert not resolve_profile("quick", off).fail_fast
    assert not resolve_profile("smoke", None, fail_fast=False).fail_fast  # --no-fail-fast
    assert resolve_profile("smoke", None, fail_fast=None).fail_fast  # neither flag given
