"""Ground truth for event verdicts: a known degradation must fail them, its absence must pass.

A volume capped at exactly 800 read IOPS (cgroup blkio throttle) is read at
queue depth 16, so its baseline is exact: 800 IOPS at 20 ms (a deep queue keeps the throttle
saturated while a loaded machine starves fio for a moment: the cap sets the figure, not the generator). A `degrade` event
lowers the cap to 400 IOPS for the middle third of the run and lifts it back:
IOPS halve and latency doubles inside the event window, so throughput_impact
and latency_delta must fail there, naming the window. The control run replays
the same two array actions with the cap left at 800: both verdicts must pass.
Three repetitions of each catch a flaky pipeline (windows, event clock, series): make check runs the
first, make check-extended the other two (marker extended).
The control run with fio stopped inside the event window must fail as a
stall (a product failure), and seconds a throttle leaves without a completed
I/O must count as 0 in a window's mean.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.arrays.local import LocalArray
from iogate.engines.base import LoadControl
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.events.load import verify_region
from iogate.events.model import Event
from iogate.events.schedule import EventRun, EventSchedule
from iogate.hosts.connectors.base import Connection
from iogate.judging import latency_delta, no_io_errors, throughput_impact
from iogate.lab import Lab, QoS
from iogate.metrics.windows import measure_window, window_stats
from iogate.run import Run
from selftests.conftest import block_target

pytestmark = pytest.mark.integration

BASELINE_CAP = QoS(read_iops=800)
DEGRADED_CAP = QoS(read_iops=400)
# Bounds a healthy array meets with room to spare on an exact QoS cap, and a halving breaks.
MAX_DROP_PCT = 20.0
MAX_RISE_PCT = 30.0
# Actions half-way through fio's seconds (offsets count from its measurement start): the second in which
# a cap changes straddles the window edge and belongs to neither window.
RAMP_S, RUNTIME_S, ON_S, OFF_S = 1.0, 9.0, 3.5, 6.5
REPETITIONS = [1, pytest.param(2, marks=pytest.mark.extended), pytest.param(3, marks=pytest.mark.extended)]


@pytest.fixture
def capped(local_lab: Lab, local_run: Run, local_array: LocalArray) -> Iterator[tuple[LocalArray, FioEngine, Connection]]:
    _, connection, engine = block_target(local_lab, local_run, local_array, "truth", 64 << 20, BASELINE_CAP)
    yield local_array, engine, connection


def run_with_degrade(array: LocalArray, engine: FioEngine, connection: Connection, cap: QoS) -> EventRun:
    workload = WorkloadSpec("read-qd16", read_pct=100, random_pct=100, bs=4 << 10, iodepth=16, runtime_s=RUNTIME_S, ramp_s=RAMP_S)
    volume = connection.volume
    schedule = EventSchedule(array, [
        Event("degrade", at_s=ON_S, volume=volume, qos=cap, tag="on"),
        Event("degrade", at_s=OFF_S, volume=volume, qos=BASELINE_CAP, tag="off"),
    ], ramp_s=RAMP_S, driver_name="local")
    # Offsets count from fio's own measurement start (LoadControl), not from this call: on a loaded
    # machine fio may start measuring a second or more late, and the baseline would shrink below two intervals.
    control = LoadControl()
    plan = RunPlan("truth", (JobSpec("load", workload, connection),))
    result, timeline = schedule.run_beside(lambda: engine.run_plan(plan, control), control)
    return EventRun(result, timeline)


def judged(run: EventRun) -> tuple:  # type: ignore[type-arg]
    baseline, event, recovery = run.window_stats("degrade truth (on)", "degrade truth (off)")
    throughput = throughput_impact.evaluate(baseline, event, throughput_impact.Params(max_drop_pct=MAX_DROP_PCT))
    latency = latency_delta.evaluate(baseline, event, latency_delta.Params(max_rise_pct=MAX_RISE_PCT, stats=("mean", "p99")))
    return baseline, event, recovery, throughput, latency


@pytest.mark.parametrize("repetition", REPETITIONS)
def test_halving_the_cap_fails_both_verdicts_in_the_event_window(capped, repetition: int) -> None:  # type: ignore[no-untyped-def]
    baseline, event, recovery, throughput, latency = judged(run_with_degrade(*capped, DEGRADED_CAP))
    print(throughput.line(), latency.line(), sep="\n")
    assert baseline.total.iops == pytest.approx(800, rel=0.1)  # the cap lets a short burst through after the ramp
    assert event.total.iops == pytest.approx(400, rel=0.05)
    assert recovery.intervals == 0 or recovery.total.iops == pytest.approx(800, rel=0.1)
    assert not throughput.passed
    assert throughput.window == "event vs baseline"
    assert throughput.measured == pytest.approx(50, abs=5)
    assert not latency.passed
    assert latency.window == "event vs baseline"
    assert latency.measured > 60  # queue depth 16 at half the IOPS: about +100 %


@pytest.mark.parametrize("repetition", REPETITIONS)
def test_the_same_actions_without_degrading_pass(capped, repetition: int) -> None:  # type: ignore[no-untyped-def]
    baseline, event, _, throughput, latency = judged(run_with_degrade(*capped, BASELINE_CAP))
    print(throughput.line(), latency.line(), sep="\n")
    assert baseline.total.iops == pytest.approx(800, rel=0.1)  # the cap lets a short burst through after the ramp
    assert event.total.iops == pytest.approx(800, rel=0.05)
    assert throughput.passed, throughput.line()
    assert latency.passed, latency.line()
    assert not math.isnan(latency.measured)


# Copy-on-write lasts until every block the snapshot shares has been written once: at a fixed rate that is a fixed
# share of the event window, whatever this machine's speed. 3000 writes a second over the volume's 32768 blocks of
# 4 KiB leave ~87 % of the window's writes on blocks still shared. Uncapped, a fast run (43k IOPS) unshared the whole
# volume in the window's first second and measured +19 % where slower ones had measured +100 to +250 %.
COW_VOLUME_BYTES, COW_RATE_IOPS = 128 << 20, 3000
# The snapshotted volume's mean write latency over the plain one's, both written at once. Measured on the 2-core
# reference machine, quiet (6 runs): before the snapshot 0.97-1.01, while it exists 1.31-1.39; beside two CPU burners
# and a direct-I/O dd (3 runs): 0.95-1.07 and 1.22-1.28. The bound splits the two.
COW_MIN_RATIO = 1.15


def test_writes_after_a_snapshot_pay_copy_on_write(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    """On the XFS reflink pool, every first write to a block shared with a snapshot is copied: writes slow down.

    Paired, so the figure is the snapshot's and not this machine's: a second volume that never gets a snapshot is
    written at the same rate at the same time. In the event window the snapshotted volume's writes are slower than
    the plain one's; in the baseline window before it they are not."""
    _, cow, engine = block_target(local_lab, local_run, local_array, "cow", COW_VOLUME_BYTES)
    plain_volume, plain, _ = block_target(local_lab, local_run, local_array, "plain", COW_VOLUME_BYTES)
    engine.guard.admit(plain_volume.identity)
    fill = WorkloadSpec("fill", read_pct=0, random_pct=0, bs=256 << 10, iodepth=8, time_based=False, runtime_s=0)
    engine.run_plan(RunPlan("fill", (JobSpec("fill-cow", fill, cow), JobSpec("fill-plain", fill, plain))))
    writes = WorkloadSpec("randwrite", read_pct=0, random_pct=100, bs=4 << 10, iodepth=8, runtime_s=RUNTIME_S, ramp_s=RAMP_S,
                          rate_iops=COW_RATE_IOPS)
    schedule = EventSchedule(local_array, [
        Event("snapshot_create", at_s=ON_S, volume=cow.volume, name="s1"),
        Event("snapshot_delete", at_s=OFF_S, volume=cow.volume, name="s1"),
    ], ramp_s=RAMP_S)
    result, timeline = schedule.run_beside(
        lambda: engine.run_plan(RunPlan("cow", (JobSpec("cow", writes, cow), JobSpec("plain", writes, plain)))))
    run = EventRun(result, timeline)
    (cow_before, cow_during, _), (plain_before, plain_during, _) = (
        run.window_stats("snapshot_create", "snapshot_delete", jobs=[job]) for job in ("cow", "plain"))
    for window in (cow_during, plain_during):
        assert window.of("write").iops > 0.9 * COW_RATE_IOPS, f"{window.name}: the rate was not held: it measured the generator"
    during = cow_during.of("write").latency_mean_ns / plain_during.of("write").latency_mean_ns
    before = cow_before.of("write").latency_mean_ns / plain_before.of("write").latency_mean_ns
    print(f"snapshotted / plain mean write latency: before {before:.2f}, during {during:.2f}")
    assert during > COW_MIN_RATIO, f"snapshotted / plain mean write latency while the snapshot exists: {during:.2f}"
    assert before < COW_MIN_RATIO, f"snapshotted / plain mean write latency before the snapshot: {before:.2f}"


