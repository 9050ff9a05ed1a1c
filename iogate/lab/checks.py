"""Checks across a lab's fields that a schema cannot express, each tied to the line it is about.

Run by load_lab after the schema (and the driver's option schema) passed, so a
lab file with two protocols of one name, a workdir of `/`, or volumes that
cannot fit the pool is refused as `file line N: field: ...` before anything is
provisioned. Drivers add their own (pool sizes, pre-provisioned volumes) with
a `lab_problems(lab, options)` class method (ArrayDriver; [] where they add none).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from iogate.lab import secrets
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


# Keys whose value is a credential wherever they appear (driver options, connector options, hooks).
SECRET_KEY = re.compile(r"(^|_)(password|passwd|secret|token|api_key)$", re.IGNORECASE)
BOOLEAN_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "0", "1"})


def host_address(host: Any) -> str | None:
    """Where a host is reached: its address, else its transport's host[:port] (None: a local host)."""
    if host.address:
        return str(host.address)
    if host.transport.startswith("local://"):
        return None
    parts = urlsplit(host.transport)
    return f"{parts.hostname}{f':{parts.port}' if parts.port else ''}" if parts.hostname else None


def address_problems(hosts: Sequence[Any]) -> list[Problem]:
    """Two host names on one address would be one machine loaded twice, judged as two."""
    problems: list[Problem] = []
    first: dict[str, int] = {}
    for index, host in enumerate(hosts):
        address = host_address(host)
        if address is None:
            continue
        if address in first:
            other = hosts[first[address]].name
            field = "address" if host.address else "transport"
            problems.append((("hosts", index, field), f"host {host.name} has the address {address} of host {other} "
                             f"(hosts.{first[address]}): two names for one machine; give each host its own address"))
        first.setdefault(address, index)
    return problems


def verify_tls_problem(value: Any) -> str | None:
    """verify_tls is true, false or the path of an existing CA bundle; "false" in quotes is none of them."""
    if isinstance(value, bool) or value is None:
        return None
    if not isinstance(value, str):
        return f"{value!r}: give true, false or the path of the array's CA bundle"
    if value.strip().lower() in BOOLEAN_WORDS:
        return (f"{value!r} is a string, read as the path of a CA bundle: write true or false without quotes "
                "for a boolean")
    if not Path(value).expanduser().is_file():
        return f"CA bundle {value} does not exist (give the path of the array's CA bundle, or true for the system's CAs)"
    return None


def reference_problems(node: Any, loc: Loc = ()) -> list[Problem]:
    """Credentials by reference everywhere: a secret-named key holds ${env:..} / ${file:..}; no string carries
    one inline (https://user:pw@, curl -u user:pw, an Authorization header); CHAP comes as user and password."""
    problems: list[Problem] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(key, str) and SECRET_KEY.search(key) and isinstance(value, str) and value and not secrets.is_reference(value):
                # Never echo the value: it is the secret.
                problems.append(((*loc, key), "give the credential by reference, ${env:NAME} or ${file:PATH}, never inline"))
            elif (isinstance(key, str) and key.lower() == "authorization" and isinstance(value, str)
                  and not secrets.REFERENCE_IN_TEXT.search(value)):
                problems.append(((*loc, key), "a credential is written inline; use a reference, ${env:NAME} or ${file:PATH}, in its place"))
            else:
                problems += reference_problems(value, (*loc, key))
        if node.get("chap_password") and not node.get("chap_user"):
            problems.append(((*loc, "chap_password"), "chap_password without chap_user: CHAP would not be applied; give both"))
        if node.get("chap_user") and not node.get("chap_password"):
            problems.append(((*loc, "chap_user"), "chap_user without chap_password: give both (the password by reference)"))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            problems += reference_problems(value, (*loc, index))
    elif isinstance(node, str) and secrets.inline_credentials(node):
        problems.append((loc, "a credential is written inline; use a reference, ${env:NAME} or ${file:PATH}, in its place"))
    return problems


def lab_problems(lab: Any) -> list[Problem]:
    problems = duplicates([p.name for p in lab.protocols], "protocols")
    problems += duplicates([h.name for h in lab.hosts], "hosts")
    problems += address_problems(lab.hosts)
    problem = workdir_problem(lab.workdir)
    if problem:
        problems.append((("workdir",), problem))
    if "verify_tls" in lab.array.options:
        problem = verify_tls_problem(lab.array.options["verify_tls"])
        if problem:
            problems.append((("array", "options", "verify_tls"), problem))
    return problems
