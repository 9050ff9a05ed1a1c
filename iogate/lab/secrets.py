"""Secrets by reference, and redaction of every resolved secret value.

A lab file never needs to hold a credential inline: it writes a reference that
is resolved at run time,

    ${env:NAME}     the environment variable NAME
    ${file:PATH}    the contents of PATH (one trailing newline dropped)

Every value resolved here is remembered for the life of the process, and
`redact()` replaces each one with `***` in any text IOGate is about to write
(terminal, logs, Allure, junit, results store, ledger, exports, error
messages). Values registered with `register()` (a CHAP password written inline,
say) are redacted the same way, and so are the forms a value takes on its way
out: URL-encoded (`https://user:p%40ss@array`), JSON-escaped, shell-quoted.

A reference may also sit inside a longer string (a hook command
`curl -u admin:${env:ARRAY_PW} https://array/api`); resolve_embedded()
replaces each one.

Secrets shorter than MIN_LENGTH characters are refused, not skipped: redacting
"pw" would mask every "pw" in every log (and the masks would spell out where
the secret is), while leaving it unredacted would print it. Neither is safe,
so a lab must use a longer credential (CHAP itself demands 12 or more).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

MASK = "***"
MIN_LENGTH = 4
_REFERENCE = re.compile(r"^\$\{(env|file):([^}]+)\}$")
REFERENCE_IN_TEXT = re.compile(r"\$\{(env|file):([^}]+)\}")
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
    if len(value) < MIN_LENGTH:
        raise SecretError(f"secret reference {text.strip()} resolves to {len(value)} character(s); "
                          f"IOGate needs {MIN_LENGTH} or more to redact it without masking ordinary text")
    register(value)
    return value


def resolve_embedded(text: str, escape: Callable[[str], str] | None = None) -> str:
    """text with every reference inside it replaced by its value (passed through `escape`, e.g.
    doubling '$' before a string.Template sees it)."""
    return REFERENCE_IN_TEXT.sub(lambda m: (escape or str)(resolve(m.group(0))), text)


def register(value: str | None) -> None:
    """Remember a secret value (and its URL-encoded, JSON and shell-quoted forms) so redact() hides it.

    A value under MIN_LENGTH characters raises SecretError (see the module docstring)."""
    if not value:
        return
    if len(value) < MIN_LENGTH:
        raise SecretError(f"a secret of {len(value)} character(s) cannot be redacted safely; use {MIN_LENGTH} or more")
    forms = {value, quote(value, safe=""), quote(value), json.dumps(value)[1:-1], shlex.quote(value)}
    with _lock:
        _known.update(form for form in forms if len(form) >= MIN_LENGTH)


def redact(text: str) -> str:
    """text with every known secret value (longest first) replaced by ***."""
    with _lock:
        values = sorted(_known, key=len, reverse=True)
    for value in values:
        text = text.replace(value, MASK)
    return text


def redact_tree(value: object) -> object:
    """A JSON-like structure (evidence, facts) with every string redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_tree(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_tree(item) for item in value)
    return value


# Credentials written inline where a reference would belong: the password of a URL's
# userinfo (https://user:pw@host), curl's -u/--user, an Authorization header's value.
_INLINE = (
    re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]+:([^@\s/]+)@", re.IGNORECASE),
    re.compile(r"(?:^|\s)(?:-u|--user)[\s=]+['\"]?[^:\s'\"]+:([^\s'\"]+)"),
    re.compile(r"authorization:\s*(?:basic|bearer|token)?\s*([^\s'\"]+)", re.IGNORECASE),
)


def inline_credentials(text: str) -> bool:
    """Whether text carries a credential inline (see _INLINE) rather than a ${env:..} / ${file:..} reference."""
    return any(not REFERENCE_IN_TEXT.fullmatch(match.group(1)) for pattern in _INLINE for match in pattern.finditer(text))


def register_inline(text: str) -> None:
    """Register credentials written inline in a command line or URL (see _INLINE)."""
    for pattern in _INLINE:
        for match in pattern.finditer(text):
            if len(match.group(1)) >= MIN_LENGTH:
                register(match.group(1))


def install_log_redaction() -> None:
    """Every log record, whichever handler writes it, carries its message redacted (idempotent)."""
    import logging

    factory = logging.getLogRecordFactory()
    if getattr(factory, "iogate_redacting", False):
        return

    def redacting(*args: object, **kwargs: object) -> logging.LogRecord:
        record = factory(*args, **kwargs)  # type: ignore[arg-type]
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return record

    redacting.iogate_redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(redacting)
