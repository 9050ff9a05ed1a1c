"""pytest-xdist: tests bound to one array share a group, so they never overlap.

Run with `-n N --dist loadgroup`: tests on different arrays (different labs in
one session's collection) may run in parallel; tests on the same array run one
after another on a single worker.
"""

from __future__ import annotations

import pytest

from plugins.options import CONFIG_KEY


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if CONFIG_KEY not in config.stash:
        return
    array = config.stash[CONFIG_KEY].lab.array.name
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(f"array-{array}"))
