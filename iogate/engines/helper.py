"""Helper jobs (prefill, layout, verify writes) must finish what they were asked to do.

A measured run's errors are judged by criteria; a helper job's are not judged
at all, so a prefill that hit ENOSPC or EIO would let every test after it
measure an unfilled (or full) volume. require_complete() turns such a job into
an error naming the volume, host, errno and bytes done, before any test uses it.
"""

from __future__ import annotations

import errno
import os

from iogate.engines.workload import RunPlan
from iogate.errors import EngineError
from iogate.metrics.types import JobResult, RunResult


def _errno_text(code: int) -> str:
    return f"errno {code} ({errno.errorcode.get(code, '?')}: {os.strerror(code)})"


def _bytes_done(job: JobResult) -> int:
    return sum(d.io_bytes for d in job.directions.values())


def require_complete(plan: RunPlan, result: RunResult, what: str = "helper job") -> None:
    """Raise EngineError for every job of the plan that failed, did no I/O, or has no result."""
    specs = {(job.target.host, job.name): job for job in plan.jobs}
    seen = {(job.host, job.name): job for job in result.jobs}
    problems = []
    for key, spec in specs.items():
        volume, host = spec.target.volume.name, spec.target.host
        job = seen.get(key)
        if job is None:
            problems.append(f"volume {volume} on host {host}: no result for job {spec.name}")
        elif job.error:
            # A thin (over-committed) pool that fills shows as ENOSPC, or as EIO through a loop device.
            full = " (the array's pool is full or failing)" if job.error in (errno.ENOSPC, errno.EIO) else ""
            problems.append(f"volume {volume} on host {host}: {_errno_text(job.error)} after {_bytes_done(job)} bytes "
                            f"of {spec.target.volume.size_bytes}{full}")
        elif _bytes_done(job) == 0:
            problems.append(f"volume {volume} on host {host}: no I/O done (0 bytes of {spec.target.volume.size_bytes})")
    if problems:
        raise EngineError(f"{what} {plan.name} failed: " + "; ".join(problems))
