"""Report glue: Allure environment and categories (product defect vs infrastructure), and the bake-off page.

Fixtures put what they learn (array model and firmware, host kernels and fio versions) into their lab's facts
(fixtures/session.py LabSession.facts); at session end they are written to allure-results/environment.properties
(a session of several labs: each fact under its lab's name), with categories.json beside them. A session of
two or more labs ends with its bake-off (iogate/results/bakeoff_session.py): the matrix of its labs from the
results store, written to exports/<run>/bakeoff.{csv,xlsx,html} and as the Allure test "Bake-off" whose
attachment is the page.
"""

from __future__ import annotations

import platform
from pathlib import Path

import allure
import pytest

import iogate
from fixtures.session import EXPORTS, Suite, lab_of, suite_of
from iogate.report import write_categories, write_environment


@pytest.fixture(autouse=True)
def _allure_lab_labels(request: pytest.FixtureRequest) -> None:
    """Tags every result with its lab, array and hosts; and the protocol where parametrized."""
    session = lab_of(request.node)
    if session is None:
        return
    lab = session.lab
    allure.dynamic.tag(f"lab:{lab.name}", f"array:{lab.array.name}", *(f"host:{h.name}" for h in lab.hosts))
    protocol = getattr(request.node, "callspec", None) and request.node.callspec.params.get("protocol")
    if protocol:
        allure.dynamic.tag(f"protocol:{protocol}")


def environment_values(suite: Suite) -> dict[str, str]:
    """One lab: its keys as ever (lab, lab.file, criteria ...); several: each lab's keys prefixed `<lab>: `."""
    common = {"profile": suite.profile.name, "iogate.version": iogate.__version__, "iogate.run": suite.run_id,
              "controller.kernel": platform.release()}
    per_lab = []
    for s in suite.labs:
        per_lab.append({"lab": s.name, "lab.file": s.lab.path, "criteria": str(s.spec.path),
                        "criteria.description": s.spec.description, "criteria.chosen_by": s.spec_chosen_by, **s.facts})
    if len(per_lab) == 1:
        return {**common, **per_lab[0]}
    values = {**common, "labs": ", ".join(suite.names)}
    for s, lab_values in zip(suite.labs, per_lab, strict=True):
        values.update({f"{s.name}: {key}": value for key, value in lab_values.items() if key != "lab"})
    return values


def pytest_sessionfinish(session: pytest.Session) -> None:
    results_dir = session.config.getoption("allure_report_dir", None)
    suite = suite_of(session.config)
    if not results_dir or suite is None:
        return
    write_environment(results_dir, environment_values(suite))
    write_categories(results_dir)
    if len(suite.labs) > 1 and not hasattr(session.config, "workerinput") and not session.config.option.collectonly:
        from iogate.results.bakeoff_session import session_bakeoff  # matplotlib, openpyxl: only for a bake-off

        _, lines = session_bakeoff(suite.results_db, suite.run_id, Path(results_dir), EXPORTS / suite.run_id)
        terminal = session.config.pluginmanager.get_plugin("terminalreporter")
        for line in lines:
            if terminal is not None:
                terminal.write_line(f"iogate bakeoff: {line}")
