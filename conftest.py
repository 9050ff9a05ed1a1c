"""Registers IOGate's pytest plugins and fixtures; nothing else lives here."""

pytest_plugins = [
    "plugins.options",
    "plugins.report",
    "plugins.results",
    "plugins.verdicts",
    "plugins.steps",
    "plugins.parametrize",
    "plugins.scheduling",
    "plugins.progress",
    "plugins.heal",
    "plugins.redaction",
    "fixtures.lab",
    "fixtures.volumes",
    "fixtures.workload",
    "fixtures.state",
    "fixtures.suite",
    "fixtures.events",
    "fixtures.scaling",
]
