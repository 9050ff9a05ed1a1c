"""Self-healing start: before anything is provisioned, release what dead runs left in the workdir.

A session killed with SIGKILL (or a crashed controller) leaves loop devices,
mounts, fio processes and cgroups; the next session cleans them up itself
(iogate.run.resources.heal) and says so: a terminal line per action and an Allure
environment entry. Runs whose controller is alive are never touched.
"""

from __future__ import annotations

import pytest

from fixtures.session import suite_of
from iogate.run.resources import heal


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    suite = suite_of(config)
    if suite is None or config.option.collectonly:
        return
    for workdir in dict.fromkeys(s.lab.workdir for s in suite.labs):  # each workdir once: labs may share one
        report = heal(workdir)
        summary = report.summary()
        if not summary:
            continue
        terminal = config.pluginmanager.get_plugin("terminalreporter")
        for line in [f"iogate self-healing start ({workdir}): {summary}", *report.cleaned, *report.left_alone, *report.failed]:
            if terminal is not None:
                terminal.write_line(f"iogate: {line}" if not line.startswith("iogate") else line, yellow=True)
        for session in suite.labs:
            if session.lab.workdir == workdir:
                session.facts["iogate.selfheal"] = summary
