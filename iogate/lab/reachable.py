"""`iogate lab check --connect`: reach every host and the array the way a run will, provisioning nothing.

Hosts: SSH as root (a run loads block devices and logs in to targets), fio equal to the
controller's (client/server speaks one protocol version), the clock within 100 ms of the
controller's (per-second logs are lined up by time), and with two or more hosts each
host's `fio --server` on port 8765 accepting the controller (IOGate starts it only on
netns labs). Array: a vendor driver logs in and reads what setup() reads (version, model,
capabilities); nothing is created, so nothing is journalled.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from iogate.errors import IOGateError


def host_lines(lab: Any) -> list[tuple[bool, str]]:
    from iogate.engines.choice import fio_server_port
    from iogate.hosts.initiator import Initiator
    from iogate.hosts.preflight import controller_fio_version, preflight

    initiators = {h.name: Initiator.from_config(h) for h in lab.hosts}
    try:
        expected = controller_fio_version()
    except IOGateError as exc:
        return [(False, f"controller: fio --version: {exc}")]
    port = fio_server_port(initiators, lab.engine)
    lines = [(True, f"controller: {expected}; fio --server port checked: {port or 'no (one host: fio runs on the host itself)'}")]
    for result in preflight(list(initiators.values()), expected_fio=expected, fio_server_port=port, raise_on_problem=False):
        # An unreachable host's error quotes the whole probe script: the transport's own words are what tell.
        text = re.sub(r"cannot run '.*?': ", "", result.describe(), flags=re.DOTALL)
        lines.append((result.ok, f"{text} (transport {initiators[result.host].config.transport})" if not result.reachable else text))
        initiator = initiators[result.host]
        if result.reachable and not initiator.is_local:
            try:
                uid = initiator.run("id -u").stdout.strip()
            except IOGateError as exc:
                uid = f"unknown ({exc})"
            lines.append((uid == "0", f"host {result.host}: SSH user is {'root' if uid == '0' else f'uid {uid}, not root'}"))
    return lines


def array_lines(lab: Any, driver: Any, options: Any) -> list[tuple[bool, str]]:
    sdk = getattr(driver, "sdk", None)
    if sdk is None:
        return [(True, f"array {lab.array.name}: driver {lab.array.driver} has no management API to log in to (not checked)")]
    try:
        array = driver(lab, SimpleNamespace(run_id="labcheck"))  # a Run stand-in: _discover reads, never creates
        array._conn = sdk.connect(array.options, lab.array.name)
        array._api = sdk.caller(lab.array.name, array.options, array._conn)
        capabilities = sorted(c.value for c in array._discover())
    except Exception as exc:  # an SDK's own failure types vary; the check reports, never raises
        return [(False, f"array {lab.array.name}: login and discovery failed: {exc}")]
    facts = array.facts()
    version = facts.get("array.firmware") or getattr(array, "version", "") or "unknown"
    api = getattr(__import__(driver.__module__, fromlist=["API_VERSION"]), "API_VERSION", "")
    return [(True, f"array {lab.array.name}: logged in; {facts.get('array.model', lab.array.driver)}, release {version}"
                   f"{f', REST API {api}' if api else ''}; capabilities {', '.join(capabilities) or 'none'}")]


def connect_lines(lab: Any, driver: Any, options: Any) -> list[tuple[bool, str]]:
    return [*host_lines(lab), *array_lines(lab, driver, options)]
