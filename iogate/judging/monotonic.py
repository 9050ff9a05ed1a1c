"""Which checks are monotonic: once they cannot pass, no later interval can make them pass.

Only such a check may stop a run point early (fail-fast, iogate/judging/live.py).
Each entry reads the whole intervals measured so far (a Series merged by time,
as the final judge merges it) and the planned length, and returns why the
check can no longer pass, or None. The rest (a mean, a percentile, a knee)
can still change either way and never stop a run.

* target_iops_held: a VM held its target in at most (planned buckets - missed)
  of its judged buckets; below min_fraction of the planned buckets it has lost.
  Buckets are the final judge's (`judge_interval_ms`, whole buckets from each
  VM's first interval, iogate.metrics.resample), so a live miss is a final miss.
* no_stall: a silent span already as long as the judged span at the *slowest*
  rate the job can still end at (the I/Os done so far over the planned time):
  the final judge's span, at the job's real (higher or equal) rate, is no longer.
* no_io_errors: errors only add up: more jobs reporting an error than
  max_errors allows (LoadControl.publish_errors: fio's status reports name each
  job's errno) can no longer pass (`error_limit`). A job that did no I/O at all
  and verify failures of a later pass are judged at the end.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from iogate.judging import no_io_errors, no_stall, target_iops_held
from iogate.judging.spec import Check
from iogate.metrics.grid import per_vm
from iogate.metrics.resample import resample
from iogate.metrics.types import ALL_JOBS, Series

# The live feed interpolates an engine's status reports (fio: ~1 s apart), so a bucket's live figure may differ from
# the final logs' by a fraction of an interval's I/Os: a live miss counts only this far below the floor, so a point is
# never stopped on a miss the final judge would not see.
LIVE_MARGIN = 0.02

# Monotonic, judged live on the engines' error reports rather than on intervals (error_limit).
ON_ERRORS = frozenset({no_io_errors.NAME})


@dataclass(frozen=True)
class LiveContext:
    """What a live check needs beyond its params: per-VM targets and the final judge's bucket for them."""

    targets: Mapping[str, float] = field(default_factory=dict)  # job or host/job -> IOPS (target_iops_held)
    judge_interval_ms: int = 1000


Doomed = Callable[[Series, int], "str | None"]  # (intervals so far, planned measured ms) -> why it can no longer pass


def _targets_doomed(check: Check, context: LiveContext) -> Doomed | None:
    params = check.params
    assert isinstance(params, target_iops_held.Params)
    if not context.targets:
        return None

    def doomed(series: Series, planned_ms: int) -> str | None:
        bucket_ms = context.judge_interval_ms
        if bucket_ms % series.interval_ms:
            return None
        # The final judge leaves out a run's last second (fio's exit flush) and a trailing partial bucket.
        planned = max(math.floor((planned_ms - series.interval_ms) / bucket_ms), 1)
        coarse = resample(series, bucket_ms)
        for (host, job), rows in sorted(per_vm(coarse).items()):
            target = context.targets.get(f"{host}/{job}", context.targets.get(job))
            if target is None:
                continue
            floor = (1 - params.tolerance) * target
            missed = [n for n, (_, iops, _) in enumerate(rows, 1) if iops < floor * (1 - LIVE_MARGIN)]
            if missed and planned - len(missed) < params.min_fraction * planned:
                n = missed[-1]
                return (f"{check.name}: {host}/{job} missed its target (floor {floor:.4g} IOPS) in {len(missed)} of "
                        f"{planned} planned {bucket_ms / 1000:g} s intervals (at most "
                        f"{planned - math.ceil(params.min_fraction * planned - 1e-9)} may miss); interval {n}: {rows[n - 1][1]:.1f} IOPS")
        return None

    return doomed


def _stall_doomed(check: Check, context: LiveContext) -> Doomed | None:
    params = check.params
    assert isinstance(params, no_stall.Params)
    if params.off_because:
        return None

    def doomed(series: Series, planned_ms: int) -> str | None:
        interval_ms = series.interval_ms
        planned = max(planned_ms // interval_ms, 1)
        for (host, job), intervals in sorted(per_vm(series).items()):
            if job == ALL_JOBS:
                continue  # a total's silence says nothing of each job's judged span
            slowest = sum(iops for _, iops, _ in intervals) / max(planned, len(intervals))
            needed_ms = math.ceil(no_stall.judged_span_ms(slowest, params) / interval_ms - 1e-9) * interval_ms
            for start, end in no_stall.silent_spans(intervals, interval_ms):
                if end - start >= needed_ms:
                    return (f"{check.name}: {host}/{job} completed no I/O for {(end - start) / 1000:g} s "
                            f"(a stall is >= {needed_ms / 1000:g} s)")
        return None

    return doomed


MONOTONIC: dict[str, Callable[[Check, LiveContext], Doomed | None]] = {
    target_iops_held.NAME: _targets_doomed,
    no_stall.NAME: _stall_doomed,
}


def is_monotonic(criterion: str) -> bool:
    return criterion in MONOTONIC or criterion in ON_ERRORS


def error_limit(checks: Sequence[Check]) -> tuple[str, int] | None:
    """(check name, max_errors) of the check on I/O errors, if any: more failing jobs than that can no longer pass."""
    for check in checks:
        if check.criterion in ON_ERRORS:
            params = check.params
            assert isinstance(params, no_io_errors.Params)
            return check.name, params.max_errors
    return None


def live_checks(checks: Sequence[Check], context: LiveContext) -> list[tuple[str, Doomed]]:
    """(check name, its doom test) for every check of `checks` that may stop a run early."""
    out = []
    for check in checks:
        make = MONOTONIC.get(check.criterion)
        doomed = make(check, context) if make else None
        if doomed is not None:
            out.append((check.name, doomed))
    return out
