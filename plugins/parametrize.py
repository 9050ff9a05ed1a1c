"""Parametrize tests by lab, the lab's name first in every test id: test_baseline[local], test_sweep_saturation[local-nbd].

Every test bound to a lab (its fixtures reach `lab_session`) runs once per lab of the session; a test asking for
`protocol` runs once per protocol of *its* lab. A test module whose grid depends on the lab (the sweep's
transports, the lab's tile count) gives its values per lab with `fixtures.session.per_lab(metafunc, argname, values)`, so each lab
gets its own grid and the lab still leads the id. `lab_session` is a session-scoped parameter: pytest orders the
tests lab by lab and tears one lab's session fixtures (array, volumes, connections) down before the next lab's are
set up, so labs in one process never overlap (plugins/scheduling.py spreads disjoint labs over xdist workers).
"""

from __future__ import annotations

import pytest

from fixtures.session import parametrize_by_lab


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Runs after a test module's own pytest_generate_tests (which may have called fixtures.session.per_lab)."""
    parametrize_by_lab(metafunc)
