"""How the spec's `scaling` family judges client stepping. Its checks:

    slow_host_max_below_median  relative_to_baseline on the constant steps, the
                                median of all hosts = 100 (mode not_below)
    linear_efficiency_min       scaling_efficiency of every incremental step vs
                                k x the mean single host
    datapath_efficiency_min     scaling_efficiency of all hosts together vs the
                                lab's datapath_limit_bytes_per_s

A check the spec leaves out is not judged; any other check in the family is
refused when the spec loads (criteria/families.py: it would otherwise be
silently ignored). The steps and their figures are iogate/procedures/scaling.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from criteria.families import DATAPATH, LINEAR, SLOW_HOST
from criteria.spec import Check, FamilySpec
from iogate.procedures import scaling
from iogate.procedures.scaling import StepResult
from iogate.verdict import Verdict

__all__ = ["DATAPATH", "LINEAR", "SLOW_HOST", "STEPPING_CHECKS", "datapath_verdict", "linear_verdict", "slow_host_verdict",
           "stepping_verdicts"]

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


def stepping_verdicts(family: FamilySpec, results: Sequence[StepResult]) -> list[Verdict]:
    """The stepping checks the spec names (slow host, linear efficiency)."""
    judges = {SLOW_HOST: slow_host_verdict, LINEAR: linear_verdict}
    return [judges[name](check, results) for name, check in family.checks.items() if name in judges]


def datapath_verdict(check: Check, aggregate_bytes_per_s: float, hosts: int, limit_bytes_per_s: float) -> Verdict:
    """All hosts' aggregate vs the declared data-path limit (both in bytes/s, shown in MB/s)."""
    verdict = check.evaluate(aggregate_bytes_per_s / 1e6, limit=limit_bytes_per_s / 1e6, hosts=hosts)
    return dataclasses.replace(verdict, window=f"{hosts} hosts at once", detail=f"MB/s: {verdict.detail}")
