"""Results store glue: every run point goes to SQLite; --baseline adds the regression verdicts.

`measure` records each RunResult of a test; when the test body returns, each
point is compared, with --baseline (none | last | median:K | RUN_ID), against
the stored baseline of the same test id and parameters (only a stored point
that passed is one: iogate/results/compare.py): every check of the spec's
`regression` family (criterion, metric, mode, tolerance) is one more verdict
of the test, failing like any other. Then every point is stored with all the
test's verdicts, regression ones included (a run that failed its regression is
no later run's baseline), and with why its figures are invalid if its
generator was saturated (never a baseline either, even where all passed).
"""

from __future__ import annotations

import pytest

from fixtures.stash import POINTS, MeasuredPoint, facts
from iogate.judging.regression import regression
from iogate.metrics.generator import GENERATOR_CPU_BUSY_MAX_PCT, saturated_hosts
from iogate.results.run_context import run_context
from iogate.results.store import ResultsStore, RunPoint, metrics_from_run
from iogate.verdict import Verdict
from plugins.options import CONFIG_KEY

STORE = pytest.StashKey[ResultsStore]()


def _store(config: pytest.Config) -> ResultsStore:
    if STORE not in config.stash:
        config.stash[STORE] = ResultsStore(config.stash[CONFIG_KEY].results_db)
    return config.stash[STORE]


def point_invalid(point: MeasuredPoint) -> str | None:
    """Why this point's figures measured its initiator, not the array (iogate/metrics/generator.py); None: valid."""
    saturated = saturated_hosts([(point.name, point.result)])
    if not saturated:
        return None
    return f"generator saturated: {'; '.join(s.line() for s in saturated)} (fit to measure below {GENERATOR_CPU_BUSY_MAX_PCT:g} %)"


def after_test(item: pytest.Item, run_id: str, verdicts: list[Verdict]) -> list[Verdict]:
    """Store the test's run points; return regression verdicts (empty without --baseline)."""
    config = item.config
    points = item.stash.get(POINTS, [])
    if not points or CONFIG_KEY not in config.stash:
        return []
    iogate_config = config.stash[CONFIG_KEY]
    store = _store(config)
    # What a bake-off compares runs by (iogate/results/bakeoff_guard.py): spec, profile, engine and its version.
    store.set_run_context(run_id, run_context(spec_path=iogate_config.spec.path, profile=iogate_config.profile.name,
                                              engine=iogate_config.lab.engine, facts=facts(config)))
    measured = [(f"{item.nodeid}::{point.name}", point, metrics_from_run(point.result)) for point in points]
    added: list[Verdict] = []
    if iogate_config.baseline:
        for test_id, point, metrics in measured:  # the regression rule: iogate/judging/regression.py
            added.extend(regression(iogate_config.spec, store, test_id, point.params, metrics, iogate_config.baseline,
                                    current_run=run_id, window=point.name))
    for test_id, point, metrics in measured:
        store.add(
            RunPoint.from_verdicts(
                run_id=run_id, lab=iogate_config.lab.name, array=iogate_config.lab.array.name, test_id=test_id,
                params=point.params, metrics=metrics, verdicts=[*verdicts, *added], started_at=point.result.start_ms / 1000,
                measurement_invalid=point_invalid(point), stop=point.result.stop,
            )
        )
    return added
