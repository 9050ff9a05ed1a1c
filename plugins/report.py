"""Report glue: Allure environment and categories (product defect vs infrastructure).

Fixtures put what they learn (array model and firmware, host kernels and fio
versions) into the session's facts (fixtures/stash.py); at session end they are written to
allure-results/environment.properties, with categories.json beside them.
"""

from __future__ import annotations

import platform

import allure
import pytest

import iogate
from fixtures.stash import facts
from iogate.report import write_categories, write_environment
from plugins.options import CONFIG_KEY


@pytest.fixture(autouse=True)
def _allure_lab_labels(request: pytest.FixtureRequest) -> None:
    """Tags every result with its lab, array and hosts; and the protocol where parametrized."""
    if CONFIG_KEY not in request.config.stash:
        return
    lab = request.config.stash[CONFIG_KEY].lab
    allure.dynamic.tag(f"lab:{lab.name}", f"array:{lab.array.name}", *(f"host:{h.name}" for h in lab.hosts))
    protocol = getattr(request.node, "callspec", None) and request.node.callspec.params.get("protocol")
    if protocol:
        allure.dynamic.tag(f"protocol:{protocol}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    results_dir = session.config.getoption("allure_report_dir", None)
    if not results_dir or CONFIG_KEY not in session.config.stash:
        return
    iogate_config = session.config.stash[CONFIG_KEY]
    values = {
        "lab": iogate_config.lab.name,
        "lab.file": iogate_config.lab.path,
        "profile": iogate_config.profile.name,
        "criteria": str(iogate_config.spec.path),
        "criteria.description": iogate_config.spec.description,
        "criteria.chosen_by": iogate_config.spec_chosen_by,
        "iogate.version": iogate.__version__,
        "controller.kernel": platform.release(),
        **facts(session.config),
    }
    write_environment(results_dir, values)
    write_categories(results_dir)
