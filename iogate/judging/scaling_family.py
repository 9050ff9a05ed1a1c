"""How the spec's `scaling` family judges client stepping. Its checks:

    slow_host_max_below_median  relative_to_baseline on the constant steps, the
                                median of all hosts = 100 (mode not_below)
    linear_efficiency_min       scaling_efficiency of every incremental step vs
                                k x the mean single host
    datapath_efficiency_min     scaling_efficiency of all hosts together vs the
                                lab's datapath_limit_bytes_per_s

A check the spec leaves out is not judged; any other check in the family is
refused when the spec loads (iogate/judging/families.py: it would otherwise be
silently ignored). By rule, not by the spec (iogate/judging/family_rules.py), every
step's run is judged for I/O errors (no_errors) and stalls (no_stall), and
every planned step must be present (expected_points): a job returning EIO no
longer passes slow-host, linear and efficiency, nor a step that never ran.
The steps and their figures are iogate/procedures/scaling.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from iogate.judging.families import DATAPATH, LINEAR, SLOW_HOST
from iogate.judging.family_rules import rule_verdicts
from iogate.judging.points import expected_points
from iogate.judging.spec import Check, FamilySpec
from iogate.metrics.types import RunResult
from iogate.procedures import scaling
from iogate.procedures.scaling import Step, StepResult
from iogate.verdict import Verdict

__all__ = ["DATAPATH", "LINEAR", "SLOW_HOST", "STEPPING_CHECKS", "datapath_verdict", "linear_verdict", "run_rules",
           "slow_host_verdict", "stepping_verdicts"]

STEPPING_CHECKS = (SLOW_HOST, LINEAR)


def slow_host_verdict(check: Check, results: Sequence[StepResult]) -> Verdict:
    """Each host alone vs the median of all hosts alone; the detail names every slow host."""
    metric = check.bound("metric")
    values = scaling.constant_figures(results, metric)
    verdict = check.evaluate(scaling.against_median(values), scaling.MEDIAN)
    slow = scaling.slow_hosts(values, check.bound("tolerance_pct"), metric)
    finding = "; ".join(s.sentence() for s in slow) if slow else f"no host more than {check.bound('tolerance_pct'):g} % below the median"
    return dataclasses.replace(verdict, window="constant steps", detail=f"{finding} | {verdict.detail}")


def linear_verdict(check: Check, results: Sequence[StepResult]) -> Verdict:
    """Every incremental step's aggregate MB/s vs k x the mean single host (constant steps)."""
    aggregate = scaling.incremental_figures(results, "mb_per_s")
    single = scaling.single_host_reference(results, "mb_per_s")
    return dataclasses.replace(check.evaluate(aggregate, single_host=single), window="incremental steps")


def stepping_verdicts(family: FamilySpec, results: Sequence[StepResult], *, planned: Sequence[Step],
                      runs: Sequence[RunResult]) -> list[Verdict]:
    """The stepping checks the spec names (slow host, linear efficiency) on the steps measured; every planned step
    present (a missing one fails, named); the rules (no_errors, no_stall) on every step's run."""
    judges = {SLOW_HOST: slow_host_verdict, LINEAR: linear_verdict}
    present = expected_points([s.name for s in planned], [r.step.name for r in results], what="client stepping step",
                              window="client stepping")
    return [present, *(judges[name](check, results) for name, check in family.checks.items() if name in judges),
            *run_rules(family, runs)]


def run_rules(family: FamilySpec, runs: Sequence[RunResult]) -> list[Verdict]:
    """The rules every family gets (I/O errors, stalls) on each run the scaling tests measured."""
    return [verdict for run in runs for verdict in rule_verdicts(family, run)]


def datapath_verdict(check: Check, aggregate_bytes_per_s: float, hosts: int, limit_bytes_per_s: float) -> Verdict:
    """All hosts' aggregate vs the declared data-path limit (both in bytes/s, shown in MB/s)."""
    verdict = check.evaluate(aggregate_bytes_per_s / 1e6, limit=limit_bytes_per_s / 1e6, hosts=hosts)
    return dataclasses.replace(verdict, window=f"{hosts} hosts at once", detail=f"MB/s: {verdict.detail}")
