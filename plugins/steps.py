"""Set-up and tear-down read as named steps in Allure, not as fixture names and `<lambda>`.

Allure lists every fixture a test used as a "before" entry under its fixture
name, and every finalizer pytest registers as an "after" entry: pytest's own
bookkeeping (a lambda that reports the fixture finished, partials that finish
dependent fixtures) shows up as `lab::<lambda>`, `array::3`. This plugin names
each fixture by what it does for this lab ("provision 2 volumes", "connect
volumes over block, nbd") and keeps only the real tear-down of a yield fixture
as an after-step ("delete provisioned volumes"); the bookkeeping finalizers
still run, unseen.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator
from typing import Any

import pytest
from allure_commons._allure import fixture as AllureFixture  # the class allure-pytest wraps finalizers in

from fixtures.session import LabSession, suite_of

Title = Callable[[LabSession], str]

# fixture name -> (set-up title, tear-down title); titles read the session's lab and spec.
STEPS: dict[str, tuple[Title, Title]] = {
    "suite": (lambda c: "read lab files, run profile and acceptance spec", lambda c: ""),
    "lab_session": (lambda c: f"lab {c.lab.name}: its session", lambda c: f"lab {c.lab.name} done"),
    "lab": (lambda c: f"lab {c.lab.name} ({c.lab.path})", lambda c: ""),
    "profile": (lambda c: f"run profile {c.profile.name}", lambda c: ""),
    "spec": (lambda c: f"acceptance spec {c.spec.path} (chosen by {c.spec_chosen_by})", lambda c: ""),
    "run": (lambda c: f"open run directory and ledger under {c.lab.workdir}", lambda c: "release what the run's ledger still holds"),
    "lab_hosts_up": (lambda c: f"bring up lab machines ({c.lab.bring_up or 'none needed'})", lambda c: "bring lab machines down"),
    "array": (lambda c: f"set up array {c.lab.array.name} ({c.lab.array.driver})", lambda c: f"tear down array {c.lab.array.name}"),
    "initiators": (lambda c: f"reach {len(c.lab.hosts)} host(s): {', '.join(h.name for h in c.lab.hosts)}", lambda c: ""),
    "guard": (lambda c: "arm the device guard (only provisioned devices may be written)", lambda c: ""),
    "volume_factory": (lambda c: "volume provisioning", lambda c: "delete provisioned volumes"),
    "volumes": (lambda c: f"provision {c.lab.volumes.count} volumes of {c.lab.volumes.size}{qos(c)}", lambda c: ""),
    "connect": (lambda c: f"connect volumes over {', '.join(p.name for p in c.lab.protocols)}", lambda c: "disconnect volumes"),
    "engine": (lambda c: "fio engine", lambda c: ""),
    "prefilled": (lambda c: f"prefill {c.lab.volumes.count} volumes (sequential 256 KiB, whole volume)", lambda c: ""),
    "protocol_volumes": (lambda c: "volumes per protocol", lambda c: ""),
    "kpi_volumes": (lambda c: f"provision and prefill {c.lab.volumes.count} KPI volumes", lambda c: ""),
    "state": (lambda c: "snapshot prefilled volumes (state restore)", lambda c: "delete state snapshots"),
    "restored": (lambda c: "restore volumes to their prefilled state", lambda c: ""),
    "sweep_points": (lambda c: "sweep point collector", lambda c: ""),
    "all_hosts_steps": (lambda c: "all-hosts step collector", lambda c: ""),
    "measure": (lambda c: "workload runner", lambda c: ""),
    "during_load": (lambda c: "event schedule runner", lambda c: ""),
    "judge": (lambda c: "verdict collector", lambda c: ""),
    "require": (lambda c: "array capability check", lambda c: ""),
}


def qos(config: LabSession) -> str:
    caps = config.lab.volumes.qos
    if caps is None:
        return ""
    parts = [f"{name.replace('_', ' ')} {value}" for name, value in caps.model_dump().items() if value]
    return f", capped at {', '.join(parts)}"


def _is_yield_teardown(finalizer: Any) -> bool:
    return isinstance(finalizer, functools.partial) and getattr(finalizer.func, "__name__", "") == "_teardown_yield_fixture"


def _titles(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> tuple[str, str] | None:
    suite = suite_of(request.config)
    config = suite.active if suite is not None else None
    if suite is not None and fixturedef.argname == "lab_session":  # not active yet: its parameter names it
        param = getattr(request, "param", None)
        config = suite.lab(str(param)) if param is not None else suite.labs[0]
    steps = STEPS.get(fixturedef.argname)
    if config is None or steps is None:
        return None
    setup, teardown = steps
    return setup(config), teardown(config)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Generator[None, Any, None]:
    """Outermost wrapper: names the fixture before allure-pytest records it, and after allure-pytest
    wrapped the finalizers, unwraps pytest's bookkeeping ones and names the real tear-down."""
    titles = _titles(fixturedef, request)
    if titles is not None:
        fixturedef.func.__allure_display_name__ = titles[0]  # type: ignore[attr-defined]
    yield
    finalizers = getattr(fixturedef, "_finalizers", [])
    for index, finalizer in enumerate(finalizers):
        if not isinstance(finalizer, AllureFixture):
            continue
        inner = finalizer._fixture_function
        if not _is_yield_teardown(inner):
            finalizers[index] = inner  # pytest's bookkeeping: runs as before, not listed
        elif titles is not None and titles[1]:
            finalizer._name = titles[1]
        else:
            finalizer._name = f"tear down {titles[0] if titles else fixturedef.argname}"
