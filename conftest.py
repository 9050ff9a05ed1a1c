"""Registers IOGate's pytest plugins and fixtures; nothing else lives here."""

pytest_plugins = [
    "plugins.options",
    "plugins.verdicts",
    "plugins.parametrize",
    "plugins.scheduling",
    "plugins.report",
    "fixtures.lab",
    "fixtures.volumes",
    "fixtures.workload",
]
