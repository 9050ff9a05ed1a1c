"""Self-healing start: before anything is provisioned, release what dead runs left in the workdir.

A session killed with SIGKILL (or a crashed controller) leaves loop devices,
mounts, fio processes and cgroups; the next session cleans them up itself
(iogate.run.resources.heal) and says so: a terminal line per action and an Allure
environment entry. Runs whose controller is alive are never touched.
"""

from __future__ import annotations

import pytest

from fixtures.stash import facts
from iogate.run.resources import heal
from plugins.options import CONFIG_KEY


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    if CONFIG_KEY not in config.stash or config.option.collectonly:
        return
    workdir = config.stash[CONFIG_KEY].lab.workdir
    report = heal(workdir)
    summary = report.summary()
    if not summary:
        return
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    for line in [f"iogate self-healing start ({workdir}): {summary}", *report.cleaned, *report.left_alone, *report.failed]:
        if terminal is not None:
            terminal.write_line(f"iogate: {line}" if not line.startswith("iogate") else line, yellow=True)
    facts(config)["iogate.selfheal"] = summary
