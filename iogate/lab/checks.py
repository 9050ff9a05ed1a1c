"""Checks across a lab's fields that a schema cannot express, each tied to the line it is about.

Run by load_lab after the schema (and the driver's option schema) passed, so a
lab file with two protocols of one name, a workdir of `/`, or volumes that
cannot fit the pool is refused as `file line N: field: ...` before anything is
provisioned. Drivers add their own (pool sizes, pre-provisioned volumes) with
a `lab_problems(lab, options)` class method (ArrayDriver; [] where they add none).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iogate.lab.yamlfile import Loc

Problem = tuple[Loc, str]

# A run directory tree under one of these would mix IOGate's pool images, job files
# and cleanup with the system's own files.
SYSTEM_DIRS = frozenset({
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt", "/opt",
    "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr", "/usr/local", "/var", "/var/cache",
    "/var/lib", "/var/log", "/var/spool", "/var/tmp",
})
NEVER_UNDER = ("/bin", "/boot", "/dev", "/etc", "/lib", "/proc", "/run", "/sbin", "/sys", "/usr")


def human_size(num_bytes: int) -> str:
    """1 GiB, 900 TiB, 1.5 GiB: sizes as a lab file writes them."""
    for unit, factor in (("PiB", 1 << 50), ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if num_bytes >= factor:
            return f"{num_bytes / factor:.4g} {unit}"
    return f"{num_bytes} bytes"


def duplicates(names: Sequence[str], field: str) -> list[Problem]:
    """One problem per repeated name, at the repeat (its first use named)."""
    problems = []
    first: dict[str, int] = {}
    for index, name in enumerate(names):
        if name in first:
            problems.append(((field, index, "name"), f"duplicate name {name!r} (also {field}.{first[name]}); names must be unique"))
        first.setdefault(name, index)
    return problems


def workdir_problem(workdir: str) -> str | None:
    """Why a workdir is unfit (None: fine). Symlinks and '..' are resolved first."""
    if not workdir.startswith("/"):
        return f"{workdir!r} is not an absolute path"
    real = os.path.realpath(workdir)
    if real in SYSTEM_DIRS or any(real == top or real.startswith(f"{top}/") for top in NEVER_UNDER):
        shown = workdir if real == workdir else f"{workdir} (= {real})"
        return f"{shown} is a system directory; use a directory of its own such as /var/tmp/iogate"
    return None


def nearest_existing(path: str) -> Path:
    """The deepest existing ancestor of path (the file system a new workdir would live on)."""
    current = Path(path)
    while not current.exists() and current != current.parent:
        current = current.parent
    return current


def lab_problems(lab: Any) -> list[Problem]:
    problems = duplicates([p.name for p in lab.protocols], "protocols")
    problems += duplicates([h.name for h in lab.hosts], "hosts")
    problem = workdir_problem(lab.workdir)
    if problem:
        problems.append((("workdir",), problem))
    return problems
