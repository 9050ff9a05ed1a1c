"""The regression rule's entry point: this run point's stored figures against a stored baseline that passed.

Every check of the spec's `regression` family (relative_to_baseline on a stored metric) judges one run point
against the baseline `--baseline` chooses (none | last | median:K | RUN_ID), picked from stored points that
passed and were valid measurements only (iogate/results/compare.py does the choosing and the arithmetic).
`--baseline` with no regression check to judge is a spec error, not a pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iogate.errors import LabFileError
from iogate.judging.spec import AcceptanceSpec
from iogate.results.compare import regression_verdicts
from iogate.results.store import Metrics, ResultsStore
from iogate.verdict import Verdict


def regression(spec: AcceptanceSpec, store: ResultsStore, test_id: str, params: Mapping[str, Any], current: Metrics, how: str, *,
               current_run: str | None = None, window: str = "measure") -> list[Verdict]:
    """Every regression check of the spec on one run point (`window` names the point)."""
    checks = list(spec.for_family("regression"))
    if not checks:
        raise LabFileError(f"{spec.path}: --baseline given but the spec has no check in family regression")
    return regression_verdicts(store, test_id, params, current, how, checks, current_run=current_run, window=window)
