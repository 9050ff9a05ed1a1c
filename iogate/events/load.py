"""The load an event test runs beside its events, and what is read from it.

    SEQUENTIAL_FILL, fill_plan  the fill of an event test's volume (reads, copies
                                and syncs then meet written blocks, not holes)
    verify_region               the verifier job: checked writes in a region of their own
    require_verifier_ran        a verifier that died checked nothing: a harness failure
    phase_s, phased_runtime_s   the length of one phase (baseline, steady, recovery) and the run's cap
    scaled_iops                 a fixed per-VM rate at the lab's load_scale
    relative_rise               evidence, not a gate: the event window against the baseline window
"""

from __future__ import annotations

from collections.abc import Callable

from iogate.engines.workload import Extent, JobSpec, RateProcess, RunPlan, Verify, VerifyAlgorithm, WorkloadSpec
from iogate.errors import EngineError
from iogate.hosts.connectors.base import Connection
from iogate.lab import Lab
from iogate.lab.profiles import EVENT_PHASES, Profile
from iogate.metrics.nodata import NoData
from iogate.metrics.types import Dir, RunResult
from iogate.metrics.windows import WindowStats
from iogate.units import ns_to_ms

VERIFY_JOB = "verify"
SEQUENTIAL_FILL = WorkloadSpec("fill", read_pct=0, random_pct=0, bs=256 << 10, iodepth=8, time_based=False, runtime_s=0)


def fill_plan(plan_name: str, connection: Connection, fill: WorkloadSpec = SEQUENTIAL_FILL) -> RunPlan:
    """One job "fill" writing the connected volume once with `fill`."""
    return RunPlan(plan_name, (JobSpec("fill", fill, connection),))


VERIFY_BACKLOG = 64  # blocks written between read-backs


def verify_region(connection: Connection, *, offset: int, size: int, runtime_s: float, ramp_s: float,
                  iops: int = 200) -> JobSpec:
    """A job of checked writes in its own region: each 4 KiB block carries a crc32c that is read back behind the writes
    (every VERIFY_BACKLOG writes), at `iops` evenly spaced writes a second; `offset` and `size` in bytes.

    Any lost or corrupted write fails the job with EILSEQ (no_io_errors). fio gets
    the rate for both directions (rate_split's verify_reads): fio 3.33 dies of
    SIGFPE when verify reads run with a write-only rate (rate_iops=,N), and a dead
    verifier checks nothing.
    """
    workload = WorkloadSpec("verify", read_pct=0, random_pct=100, bs=4 << 10, iodepth=1, size=Extent.of_bytes(size),
                            offset=Extent.of_bytes(offset), runtime_s=runtime_s, ramp_s=ramp_s, rate_iops=iops,
                            rate_process=RateProcess.LINEAR,
                            verify=Verify(VerifyAlgorithm.CRC32C, backlog=VERIFY_BACKLOG))
    return JobSpec(VERIFY_JOB, workload, connection)


def require_verifier_ran(result: RunResult) -> None:
    """A verifier that read back fewer than half its writes without an error died (fio killed by a signal
    reports error 0): it checked nothing, a harness failure rather than a clean bill of health."""
    for job in result.jobs:
        if job.name != VERIFY_JOB or job.error:
            continue
        written = job[Dir.WRITE].ios if Dir.WRITE in job.directions else 0
        verified = job[Dir.READ].ios if Dir.READ in job.directions else 0
        if verified < written // 2 or written == 0:
            raise EngineError(f"run {result.name}: host {job.host}: the verify job read back {verified} of {written} written blocks "
                              "without an error: fio's verifier stopped early, so the data-integrity check did not run")


def phase_s(profile: Profile, parts: int = EVENT_PHASES, min_s: float = 4.0) -> float:
    """One phase (baseline, steady or recovery): a share of the profile's tile time, at least min_s
    so a window holds several whole one-second intervals."""
    return max(profile.tile_runtime_s / parts, min_s)


def phased_runtime_s(phase_s: float, profile: Profile, phases: int = EVENT_PHASES) -> float:
    """The runtime cap of a phased run: its fixed phases plus the profile's budget for the actions."""
    return phases * phase_s + profile.event_budget_s


def scaled_iops(lab: Lab, iops: float) -> int:
    """A fixed per-VM rate of an event test at the lab's load_scale (1 on a real array)."""
    return max(1, round(iops * lab.load_scale))


def relative_rise(baseline: WindowStats, event: WindowStats) -> dict[str, object]:
    """Evidence, not a gate: mean latency and IOPS of the event window as a % of the baseline window's.
    On a lab whose baseline is a 0.1 ms loop device such a rise measures CPU contention, not the array.
    A figure a window has no data for reads None (the verdicts already failed on it)."""
    before_ns, during_ns = _or_none(lambda: baseline.total.latency_mean_ns), _or_none(lambda: event.total.latency_mean_ns)
    before_iops, during_iops = _or_none(lambda: baseline.total.iops), _or_none(lambda: event.total.iops)
    return {
        "baseline_window_ms": [baseline.window.start_ms, baseline.window.end_ms],
        "event_window_ms": [event.window.start_ms, event.window.end_ms],
        "baseline_mean_latency_ms": None if before_ns is None else round(ns_to_ms(before_ns), 4),
        "event_mean_latency_ms": None if during_ns is None else round(ns_to_ms(during_ns), 4),
        "mean_latency_rise_pct": round(100.0 * (during_ns - before_ns) / before_ns, 1) if before_ns and during_ns is not None else None,
        "baseline_iops": None if before_iops is None else round(before_iops, 1),
        "event_iops": None if during_iops is None else round(during_iops, 1),
    }


def _or_none(figure: Callable[[], float]) -> float | None:
    try:
        return figure()
    except NoData:
        return None
