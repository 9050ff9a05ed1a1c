"""LoadControl on a real fio run: the engine reports the measured phase's start and ends the load on request.

Ground truth is fio's own result: its measurement start is timestamp_ms minus
job_runtime (ramp excluded); a stopped run still returns its results and
per-second logs, IOPS at the volume's exact cap.
"""

from __future__ import annotations

import time

import pytest

from iogate.arrays.local import LocalArray
from iogate.engines.base import LoadControl
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.events.model import Event
from iogate.events.schedule import EventSchedule, now_ms
from iogate.lab import Lab, QoS
from iogate.metrics.types import Dir
from iogate.run import Run
from selftests.conftest import block_target

pytestmark = pytest.mark.integration

CAP = QoS(read_iops=1000)
RAMP_S, CAP_S, AT_S, TAIL_S = 2.0, 120.0, 2.0, 2.0


def test_events_anchor_on_the_measured_phase_and_the_load_ends_after_the_tail(local_lab: Lab, local_run: Run,
                                                                             local_array: LocalArray) -> None:
    volume, connection, engine = block_target(local_lab, local_run, local_array, "control", 64 << 20, CAP)
    workload = WorkloadSpec("read-qd4", read_pct=100, random_pct=100, bs=4 << 10, iodepth=4, runtime_s=CAP_S, ramp_s=RAMP_S)
    schedule = EventSchedule(local_array, [Event("degrade", at_s=AT_S, volume=volume, qos=CAP)], ramp_s=RAMP_S,
                             driver_name="local", stop_after_s=TAIL_S)
    control = LoadControl()
    began = time.monotonic()
    launched_ms = now_ms()
    result, timeline = schedule.run_beside(lambda: engine.run_plan(RunPlan("control", (JobSpec("load", workload, connection),)),
                                                                   control), control)
    wall_s = time.monotonic() - began

    # Order and containment, and fio's own intervals; no wall-clock margin a loaded machine can miss.
    anchor_ms = control.measuring_since_ms
    assert anchor_ms is not None
    assert anchor_ms >= launched_ms + RAMP_S * 1000, "the anchor is fio's measurement start, ramp excluded"
    event = timeline.records[0]
    assert event.start_ms >= anchor_ms + AT_S * 1000, "the event is due AT_S after the anchor, never before"
    before_event = {s.t_ms for s in result.series.samples if s.t_ms <= event.start_ms}
    assert len(before_event) >= AT_S - 1, "fio measured a baseline phase before the event"
    assert wall_s < CAP_S / 2, f"the load ran {wall_s:.0f} s towards its {CAP_S:g} s cap: it was not stopped after the tail"
    measured_s = (result.end_ms - result.start_ms) / 1000
    assert AT_S + TAIL_S <= measured_s < CAP_S / 2
    read = result.total(Dir.READ)
    assert read.iops == pytest.approx(1000, rel=0.1), "a stopped fio still reports its whole measured phase"
    assert len([s for s in result.series.samples if s.dir is Dir.READ]) >= AT_S + TAIL_S - 1


def test_fio_is_signalled_only_once_it_catches_the_signal(local_lab: Lab, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """On a slow host fio sets up for seconds; an uncaught SIGUSR1 would kill it without a result.
    Stand-ins named like fio (argv[0] "fio <job file>"): one ignores nothing, one traps SIGUSR1."""
    import subprocess
    import threading

    from iogate.engines.fio.runner import _Steer
    from iogate.hosts.initiator import Initiator

    job = tmp_path / "job.fio"
    marker = tmp_path / "got-usr1"
    steer = _Steer(Initiator.from_config(local_lab.hosts[0]), str(job), str(tmp_path / "out.json"), 0, LoadControl(),
                   threading.Event())

    def fio_named(script: str) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(["bash", "-c", f"exec -a 'fio {job}' bash -c '{script}'"])
        deadline = time.monotonic() + 5
        while subprocess.run(["pgrep", "-f", f"^fio {job}"], capture_output=True).returncode != 0:
            assert time.monotonic() < deadline, "stand-in did not start"
            time.sleep(0.05)
        return process

    for script, catches in (("while :; do sleep 0.1; done", False),
                            (f"trap \"touch {marker}\" USR1; while :; do sleep 0.1; done", True)):
        process = fio_named(script)
        try:
            time.sleep(0.2)
            assert steer._signal(10) is catches
            time.sleep(0.5)
            assert process.poll() is None, "the stand-in was killed by a signal it does not catch"
            assert marker.exists() is catches
        finally:
            process.kill()
            process.wait()
