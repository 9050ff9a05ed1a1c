"""What the vendor-SDK drivers (powerstore, ontap, pure) share.

- Options every vendor lab gives: management address, user, a password or token
  *by reference* (`${env:NAME}` / `${file:PATH}`; inline credentials are refused),
  TLS verification, timeouts.
- Journalling: every array object (volume, host, igroup, mapping, snapshot...)
  is journalled as kind "vendor_object" *before* it is created, with the lab's
  driver options (credential references, never values), the object type and its
  run-prefixed name. `iogate cleanup` hands each entry back to the driver module
  named in it, which logs in again and deletes the object by name; a name without
  the run's prefix is never touched.
- Calls: `ApiCaller.call()` runs one SDK call; idempotent calls (reads) are
  retried on timeouts and 5xx, an expired session is renewed once, and any other
  failure becomes an ArrayError naming the call and the object, redacted, without
  the SDK's exception chained (its text may quote request headers).
"""

from __future__ import annotations

import importlib
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from iogate.errors import ArrayError, HostError
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab, secrets
from iogate.run.ledger import Entry, Ledger
from iogate.run.resources import register_remover

KIND = "vendor_object"
T = TypeVar("T")

# Connector names of a lab -> the block protocol a vendor volume is mapped over.
PROTOCOL_OF_CONNECTOR: dict[str, str] = {
    "iscsi": "iscsi",
    "multipath": "iscsi",
    "nvme-tcp": "nvme-tcp",
    "nvme_tcp": "nvme-tcp",
    "fc": "fc",
}


class VendorOptions(BaseModel):
    """Options every vendor driver takes (each driver adds its own)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    management: str = Field(min_length=1)  # host or host:port of the management API
    username: str = Field(min_length=1)
    password: str  # a ${env:NAME} or ${file:PATH} reference, never the password itself
    verify_tls: bool | str = True  # False, True (system CAs) or the path of a CA bundle
    timeout_s: float = Field(default=60.0, gt=0)
    read_attempts: int = Field(default=3, ge=1, le=10)  # tries of an idempotent call
    retry_backoff_s: float = Field(default=1.0, ge=0)
    name_prefix: str = Field(default="iogate", pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,15}$")
    default_protocol: str = "iscsi"

    @field_validator("password")
    @classmethod
    def _by_reference(cls, value: str) -> str:
        if not secrets.is_reference(value):
            # The message must not echo the value: it may be the password.
            raise ValueError("give the credential by reference, ${env:NAME} or ${file:PATH}, never inline")
        return value

    @field_validator("default_protocol")
    @classmethod
    def _known_protocol(cls, value: str) -> str:
        if value not in PROTOCOL_OF_CONNECTOR:
            raise ValueError(f"default_protocol must be one of {sorted(PROTOCOL_OF_CONNECTOR)}")
        return value

    @property
    def host(self) -> str:
        return self.management.rsplit(":", 1)[0] if self.management.count(":") == 1 else self.management

    @property
    def port(self) -> int | None:
        return int(self.management.rsplit(":", 1)[1]) if self.management.count(":") == 1 else None

    def secret(self) -> str:
        """The credential (resolved now, registered for redaction)."""
        try:
            return secrets.resolve(self.password)
        except secrets.SecretError as exc:
            raise ArrayError(f"array credentials: {exc}") from None


def require_sdk(module: str, package: str, driver: str) -> None:
    """The vendor SDK is an optional extra: say which package to install instead of an ImportError.

    An SDK that is installed but fails to import (a dependency of its own missing or too old)
    says so with the import's own message: reinstalling the SDK would not be the fix.
    """
    try:
        importlib.import_module(module)
    except ImportError as exc:
        missing = exc.name or ""
        if isinstance(exc, ModuleNotFoundError) and (missing == module or missing.startswith(module + ".")):
            raise ArrayError(
                f"array driver {driver} (the lab's array.driver) needs the vendor SDK {package}, which is not installed:"
                f" pip install -r requirements-vendors.txt (or pip install {package})"
            ) from None
        raise ArrayError(f"array driver {driver}: the vendor SDK {package} is installed but does not import: {exc}") from None


def number_or_none(value: Any) -> float | None:
    """A figure of an SDK's answer as a float; None when the array did not give a number (never 0 in its place)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def run_prefix(options: VendorOptions, run_id: str) -> str:
    """`<prefix>-<run tag>-`: every object name starts with it, so cleanup and people can tell ours apart."""
    tag = re.sub(r"[^A-Za-z0-9]", "", run_id)[-14:]
    return f"{options.name_prefix}-{tag}-"


def protocol_of(connector: str | None, options: VendorOptions) -> str:
    name = connector or options.default_protocol
    if name not in PROTOCOL_OF_CONNECTOR:
        raise ArrayError(f"cannot map a volume over {name!r} (known: {', '.join(sorted(PROTOCOL_OF_CONNECTOR))})")
    return PROTOCOL_OF_CONNECTOR[name]


# -- errors and retries ----------------------------------------------------------------
@dataclass
class Failure:
    """What a driver learnt from an SDK exception: HTTP status (None: no answer) and a short reason."""

    status: int | None
    reason: str
    expired_session: bool = False


TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})


class IncompleteList(Exception):
    """A list call whose pages do not add up (a page lost, a total the items do not reach, a next link
    that loops): acting on part of a list is how a cleanup leaks or a lookup fails open, so it fails.
    Raised by the vendor modules' paging helpers inside an ApiCaller call, which names the call."""


