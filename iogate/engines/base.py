"""The Engine protocol: run a plan, return one RunResult in the shared records."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from iogate.engines.workload import JobSpec, RunPlan
from iogate.errors import HostError
from iogate.lab import DEFAULT_LIVENESS, HostLiveness
from iogate.metrics.types import JobResult, JobTarget, RunResult, Sample

if TYPE_CHECKING:
    from iogate.hosts.guard import Guard
    from iogate.hosts.initiator import Initiator
    from iogate.run import Run


class LoadControl:
    """What runs beside a load (an event schedule) and the engine running it share.

    The engine says when the measured phase began (epoch ms, ramp over): things
    timed against the load anchor on that, not on the call, because on a slow
    host (a TCG guest over SSH) fio measures many seconds after it is asked to.
    The other side may ask the engine to end the load early; the engine stops
    it gracefully, so results and logs up to that moment are kept. This lets a
    run last as long as an event of unknown length (a resync) needs.
    """

    def __init__(self, live: LiveListener | None = None) -> None:
        self._measuring = threading.Event()
        self._stop = threading.Event()
        self.measuring_since_ms: int | None = None
        # A live judge (iogate/judging/live.py PointWatch): fed each whole interval while the point runs;
        # it may ask for the stop. Engines only publish; they never decide.
        self.live = live

    # -- the engine's side: the live interval feed ------------------------------------------
    @property
    def wants_intervals(self) -> bool:
        return self.live is not None

    def publish(self, host: str, samples: Sequence[Sample]) -> None:
        """Whole intervals one host's engine just measured (epoch-stamped at their end, like the final series)."""
        if self.live is not None and samples and self.live.feed(host, samples):
            self.request_stop()

    def publish_errors(self, host: str, failed: Mapping[str, int]) -> None:
        """Jobs of one host that reported an I/O error so far (job -> errno), as the engine sees them live."""
        if self.live is not None and failed and self.live.errors(host, failed):
            self.request_stop()

    # -- the engine's side -----------------------------------------------------------
    def measuring(self, since_ms: int | None = None) -> None:
        """The measured phase began at `since_ms` (default: now). Only the first call counts."""
        if not self._measuring.is_set():
            self.measuring_since_ms = since_ms if since_ms is not None else int(time.time() * 1000)
            self._measuring.set()

    def wait_stop(self, timeout_s: float) -> bool:
        """True once someone asked for the load to end."""
        return self._stop.wait(timeout_s)

    # -- the other side --------------------------------------------------------------
    def wait_measuring(self, timeout_s: float) -> int | None:
        """The measurement start (epoch ms), or None if it did not begin within timeout_s."""
        return self.measuring_since_ms if self._measuring.wait(timeout_s) else None

    def request_stop(self) -> None:
        self._stop.set()

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()


class LiveListener(Protocol):
    """Reads intervals while the point runs; True = stop the load now."""

    def feed(self, host: str, samples: Sequence[Sample]) -> bool: ...

    def errors(self, host: str, failed: Mapping[str, int]) -> bool: ...


class Engine(Protocol):
    name: str

    def check_plan(self, plan: RunPlan) -> None:
        """Raise Unsupported (an EngineError naming the engine, the workload and the field) when this engine
        cannot express the plan; run nothing. run_plan refuses such a plan the same way, so a caller may ask
        first (a test skips, naming what is missing) instead of failing after provisioning."""

    def run_plan(self, plan: RunPlan, control: LoadControl | None = None) -> RunResult:
        """Run every job of the plan at once and return its result; with `control`, report
        the measurement start and end the load early when asked. Raise EngineError/HostError
        on failure."""

    def close(self) -> None:
        """Release what the engine keeps across run points (the session's engine fixture calls it once,
        at the end); idempotent. An engine keeping nothing does nothing."""

    def facts(self) -> dict[str, str]:
        """What the engine learnt of itself per host (HostEngine.facts: `host.<name>.<engine>` = its version)."""


def job_target(job: JobSpec) -> JobTarget:
    """Where a planned job's I/O goes: the device (or file) the engine opens, and its volume."""
    return JobTarget(job.target.device or job.target.filename, job.target.volume.name)


def with_targets(plan: RunPlan, jobs: Iterable[JobResult]) -> tuple[JobResult, ...]:
    """The engine's job records, each with the target of the plan's job of the same host and name
    (a record the plan does not know keeps what it had: None, never a guess)."""
    targets = {(job.target.host, job.name): job_target(job) for job in plan.jobs}
    return tuple(replace(job, target=targets.get((job.host, job.name), job.target)) for job in jobs)


class HostEngine:
    """What every engine running a plan on the lab's initiators keeps: the initiators by name,
    the guard that admits their targets, and the count that names its run points."""

    def __init__(self, initiators: Mapping[str, Initiator], guard: Guard) -> None:
        self.initiators = initiators
        self.guard = guard
        self._points = 0

    def _next_point(self, plan: RunPlan) -> str:
        """The next run point's name (its directory under the run): 001-<plan name>, 002-..."""
        self._points += 1
        return f"{self._points:03d}-{plan.name}"

    def _initiator(self, host: str) -> Initiator:
        try:
            return self.initiators[host]
        except KeyError:
            raise HostError(f"no initiator named {host} in this lab") from None

    def close(self) -> None:
        """Nothing kept across run points by default (Engine.close)."""

    def facts(self) -> dict[str, str]:
        """What the engine learnt of itself on each host, as environment facts (`host.<name>.<engine>`: its version,
        which a bake-off compares runs by: iogate/results/run_context.py). None by default: fio's version is the
        initiator's own fact (Initiator.facts)."""
        return {}


class StatusObserver(Protocol):
    """Receives an engine's live status output (e.g. iogate.report.progress.Progress)."""

    def feed_fio(self, chunk: str) -> object: ...


@dataclass(frozen=True)
class EngineSettings:
    """What the lab file and the command line tell an engine beyond its hosts."""

    observer: StatusObserver | None = None  # live status lines, where the engine has them
    vdbench_home: str | None = None  # the lab's vdbench installation (engines/vdbench/locate.py)
    liveness: HostLiveness = DEFAULT_LIVENESS  # when a host that stopped answering is lost (multi-host runs)
    # vdbench warnings the lab explicitly accepts (names in iogate/engines/vdbench/health.py TOLERABLE); none by default.
    vdbench_tolerate: tuple[str, ...] = ()


class EngineOpener(Protocol):
    """An entry of the engine registry (iogate/lab/registry.py ENGINES): opens the session's engine."""

    def __call__(self, run: Run, initiators: Mapping[str, Initiator], guard: Guard, settings: EngineSettings) -> Engine: ...
