"""no_io_errors: no job reported an I/O error and no data failed verification.

fio sets a job's `error` (errno) on the first I/O error and on a verify
failure (84, EILSEQ: "bad magic header", crc mismatch); `verify_failures`
adds counts from other checkers (vdbench data validation, a separate verify
pass). Any non-zero is a failure; the detail names the jobs.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable

from pydantic import Field

from criteria.params import CriterionParams
from iogate.metrics.types import JobResult, RunResult
from iogate.verdict import Verdict

NAME = "no_io_errors"


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


def evaluate(runs: RunResult | Iterable[RunResult | JobResult], *, verify_failures: int = 0, max_errors: int = 0) -> Verdict:
    jobs = _jobs(runs)
    failing = [j for j in jobs if j.error]
    rows = tuple({"job": j.name, "host": j.host, "error": j.error, "meaning": _errno_name(j.error)} for j in failing)
    count = len(failing) + verify_failures
    detail = f"{len(jobs)} jobs checked"
    if failing:
        detail += "; errors: " + ", ".join(f"{j.host}/{j.name} error {j.error} ({_errno_name(j.error)})" for j in failing[:10])
    if verify_failures:
        detail += f"; {verify_failures} verify failures"
    return Verdict(NAME, count <= max_errors, count, max_errors, "errors", "run", evidence=rows, detail=detail)
