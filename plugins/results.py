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

from fixtures.session import EXPORTS, MeasuredPoint, lab_of, points_of, suite_of
from iogate.judging.regression import regression
from iogate.judging.validity import point_invalid_reason
from iogate.lab import Lab
from iogate.results.bakeoff_guard import context_key
from iogate.results.bakeoff_series import save_series
from iogate.results.run_context import run_context
from iogate.results.store import RunPoint, metrics_from_run
from iogate.verdict import Verdict


def point_invalid(point: MeasuredPoint, lab: Lab | None = None) -> str | None:
    """Why this point's figures measured its initiator, not the array (iogate/judging/validity.py); None: valid."""
    return point_invalid_reason(point.name, point.result, lab)


def after_test(item: pytest.Item, run_id: str, verdicts: list[Verdict]) -> list[Verdict]:
    """Store the test's run points under the session's run id (one for all its labs); return regression verdicts
    (empty without --baseline). `run_id` is the lab's run directory, used only outside an IOGate session."""
    points = points_of(item)
    suite, session = suite_of(item.config), lab_of(item)
    if not points or suite is None or session is None:
        return []
    run_id = suite.run_id
    store = suite.store()
    # What a bake-off compares runs by (iogate/results/bakeoff_guard.py): spec, profile, engine and its version.
    # Per lab (labs of one run may differ in engine version, kernel ...); under the run id too in a one-lab session.
    context = run_context(spec_path=session.spec.path, profile=session.profile.name, engine=session.lab.engine,
                          facts=session.facts)
    for key in (context_key(run_id, session.name), *([run_id] if len(suite.labs) == 1 else [])):
        store.set_run_context(key, context)
    measured = [(f"{item.nodeid}::{point.name}", point, metrics_from_run(point.result)) for point in points]
    added: list[Verdict] = []
    if suite.baseline:
        for test_id, point, metrics in measured:  # the regression rule: iogate/judging/regression.py
            added.extend(regression(session.spec, store, test_id, point.params, metrics, suite.baseline,
                                    current_run=run_id, window=point.name))
    for test_id, point, metrics in measured:  # IOPS over time for the bake-off's overlays: beside the run's exports
        save_series(EXPORTS / run_id, test_id, session.name, point.result, point.events)
        store.add(
            RunPoint.from_verdicts(
                run_id=run_id, lab=session.lab.name, array=session.lab.array.name, test_id=test_id,
                params=point.params, metrics=metrics, verdicts=[*verdicts, *added], started_at=point.result.start_ms / 1000,
                measurement_invalid=point_invalid(point, session.lab), stop=point.result.stop,
                array_latency=point.array_latency,
            )
        )
    return added
