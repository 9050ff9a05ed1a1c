"""Secrets by reference, and redaction of every resolved secret value.

A lab file never needs to hold a credential inline: it writes a reference that
is resolved at run time,

    ${env:NAME}     the environment variable NAME
    ${file:PATH}    the contents of PATH (one trailing newline dropped)

Every value resolved here is remembered for the life of the process, and
`redact()` replaces each one with `***` in any text IOGate is about to write
(terminal, logs, Allure, junit, results store, ledger, exports, error
messages). Values registered with `register()` (a CHAP password written inline,
say) are redacted the same way.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

MASK = "***"
_REFERENCE = re.compile(r"^\$\{(env|file):([^}]+)\}$")
_lock = threading.Lock()
_known: set[str] = set()


class SecretError(ValueError):
    """A secret reference that cannot be resolved; the message names the reference, never a value."""


def is_reference(text: str) -> bool:
    return bool(_REFERENCE.match(text.strip()))


def resolve(text: str) -> str:
    """The value a reference stands for (registered for redaction); plain text is returned as is."""
    match = _REFERENCE.match(text.strip())
    if not match:
        return text
    kind, name = match.groups()
    if kind == "env":
        value = os.environ.get(name)
        if value is None:
            raise SecretError(f"secret reference ${{env:{name}}}: environment variable {name} is not set")
    else:
        path = Path(name).expanduser()
        try:
            value = path.read_text()
        except OSError as exc:
            raise SecretError(f"secret reference ${{file:{name}}}: cannot read {path}: {exc.strerror}") from None
        value = value[:-1] if value.endswith("\n") else value
    if not value:
        raise SecretError(f"secret reference {text.strip()} resolves to an empty value")
    register(value)
    return value


def register(value: str | None) -> None:
    """Remember a secret value so redact() hides it (values under 4 characters would mask ordinary text)."""
    if value and len(value) >= 4:
        with _lock:
            _known.add(value)


def redact(text: str) -> str:
    """text with every known secret value (longest first) replaced by ***."""
    with _lock:
        values = sorted(_known, key=len, reverse=True)
    for value in values:
        text = text.replace(value, MASK)
    return text
