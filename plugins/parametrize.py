"""Parametrize tests by lab, the lab's name first in every test id: test_baseline[local], test_sweep_saturation[local-nbd].

Every test bound to a lab (its fixtures reach `lab_session`) runs once per lab of the session; a test asking for
`protocol` runs once per protocol of *its* lab. A test module whose grid depends on the lab (the sweep's
transports, the lab's tile count) gives its values per lab with `per_lab(metafunc, argname, values)`, so each lab
gets its own grid and the lab still leads the id. `lab_session` is a session-scoped parameter: pytest orders the
tests lab by lab and tears one lab's session fixtures (array, volumes, connections) down before the next lab's are
set up, so labs in one process never overlap (plugins/scheduling.py spreads disjoint labs over xdist workers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from _pytest.scope import Scope  # pytest 9.2 (requirements.txt pins it): the lab's parameter stays session-scoped

from fixtures.session import LAB_PARAM, LabSession, suite_of

PerLab = Callable[[LabSession], Sequence[tuple[str, Any]]]  # a lab -> its (id, value) pairs
_DONE = pytest.StashKey[bool]()


def per_lab(metafunc: pytest.Metafunc, argname: str, values: PerLab) -> None:
    """Parametrize `argname` with each lab's own values, jointly with the lab: ids read [LAB-VALUEID]."""
    _parametrize(metafunc, argname, values)


def _parametrize(metafunc: pytest.Metafunc, argname: str | None = None, values: PerLab | None = None) -> None:
    suite = suite_of(metafunc.config)
    if suite is None or LAB_PARAM not in metafunc.fixturenames or metafunc.definition.stash.get(_DONE, False):
        return
    by_protocol = "protocol" in metafunc.fixturenames and argname != "protocol"
    argnames = [LAB_PARAM, *(["protocol"] if by_protocol else []), *([argname] if argname else [])]
    combos: list[Any] = []
    ids: list[str] = []
    for session in suite.labs:
        protocols: list[str | None] = [p.name for p in session.lab.protocols] if by_protocol else [None]
        extras: Sequence[tuple[str, Any]] = values(session) if values is not None else [("", None)]
        for protocol in protocols:
            for value_id, value in extras:
                combo = [session.name, *([protocol] if by_protocol else []), *([value] if argname else [])]
                combos.append(tuple(combo) if len(combo) > 1 else combo[0])
                ids.append("-".join(part for part in (session.name, protocol, value_id) if part))
    metafunc.definition.stash[_DONE] = True
    if len(argnames) == 1:
        metafunc.parametrize(LAB_PARAM, combos, ids=ids, indirect=True, scope="session")
        return
    # The other arguments are function-scoped (pytest must not regroup the tests by protocol or grid point, whose
    # order matters), the lab session-scoped: one parametrize call cannot say both, so the lab's scope is set after.
    metafunc.parametrize(argnames, combos, ids=ids, indirect=[LAB_PARAM], scope="function")
    for callspec in metafunc._calls:
        callspec._arg2scope[LAB_PARAM] = Scope.Session


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Runs after a test module's own pytest_generate_tests (which may have called per_lab)."""
    _parametrize(metafunc)
