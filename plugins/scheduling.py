"""pytest-xdist: labs that share a host run one after another; labs with disjoint hosts may run in parallel.

Run with `-n N --dist loadgroup`: every test of a lab gets the xdist group of the lab's host group
(fixtures/session.py Suite.groups: labs sharing an initiator, or the controller's CPUs for the local array,
are one group), so one worker runs them in order, lab after lab (a shared initiator never carries two
loads); labs of another group go to another worker at the same time.
"""

from __future__ import annotations

import pytest

from fixtures.session import lab_of, suite_of


def group_names(config: pytest.Config) -> dict[str, str]:
    """lab name -> its xdist group ("labs-a+b": the labs of one host group)."""
    suite = suite_of(config)
    if suite is None:
        return {}
    return {s.name: "labs-" + "+".join(m.name for m in group) for group in suite.groups() for s in group}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    groups = group_names(config)
    if not groups or not config.pluginmanager.hasplugin("xdist"):  # -p no:xdist: one process, nothing to spread
        return
    for item in items:
        session = lab_of(item)
        if session is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(groups[session.name]))
