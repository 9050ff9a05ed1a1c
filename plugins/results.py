"""Results store glue: every run point goes to SQLite; --baseline adds a regression verdict.

`measure` records each RunResult of a test; when the test body returns, each is
stored with the test's verdicts, and with --baseline (last | median:K | RUN_ID)
it is first compared with the stored baseline of the same test id and
parameters: every check of the spec's `regression` family (criterion, metric,
mode, tolerance) is one more verdict of the test, failing like any other.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from criteria.spec import Check
from fixtures.stash import POINTS
from iogate.errors import LabFileError
from iogate.results.compare import choose_baseline, regression_verdict
from iogate.results.store import ResultsStore, RunPoint, metrics_from_run
from iogate.verdict import Verdict
from plugins.options import CONFIG_KEY

STORE = pytest.StashKey[ResultsStore]()


def _store(config: pytest.Config) -> ResultsStore:
    if STORE not in config.stash:
        config.stash[STORE] = ResultsStore(config.stash[CONFIG_KEY].results_db)
    return config.stash[STORE]


def _regression_checks(config: pytest.Config) -> list[Check]:
    """Every check of the spec's regression family; --baseline with none to judge is a spec error, not a pass."""
    spec = config.stash[CONFIG_KEY].spec
    checks = list(spec.for_family("regression"))
    if not checks:
        raise LabFileError(f"{spec.path}: --baseline given but the spec has no check in family regression")
    return checks


def after_test(item: pytest.Item, run_id: str, verdicts: list[Verdict]) -> list[Verdict]:
    """Store the test's run points; return regression verdicts (empty without --baseline)."""
    config = item.config
    points = item.stash.get(POINTS, [])
    if not points or CONFIG_KEY not in config.stash:
        return []
    iogate_config = config.stash[CONFIG_KEY]
    store = _store(config)
    added: list[Verdict] = []
    for point in points:
        test_id = f"{item.nodeid}::{point.name}"
        metrics = metrics_from_run(point.result)
        if iogate_config.baseline:
            baseline = choose_baseline(store, test_id, point.params, iogate_config.baseline, current_run=run_id)
            if baseline is not None:
                for check in _regression_checks(config):
                    added.append(replace(regression_verdict(metrics, baseline, check), window=point.name))
        store.add(
            RunPoint.from_verdicts(
                run_id=run_id, lab=iogate_config.lab.name, array=iogate_config.lab.array.name, test_id=test_id,
                params=point.params, metrics=metrics, verdicts=[*verdicts, *added], started_at=point.result.start_ms / 1000,
            )
        )
    return added
