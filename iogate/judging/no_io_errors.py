"""no_io_errors: no job reported an I/O error and no data failed verification.

fio sets a job's `error` (errno) on the first I/O error and on a verify
failure (84, EILSEQ: "bad magic header", crc mismatch); `verify_failures`
adds counts from other checkers (vdbench data validation, a separate verify
pass). Any non-zero is a failure; the detail names each job where it ran:
host, job, the device or file it did I/O on and the volume behind it, then
the errno (`localhost/w on /dev/loop3 (volume v1): error 5 (EIO: ...)`).

Fail closed: a job that did no I/O at all (fio refused it, its target was
full before it began) and a run with no jobs fail too, whatever max_errors
allows: "no error reported" from a job that never ran proves nothing.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable

from pydantic import Field

from iogate.judging.params import Bound, CriterionParams, Evidence
from iogate.metrics.types import JobResult, RunResult
from iogate.verdict import Unit, Verdict

NAME = "no_io_errors"
EVIDENCE: tuple[Evidence, ...] = ("run",)  # what a test hands evaluate()
BOUND = Bound("max_errors", floor=False, unit="errors", proposed=False)


class Params(CriterionParams):
    max_errors: int = Field(0, ge=0)


def _jobs(runs: RunResult | Iterable[RunResult | JobResult]) -> list[JobResult]:
    items = [runs] if isinstance(runs, RunResult) else list(runs)
    jobs: list[JobResult] = []
    for item in items:
        jobs.extend(item.jobs if isinstance(item, RunResult) else [item])
    return jobs


def _errno_name(code: int) -> str:
    return f"{errno.errorcode.get(code, '?')}: {os.strerror(code)}" if code > 0 else str(code)


def _job(job: JobResult) -> str:
    """`host/job on /dev/loop3 (volume v1)`: where the job ran, as the user finds it."""
    where = job.target.describe() if job.target is not None else "a target the engine did not record"
    return f"{job.host}/{job.name} on {where}"


def _where(job: JobResult) -> dict[str, str]:
    target = job.target
    return {"job": job.name, "host": job.host, "target": target.path if target else "", "volume": (target and target.volume) or ""}


def evaluate(runs: RunResult | Iterable[RunResult | JobResult], params: Params, *, verify_failures: int = 0) -> Verdict:
    max_errors = params.max_errors
    jobs = _jobs(runs)
    failing = [j for j in jobs if j.error]
    idle = [j for j in jobs if not j.error and not any(d.ios for d in j.directions.values())]
    rows = tuple({**_where(j), "error": j.error, "meaning": _errno_name(j.error)} for j in failing)
    rows += tuple({**_where(j), "error": 0, "meaning": "no I/O done"} for j in idle)
    count = len(failing) + len(idle) + verify_failures
    detail = f"{len(jobs)} jobs checked"
    if not jobs:
        detail = "no jobs to check: the run produced no job results"
    if failing:
        detail += "; errors: " + ", ".join(f"{_job(j)}: error {j.error} ({_errno_name(j.error)})" for j in failing[:10])
    if idle:
        detail += "; did no I/O: " + ", ".join(_job(j) for j in idle[:10])
    if verify_failures:
        detail += f"; {verify_failures} verify failures"
    passed = bool(jobs) and not idle and count <= max_errors
    return Verdict(NAME, passed, count, max_errors, Unit.ERRORS, "run", evidence=rows, detail=detail)