@dataclass
class ApiCaller:
    """Runs SDK calls for one array (see module docstring)."""

    array: str
    options: VendorOptions
    classify: Callable[[BaseException], Failure]
    renew_session: Callable[[], None] | None = None
    sleep: Callable[[float], None] = time.sleep

    def call(self, what: str, obj: str, fn: Callable[[], T], *, idempotent: bool = False) -> T:
        attempts = self.options.read_attempts if idempotent else 1
        renewed = False
        attempt = 0
        while True:
            attempt += 1
            try:
                return fn()
            except IncompleteList as exc:
                # Asked again, the list may add up (it changed between pages); if it never does, it is refused.
                if idempotent and attempt < attempts:
                    self.sleep(self.options.retry_backoff_s * attempt)
                    continue
                tried = f" after {attempt} attempts" if attempt > 1 else ""
                raise ArrayError(secrets.redact(f"array {self.array}: {what} {obj}: incomplete list{tried}: {exc}")) from None
            except Exception as exc:
                failure = self.classify(exc)
            # A rejected session ran nothing on the array: renewing it and asking again is safe for any call.
            if failure.expired_session and self.renew_session is not None and not renewed:
                renewed = True
                attempt -= 1
                self._renew(what, obj)
                continue
            transient = failure.status is None or failure.status in TRANSIENT_STATUS
            if idempotent and transient and attempt < attempts:
                self.sleep(self.options.retry_backoff_s * attempt)
                continue
            status = f"HTTP {failure.status}" if failure.status is not None else "no answer"
            tried = f" after {attempt} attempts" if attempt > 1 else ""
            raise ArrayError(secrets.redact(f"array {self.array}: {what} {obj}: {status}{tried}: {failure.reason[:300]}")) from None

    def _renew(self, what: str, obj: str) -> None:
        assert self.renew_session is not None
        try:
            self.renew_session()
        except Exception as exc:
            failure = self.classify(exc)
            raise ArrayError(
                secrets.redact(f"array {self.array}: {what} {obj}: session expired and login failed: {failure.reason[:200]}")
            ) from None


class _Redact(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = secrets.redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True


_REDACT = _Redact()


def redact_sdk_logs(*prefixes: str) -> None:
    """Put the redaction filter on every SDK logger (filters do not propagate to child loggers)."""
    names = [n for n in logging.root.manager.loggerDict if n.startswith(prefixes)] + list(prefixes)
    for name in names:
        logger = logging.getLogger(name)
        if _REDACT not in logger.filters:
            logger.addFilter(_REDACT)


# -- the initiators of the lab's hosts ----------------------------------------------------
def read_initiator_ids(lab: Lab) -> dict[str, dict[str, str]]:
    """Per lab host: its iSCSI IQN and NVMe host NQN, read from the host (absent files are left out)."""
    found: dict[str, dict[str, str]] = {}
    for config in lab.hosts:
        host = Initiator.from_config(config)
        ids: dict[str, str] = {}
        try:
            text = host.run_unchecked("cat /etc/iscsi/initiatorname.iscsi 2>/dev/null").stdout
            iqn = next((line.split("=", 1)[1].strip() for line in str(text).splitlines() if line.startswith("InitiatorName=")), "")
            nqn = str(host.run_unchecked("cat /etc/nvme/hostnqn 2>/dev/null").stdout).strip()
        except HostError as exc:
            raise ArrayError(f"array {lab.array.name}: reading the initiator names of host {config.name}: {exc}") from exc
        if iqn:
            ids["iscsi"] = iqn
        if nqn:
            ids["nvme-tcp"] = nqn
        found[config.name] = ids
    return found


def initiators_for(protocol: str, ids: dict[str, dict[str, str]], array: str) -> dict[str, str]:
    """host -> its initiator name for the protocol; an ArrayError when a host has none."""
    missing = [host for host, names in ids.items() if protocol not in names]
    if missing:
        where = {"iscsi": "/etc/iscsi/initiatorname.iscsi", "nvme-tcp": "/etc/nvme/hostnqn"}.get(protocol, protocol)
        raise ArrayError(f"array {array}: host(s) {', '.join(missing)} have no {protocol} initiator name ({where})")
    return {host: names[protocol] for host, names in ids.items()}


# -- journalling and cleanup ----------------------------------------------------------------
def intend(ledger: Ledger, driver: str, options: VendorOptions, obj_type: str, name: str, **attrs: Any) -> Entry:
    """Journal an array object before creating it (its removal needs only this entry)."""
    return ledger.intend(KIND, driver=driver, options=options.model_dump(mode="json"), type=obj_type, name=name, **attrs)


# Driver modules register how they delete each object type: (options dict, attrs) -> report line or None.
ObjectRemover = Callable[[dict[str, Any], dict[str, Any]], "str | None"]
_REMOVERS: dict[str, ObjectRemover] = {}


def register_object_remover(driver: str, remover: ObjectRemover) -> None:
    _REMOVERS[driver] = remover


def _remove_vendor_object(attrs: dict[str, Any]) -> str | None:
    driver = attrs["driver"]
    if driver not in _REMOVERS:
        importlib.import_module(f"iogate.arrays.{driver}")
    return _REMOVERS[driver](attrs["options"], attrs)


register_remover(KIND, _remove_vendor_object)