def test_the_verify_region_catches_a_lost_write(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    """"Without loss of I/O" can fail: blocks overwritten behind fio's back fail crc32c and no_io_errors."""
    volume, connection, engine = block_target(local_lab, local_run, local_array, "lossy", 64 << 20)
    verify = verify_region(connection, offset=32 << 20, size=16 << 20, runtime_s=3, ramp_s=0, iops=500)
    # The "array" loses the region's writes: random bytes land over it half-way through.
    corrupt = ["dd", "if=/dev/urandom", f"of={volume.identity.backing_file}", "bs=1M", "seek=32", "count=16", "conv=notrunc",
               "oflag=direct", "status=none"]
    timer = threading.Timer(1.5, subprocess.run, args=(corrupt,), kwargs={"check": True})
    timer.start()
    try:
        result = engine.run_plan(RunPlan("lossy", (verify,)))
    finally:
        timer.join()
    verdict = no_io_errors.evaluate(result, no_io_errors.Params())
    assert not verdict.passed
    assert f"localhost/verify on {connection.device} (volume lossy): error 84 (EILSEQ" in verdict.detail


def own_fio_pids(run: Run) -> list[int]:
    """This test's fio processes only: their command line names a job file under this run's points/."""
    found = subprocess.run(["pgrep", "-f", str(run.path("points"))], capture_output=True, text=True).stdout.split()
    return [int(p) for p in found if Path(f"/proc/{p}/comm").exists() and Path(f"/proc/{p}/comm").read_text().strip() == "fio"]


def test_a_stall_inside_the_event_window_fails_the_event_checks(capped, local_run: Run) -> None:  # type: ignore[no-untyped-def]
    """The control run above (two no-op degrade actions), with fio stopped (SIGSTOP) for 2.5 s starting just
    after the first action: the load is still running, no I/O completes, fio logs nothing. The window is covered
    by the run (no WindowTooShort); the stall is a product FAIL naming the VM and its silent intervals."""
    array, engine, connection = capped
    set_qos = array.set_qos
    stall: list[tuple[int, int]] = []

    def stop_fio() -> None:
        time.sleep(0.2)
        pids = own_fio_pids(local_run)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        began = int(time.time() * 1000)
        time.sleep(2.5)
        stall.append((began, int(time.time() * 1000)))
        for pid in pids:
            os.kill(pid, signal.SIGCONT)

    def degrade_then_stall(volume, qos):  # type: ignore[no-untyped-def]
        set_qos(volume, qos)
        if not stall and not any(t.name == "stall" for t in threading.enumerate()):
            threading.Thread(target=stop_fio, name="stall", daemon=True).start()

    array.set_qos = degrade_then_stall  # type: ignore[method-assign]
    baseline, event, _, throughput, latency = judged(run_with_degrade(array, engine, connection, BASELINE_CAP))
    print(throughput.line(), latency.line(), sep="\n")
    assert stall, "fio was never stopped"
    assert event.stalls() and event.stalls()[0].startswith("localhost/load: 0 IOPS in "), event.stalls()
    assert not baseline.stalls()
    assert not throughput.passed
    assert "localhost/load: 0 IOPS in" in throughput.detail and "of the event window" in throughput.detail


def test_a_throttled_to_near_zero_second_is_0_in_the_window_mean(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    """16 KiB reads on a volume capped at 8 KiB/s: one I/O every 2 s, so fio logs no line for every other
    second. The window mean must count those seconds as 0: at most the cap's 0.5 IOPS, not the mean of
    the logged lines (1 each; fio's integer rate even logs some such seconds as 0)."""
    _, connection, engine = block_target(local_lab, local_run, local_array, "trickle", 64 << 20, QoS(read_bytes_per_s=8192))
    workload = WorkloadSpec("trickle", read_pct=100, random_pct=100, bs=16 << 10, iodepth=1, runtime_s=12, ramp_s=0)
    result = engine.run_plan(RunPlan("trickle", (JobSpec("load", workload, connection),)))
    stats = window_stats(result.series, measure_window(result.start_ms, result.end_ms))
    json_ios = result.total("read").ios
    logged = [s.iops for s in result.series.samples]
    print(f"json {json_ios} I/Os in {result.total('read').runtime_ms} ms; lines {logged}; intervals {stats.total.iops_per_interval}")
    assert len(logged) < stats.intervals  # fio left seconds without a line
    assert stats.total.iops_per_interval.count(0.0) >= stats.intervals - len(logged)  # each of them is a 0
    # The cap allows half an I/O a second (one burst I/O at the start aside): so must the window mean,
    # not the mean of the seconds that logged their one I/O.
    assert stats.total.iops <= 0.5 + 1 / stats.intervals
    assert stats.total.iops * stats.intervals <= json_ios  # nothing invented either
