"""Where drivers, connectors and engines are found by the name a lab file uses.

Adding an array driver, a protocol connector or a load engine = one new module and one line here.
Entries are import paths so that a lab never imports drivers it does not use.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from iogate.errors import LabFileError
from iogate.lab.yamlfile import Loc, field_path, line_of

ARRAY_DRIVERS: dict[str, str] = {
    "local": "iogate.arrays.local:LocalArray",
    "linux_target": "iogate.arrays.linux_target:LinuxTarget",
    "static": "iogate.arrays.static:StaticArray",
    "powerstore": "iogate.arrays.powerstore:PowerStore",
    "ontap": "iogate.arrays.ontap:Ontap",
    "pure": "iogate.arrays.pure:Pure",
    "vast": "iogate.arrays.vast:Vast",
    "huawei": "iogate.arrays.huawei:Huawei",
    "hitachi": "iogate.arrays.hitachi:Hitachi",
}

CONNECTORS: dict[str, str] = {
    "block": "iogate.hosts.connectors.block:BlockConnector",
    "nbd": "iogate.hosts.connectors.nbd:NbdConnector",
    "iscsi": "iogate.hosts.connectors.iscsi:IscsiConnector",
    "nvme-tcp": "iogate.hosts.connectors.nvme_tcp:NvmeTcpConnector",
    "nfs": "iogate.hosts.connectors.nfs:NfsConnector",
    "fc": "iogate.hosts.connectors.fc:FcConnector",
    "multipath": "iogate.hosts.connectors.multipath:MultipathConnector",
}

# Load engines: each entry opens the engine for a session (iogate.engines.base.EngineOpener).
ENGINES: dict[str, str] = {
    "fio": "iogate.engines.fio.opener:open_fio",
    "vdbench": "iogate.engines.vdbench.opener:open_vdbench",
}


def _load(spec: str) -> Any:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def _lookup(table: dict[str, str], what: str, name: str, path: Path | None, lines: dict[Loc, int] | None, loc: Loc) -> Any:
    if name not in table:
        line = line_of(lines or {}, loc)
        where = f"{path}{f' line {line}' if line else ''}: " if path else ""
        raise LabFileError(f"{where}{field_path(loc)}: unknown {what} {name!r} (known: {', '.join(sorted(table))})")
    return _load(table[name])


def array_driver_class(name: str, path: Path | None = None, lines: dict[Loc, int] | None = None) -> Any:
    return _lookup(ARRAY_DRIVERS, "array driver", name, path, lines, ("array", "driver"))


def connector_class(name: str, path: Path | None = None, lines: dict[Loc, int] | None = None, loc: Loc = ("connector",)) -> Any:
    return _lookup(CONNECTORS, "protocol connector", name, path, lines, loc)


def engine_opener(name: str, path: Path | None = None, lines: dict[Loc, int] | None = None, loc: Loc = ("engine",)) -> Any:
    return _lookup(ENGINES, "engine", name, path, lines, loc)
