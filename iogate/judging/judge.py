"""The one entry point from evidence to verdicts: a spec's checks, per family, on typed evidence.

A test builds its evidence (a measured run, a load curve's points, per-VM
series and targets, event windows, stepping results) and hands it to one
method of SpecJudge (through the `judge` fixture, plugins/verdicts.py); which
checks judge it, on what, and the rules every family gets (no_errors,
no_stall on every run: family_rules.py; every expected point present and a
comparison's comparands: points.py) are decided here, so no test chooses a
check by name or criterion and no test can skip a rule.

Every method returns its verdicts in the order the family's checks are written,
each run's own checks before the rules on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from iogate.judging import cases as case_names
from iogate.judging import latency_bound, relative_to_baseline, steady_state
from iogate.judging.event_effect import EFFECT_KEYS, effect_verdict
from iogate.judging.events_family import event_checks, event_verdicts
from iogate.judging.families import CURVE_CRITERIA, DATAPATH, LINEAR, ON_RUN, ON_TARGETS, SLOW_HOST, SPEED, THROUGHPUT
from iogate.judging.family_rules import own_checks, rule_verdicts, run_verdicts, stop_noted
from iogate.judging.nothing_judged import nothing_judged
from iogate.judging.points import SweepPoint, comparands, expected_points
from iogate.judging.scaling_family import datapath_verdict, run_rules, stepping_verdicts
from iogate.judging.spec import AcceptanceSpec, Check, FamilySpec
from iogate.metrics.resample import judged_series
from iogate.metrics.types import RunResult, Series
from iogate.metrics.windows import WindowStats
from iogate.procedures.scaling import Step, StepResult
from iogate.verdict import Verdict

# Event services whose checks name a case (`snapshot_<case>_*`) and whose other checks judge every case (`snapshot_*`).
_EVERY_CASE = {"snapshot": case_names.SNAPSHOT_CASES}
STEPPING = (SLOW_HOST, LINEAR)  # the checks that judge client stepping (scaling_family.stepping_verdicts)


@dataclasses.dataclass(frozen=True)
class SpecJudge:
    """A spec's families, judging the evidence a test hands them."""

    spec: AcceptanceSpec

    def family(self, name: str) -> FamilySpec:
        return self.spec.for_family(name)

    def _unjudged(self, checks: Sequence[Check], what: str, window: str) -> list[Verdict]:
        """[nothing_judged] when `checks` (the spec's own checks for this evidence) is empty: the rules alone pass no test."""
        return [] if checks else [nothing_judged(self.spec.path, what, window)]

    def _family_unjudged(self, name: str) -> list[Verdict]:
        fam = self.family(name)
        what = f"no check of family {name}" + ("" if len(fam) else " (the family is left out)")
        return self._unjudged(own_checks(fam), what, name)

    # -- a measured run (baseline, a sweep point, every protocol's run) --------------------------------------------------

    def run(self, family: str, runs: RunResult | Sequence[RunResult]) -> list[Verdict]:
        """Each run judged by the family's checks that read a run (ON_RUN) and by the rules."""
        fam = self.family(family)
        return [*self._family_unjudged(family), *run_verdicts(fam, runs, [c for c in fam if c.criterion in ON_RUN])]

    def rules(self, family: str, runs: Sequence[RunResult]) -> list[Verdict]:
        """The rules every family gets (no_errors, no_stall) on runs judged by no other check of the family."""
        return run_rules(self.family(family), runs)

    # -- a load curve (sweep) --------------------------------------------------------------------------------------------

    def judges_curves(self, family: str) -> bool:
        """Whether the family has a check over a whole load curve (iops_at_latency, knee)."""
        return any(c.criterion in CURVE_CRITERIA for c in self.family(family))

    def curve(self, family: str, curves: Mapping[str, Sequence[SweepPoint]], *, planned: Sequence[str], measured: Sequence[str],
              what: str, window: str) -> list[Verdict]:
        """Every planned point measured (a missing one fails, named); then each curve (its points in load order) judged
        by each curve check, verdict `<check>[<curve>]`."""
        checks = [c for c in self.family(family) if c.criterion in CURVE_CRITERIA]
        verdicts = [*self._unjudged(checks, f"no load-curve check (iops_at_latency, knee) in family {family}", window),
                    expected_points(planned, measured, what=what, window=window)]
        for curve, points in curves.items():
            verdicts.extend(dataclasses.replace(check.evaluate(list(points)), criterion=f"{check.name}[{curve}]") for check in checks)
        return verdicts

    # -- per-VM targets (tiles) ------------------------------------------------------------------------------------------

    def targets(self, family: str, run: RunResult, series: Series, targets: Mapping[str, float],
                groups: Mapping[str, Collection[str]], *, min_intervals: int) -> list[Verdict]:
        """Targets held per VM (ON_TARGETS) on `series`, each VM on at least the procedure's `min_intervals` (no
        default: a test cannot forget it); a latency bound per group of jobs (`<check>[<group>]`); any other
        check on the whole run; then the rules on the run."""
        verdicts: list[Verdict] = self._family_unjudged(family)
        fam = self.family(family)
        for check in own_checks(fam):
            if check.criterion in ON_TARGETS:
                verdicts.append(check.evaluate(series, targets, min_intervals=min_intervals))
            elif check.criterion == latency_bound.NAME:
                for group, names in groups.items():
                    only = dataclasses.replace(run, jobs=tuple(j for j in run.jobs if j.name in names))
                    verdicts.append(dataclasses.replace(check.evaluate(only), criterion=f"{check.name}[{group}]"))
            else:
                verdicts.append(check.evaluate(run))
        return stop_noted([*verdicts, *rule_verdicts(fam, run)], run)

    # -- the IOgen KPIs --------------------------------------------------------------------------------------------------

    def _for_case(self, family: str, case: str) -> list[Check]:
        """A check naming a case (speed_frontend_read_latency_max) judges that case only; others every case."""
        cases = case_names.kpi_cases()
        return [c for c in own_checks(self.family(family)) if case in c.name or not any(name in c.name for name in cases)]

    def speed(self, case: str, run: RunResult) -> list[Verdict]:
        """SPEED: the case's speed checks on its one-process run; the rules on it."""
        own = [check for check in self._for_case("kpi", case) if check.name.startswith(SPEED)]
        unjudged = self._unjudged(own, f"no {SPEED}* check of family kpi for case {case}", case)
        return [*unjudged, *(check.evaluate(run) for check in own), *rule_verdicts(self.family("kpi"), run)]

    def top_step_runtime_s(self, case: str, runtime_s: float, *, backend: bool) -> float:
        """How long the case's top THROUGHPUT step must run for `throughput` to judge its steady state: at least
        runtime_s; with a steady_state check, its window of one-second rounds, plus the run's last second (left out
        of judged series: fio logs it partial), plus one for each end of the merged rounds: the clones of one fio
        process tick on phases up to an interval apart, and the merge leaves out a head and a tail round that not
        every clone filled (metrics.grid). A 5 s step for a 3-round window gave 2 rounds when one job's clones
        ticked 108 ms after the other's (make accept, 1 run of 10); 4 s gave 2 or 3 before."""
        windows = [int(c.params.window_rounds) for c in self._for_case("kpi", case)  # type: ignore[attr-defined]
                   if c.criterion == steady_state.NAME] if backend else []
        return max([runtime_s, *(w + 3.0 for w in windows)])

    def throughput(self, case: str, steps: Sequence[tuple[str, RunResult]], *, backend: bool) -> list[Verdict]:
        """THROUGHPUT: the rules on every step's run; the case's throughput checks on the steps' curve (curve criteria)
        or the best step's run; on a backend working set, steady state over the top step's rounds."""
        fam = self.family("kpi")
        own = [c for c in self._for_case("kpi", case) if c.name.startswith(THROUGHPUT)]
        verdicts = self._unjudged(own, f"no {THROUGHPUT}* check of family kpi for case {case}", case)
        verdicts += [v for _, run in steps for v in rule_verdicts(fam, run)]
        points = [SweepPoint.from_run(run, label) for label, run in steps]
        best = max((run for _, run in steps), key=lambda r: r.total_iops)
        for check in self._for_case("kpi", case):
            if check.name.startswith(THROUGHPUT):
                verdicts.append(check.evaluate(points) if check.criterion in CURVE_CRITERIA else check.evaluate(best))
            elif check.criterion == steady_state.NAME and backend:
                top = steps[-1][1]
                rounds = [iops for _, iops, _ in judged_series(top, top.series.interval_ms).totals()]
                verdicts.append(check.evaluate(rounds))
        return verdicts

    # -- protocols compared ----------------------------------------------------------------------------------------------

    def protocols(self, results: Mapping[str, RunResult], *, planned: Sequence[str], baseline: str,
                  figures: Mapping[str, Callable[[RunResult], float]], window: str) -> list[Verdict]:
        """Every protocol relative to the baseline protocol, after its comparands are found measured; then every
        protocol's run by the checks that read a run and by the rules."""
        fam = self.family("protocols")
        compared = [c for c in fam if c.criterion == relative_to_baseline.NAME]
        verdicts: list[Verdict] = self._family_unjudged("protocols")
        if compared:  # a comparison needs its comparands: only the baseline protocol measured is a FAIL, not deviation 0
            verdicts.append(comparands(planned, results, baseline, what="protocol", window=window))
        for check in compared:
            metric = check.bound("metric")
            if metric not in figures:
                raise ValueError(f"{check.where}: metric {metric!r} is not measured here (use {', '.join(figures)})")
            verdicts.append(check.evaluate({name: figures[metric](r) for name, r in results.items()}, baseline))
        return [*verdicts, *run_verdicts(fam, list(results.values()), [c for c in fam if c.criterion != relative_to_baseline.NAME])]

    # -- an event during load --------------------------------------------------------------------------------------------

    def events(self, service: str, baseline: WindowStats, event: WindowStats, recovery: WindowStats, run: RunResult, *,
               case: str | None = None, series: Series | None = None, targets: Mapping[str, float] | None = None,
               event_evidence: Mapping[str, Any] | None = None) -> list[Verdict]:
        """The events checks of `service` (snapshot, mirror, replica, dedupe) and, with `case`, of that case, on the event
        and recovery windows; the rules on the whole run (events_family.event_verdicts); for an event whose array
        evidence says what it did (event_effect.EFFECT_KEYS), that it did something: such an event is not judged
        without its evidence."""
        if service in EFFECT_KEYS and event_evidence is None:
            raise ValueError(f"judge.events({service!r}): the {service} job's evidence is needed (event_evidence=)")
        fam = self.family("events")
        prefix = f"{service}_"
        if case is None:
            checks = event_checks(fam, prefix)
        else:
            checks = event_checks(fam, f"{prefix}{case}_")
            if service in _EVERY_CASE:
                checks += event_checks(fam, prefix, others=[f"{prefix}{c}_" for c in _EVERY_CASE[service]])
        named = f"{prefix}{case}_*" if case else f"{prefix}*"
        verdicts = self._unjudged(checks, f"no events check for {service}" + (f" {case}" if case else "") + f" ({named})", "event")
        verdicts += event_verdicts(fam, checks, baseline, event, recovery, run, series=series, targets=targets)
        if service in EFFECT_KEYS and event_evidence is not None:
            verdicts.append(effect_verdict(service, event_evidence))
        return verdicts

    # -- client scaling --------------------------------------------------------------------------------------------------

    def scaling(self, results: Sequence[StepResult], *, planned: Sequence[Step], runs: Sequence[RunResult]) -> list[Verdict]:
        """The stepping checks, every planned step present, the rules on every step's run (scaling_family)."""
        fam = self.family("scaling")
        stepping = [c for c in own_checks(fam) if c.name in STEPPING]
        unjudged = self._unjudged(stepping, f"no client-stepping check of family scaling ({', '.join(STEPPING)})", "client stepping")
        return [*unjudged, *stepping_verdicts(fam, results, planned=planned, runs=runs)]

    def judges_datapath(self) -> bool:
        return DATAPATH in self.family("scaling").checks

    def datapath(self, aggregate_bytes_per_s: float, hosts: int, limit_bytes_per_s: float) -> list[Verdict]:
        """All hosts at once against the lab's data-path limit ([] when the spec has no such check)."""
        checks = self.family("scaling").checks
        if DATAPATH not in checks:
            return []
        return [datapath_verdict(checks[DATAPATH], aggregate_bytes_per_s, hosts, limit_bytes_per_s)]
