"""A run's context for the results store (store.RunContext), from what a session knows.

The spec is identified by its path and the SHA-256 of its content (the same path
may hold other bounds later). The engine version is the one version every host
reports for the engine (`host.<name>.<engine>` environment facts, e.g.
`host.h1.fio: fio-3.36`; fio's preflight makes them equal); none, several, or
a probe's placeholder (unknown, none, missing): not recorded, and a bake-off
refuses to call the run comparable. vdbench's version is the engine's own fact
(HostEngine.facts: `host.h1.vdbench: vdbench-5.04.06`, from its output directories).

The environment keeps the session's facts with host names folded away, so two
labs with other host names compare fact by fact ("host kernel: 6.8.0" in both),
and without what differs on every run by nature (clock offsets).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

from iogate.results.store import RunContext

_HOST_FACT = re.compile(r"^host\.[^.]+\.(?P<fact>.+)$")
_PER_RUN_NOISE = ("clock_offset_ms",)  # differs between any two runs: listing it would drown the real differences
_NOT_A_VERSION = ("", "unknown", "none", "missing")  # what the host probes print when they found no version


def spec_sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None  # unreadable: not recorded (a bake-off refuses), never a made-up digest


def folded_environment(facts: Mapping[str, str]) -> dict[str, str]:
    """Facts by name, host names folded: every host's value of one fact, sorted and joined (", ")."""
    grouped: dict[str, set[str]] = {}
    for name, value in facts.items():
        match = _HOST_FACT.match(name)
        key = f"host {match['fact']}" if match else name
        if key.removeprefix("host ") in _PER_RUN_NOISE:
            continue
        grouped.setdefault(key, set()).add(str(value))
    return {key: ", ".join(sorted(values)) for key, values in sorted(grouped.items())}


def engine_version(engine: str, facts: Mapping[str, str]) -> str | None:
    """The one version of `engine` every host reports; None when none or several are reported."""
    versions = {str(v).strip() for name, v in facts.items() if (m := _HOST_FACT.match(name)) and m["fact"] == engine}
    return versions.pop() if len(versions) == 1 and not versions & set(_NOT_A_VERSION) else None


def run_context(*, spec_path: Path, profile: str, engine: str, facts: Mapping[str, str]) -> RunContext:
    return RunContext(spec=str(spec_path), spec_sha256=spec_sha256(spec_path), profile=profile, engine=engine,
                      engine_version=engine_version(engine, facts), environment=folded_environment(facts))
