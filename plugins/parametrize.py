"""Parametrize tests from the lab: a test asking for `protocol` runs once per lab protocol.

Ids read like test_protocol_compare[local-nbd]: lab name, then the point.
"""

from __future__ import annotations

import pytest

from plugins.options import CONFIG_KEY


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "protocol" in metafunc.fixturenames and CONFIG_KEY in metafunc.config.stash:
        lab = metafunc.config.stash[CONFIG_KEY].lab
        names = [p.name for p in lab.protocols]
        metafunc.parametrize("protocol", names, ids=[f"{lab.name}-{n}" for n in names], scope="function")
