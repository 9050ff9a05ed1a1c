"""The live judge of one run point: fed whole intervals while the point runs, it decides when to stop.

Engines only publish intervals (LoadControl.publish) and stop when asked; what
may stop a point is decided here:

* **fail-fast** (on by default, Profile.fail_fast): a check whose outcome is
  monotonic (iogate/judging/monotonic.py) that can no longer pass stops the
  point: "stopped at 41 s of 300 s: the verdict could no longer pass (...)".
  The rest of the family's checks never stop a run.
* **steady stop** (opt-in, a profile's `stop: {mode: steady, ...}`,
  iogate/judging/steady_stop.py): the SNIA rule over rounds on IOPS and mean
  latency, reads and writes apart, all hosts merged; stops once it holds at or
  after min_s, or at max_s saying it never reached steady state.

Every host's intervals are merged by time as the final judge merges them
(iogate.metrics.grid); with several hosts only the intervals every host has
published are judged. A decision is taken on whole intervals only, and the
stop is asked one whole interval later: the final judge leaves out a run's
last second (fio's exit flush, iogate.metrics.resample.judged_series), so the
decisive interval must not be that second, or the full judgement of the
stopped run could differ from the live one. The point's result then carries a
RunStop (planned and actual seconds, why).
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Collection, Mapping, Sequence

from iogate.judging.family_rules import own_checks, rule_checks
from iogate.judging.monotonic import Doomed, LiveContext, error_limit, live_checks
from iogate.judging.spec import FamilySpec
from iogate.judging.steady_stop import SteadyStop, judge
from iogate.metrics.types import ALL_JOBS, RunResult, RunStop, Sample, Series

DUTY = 0.1  # the live judge's largest share of one core
CHEAP_S = 0.05  # a decision this quick runs on every feed


class PointWatch:
    """LoadControl's live listener for one run point (iogate.engines.base.LiveListener)."""

    def __init__(self, *, planned_s: float, checks: Sequence[tuple[str, Doomed]] = (), steady: SteadyStop | None = None,
                 fail_fast: bool = True, hosts: Collection[str] = (), interval_ms: int = 1000,
                 error_limit: tuple[str, int] | None = None) -> None:
        self.planned_s = planned_s
        self.checks = list(checks) if fail_fast else []
        self.error_limit = error_limit if fail_fast else None
        self.failed: dict[tuple[str, str], int] = {}  # (host, job) -> errno reported live
        self.steady = steady if steady is not None and steady.steady else None
        self.hosts = frozenset(hosts)
        self.interval_ms = interval_ms
        self.samples: list[Sample] = []
        self.latest_ms: dict[str, int] = {}  # host -> end of its latest published interval
        self.decision: RunStop | None = None
        self.decided_ms: int | None = None  # epoch end of the decisive interval
        self.last_steady = ""
        self._lock = threading.Lock()
        self._next_eval = 0.0

    # -- fed by the engine ----------------------------------------------------------------------------------------
    def feed(self, host: str, samples: Sequence[Sample]) -> bool:
        """Take one host's new whole intervals; True once the point should stop."""
        with self._lock:
            self.samples.extend(samples)
            self.latest_ms[host] = max([self.latest_ms.get(host, 0), *(s.t_ms for s in samples)])
            if self.decision is None and time.monotonic() >= self._next_eval:
                began = time.monotonic()
                self._decide()
                # Each decision re-reads the whole series: on a long, wide point (a 6 h tile of 25 VMs) that costs; keep
                # the judge's share of a core under DUTY by waiting in proportion before the next one.
                took = time.monotonic() - began
                self._next_eval = time.monotonic() + (took * (1 / DUTY - 1) if took > CHEAP_S else 0.0)
            if self.decided_ms == 0:  # decided on errors: stop at once
                return True
            return self.decided_ms is not None and self._common_end() >= self.decided_ms + self.interval_ms

    def errors(self, host: str, failed: Mapping[str, int]) -> bool:
        """Take one host's jobs that reported an I/O error; True once more failed than the error check allows
        (the verdict comes from the final results, which hold every error: no interval margin is needed)."""
        with self._lock:
            for job, errno in failed.items():
                self.failed.setdefault((host, job), errno)
            if self.decision is None and self.error_limit is not None and len(self.failed) > self.error_limit[1]:
                name, bound = self.error_limit
                jobs = ", ".join(f"{h}/{j} (error {e})" for (h, j), e in sorted(self.failed.items())[:5])
                start = min((s.t_ms for s in self.samples), default=0) - self.interval_ms
                end = self._common_end()
                measured_s = max(math.floor((end - start) / self.interval_ms), 0) if self.samples and end else 0
                self.decision = RunStop("fail_fast", float(measured_s), self.planned_s,
                                        f"{name}: {len(self.failed)} job(s) reported I/O errors, at most {bound} allowed: {jobs}")
                self.decided_ms = 0
            return self.decision is not None and self.decided_ms == 0

    def _common_end(self) -> int:
        if ALL_JOBS in self.latest_ms:  # an engine that sees only the run's total publishes every host at once
            return self.latest_ms[ALL_JOBS]
        if self.hosts - set(self.latest_ms):
            return 0
        return min(self.latest_ms.values())

    def _series(self) -> Series:
        series = Series(tuple(self.samples), interval_ms=self.interval_ms)
        return series.where(end_ms=self._common_end()) if len(self.latest_ms) > 1 else series

    def _decide(self) -> None:
        end = self._common_end()
        if not end or not self.samples:
            return
        series = self._series()
        start = min(s.t_ms for s in self.samples) - self.interval_ms
        measured_s = math.floor((end - start) / self.interval_ms + 0.1) * self.interval_ms / 1000
        planned_ms = round(self.planned_s * 1000)
        for _name, doomed in self.checks:
            why = doomed(series, planned_ms)
            if why:
                self.decision, self.decided_ms = RunStop("fail_fast", measured_s, self.planned_s, why), end
                return
        if self.steady is None:
            return
        steady, _, sentence = judge(series, self.steady)
        self.last_steady = sentence
        if steady and measured_s >= self.steady.min_s:
            self.decision, self.decided_ms = RunStop("steady", measured_s, self.planned_s, f"steady at {sentence}"), end
        elif self.steady.max_s is not None and measured_s >= self.steady.max_s:
            self.decision, self.decided_ms = RunStop("never_steady", measured_s, self.planned_s, f"at max_s; last {sentence}"), end

    # -- after the run ------------------------------------------------------------------------------------------------
    def finish(self, result: RunResult) -> RunResult:
        """The result with its RunStop: where and why it stopped, or that it ran its planned time."""
        actual_s = math.floor((result.end_ms - result.start_ms) / self.interval_ms + 0.1) * self.interval_ms / 1000
        with self._lock:
            decision = self.decision
        if decision is not None:
            stop = dataclasses.replace(decision, at_s=actual_s)
        elif self.steady is not None:
            stop = RunStop("never_steady", actual_s, self.planned_s, f"ran to its end; last {self.last_steady or 'no rounds'}")
        else:
            stop = RunStop("full", actual_s, self.planned_s)
        return dataclasses.replace(result, stop=stop)


def point_watch(family: FamilySpec, planned_s: float, *, fail_fast: bool = True, steady: SteadyStop | None = None,
                context: LiveContext | None = None, hosts: Collection[str] = ()) -> PointWatch:
    """The watch of a run point judged by `family`: its monotonic checks (own and the rules) may fail it fast."""
    every = [*own_checks(family), *rule_checks(family)]
    return PointWatch(planned_s=planned_s, checks=live_checks(every, context or LiveContext()), steady=steady, fail_fast=fail_fast,
                      hosts=hosts, error_limit=error_limit(every))
