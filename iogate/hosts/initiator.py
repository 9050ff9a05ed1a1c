"""The Initiator: one host that drives load, wrapping a testinfra Host.

The transport (local, ssh, paramiko) is a testinfra backend chosen by the lab's
URL; nothing above this module knows which one runs a command.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import testinfra
from testinfra.backend.base import CommandResult

from iogate.errors import HostError
from iogate.lab import HostConfig
from iogate.lab.secrets import redact, register, register_inline, resolve_embedded
from iogate.metrics import hostcpu

# What ssh says when it could not reach the host's sshd at all: the command was never sent, so
# running it again cannot run it twice. A loaded guest (qemu TCG on 2 cores) misses a banner now
# and then; a session that breaks mid-command ("closed by remote host") is never retried.
_NOT_CONNECTED = re.compile(
    r"timed out during banner exchange|kex_exchange_identification|connect to host \S+ port \d+: "
    r"(Connection (timed out|refused)|No route to host)"
)
CONNECT_ATTEMPTS = 4
CONNECT_BACKOFF_S = 3.0
# Hosts of a netns lab (a `namespace`) share one master connection per host for their commands (ssh
# ControlMaster, sockets under CONTROL_DIR; an idle master ends after CONTROL_PERSIST_S, long enough to span
# a step): 100 namespace hosts on 2 cores otherwise pay a full ssh handshake per command, ~300 per
# client-stepping step (guard, CPU ticks before and after), and the handshakes alone held both cores.
# Liveness probes (probe) never share it: each is a fresh handshake, so a hung or dead sshd is still seen.
CONTROL_DIR = Path(tempfile.gettempdir()) / f"iogate-ssh-{os.getuid()}"
CONTROL_PERSIST_S = 120

@dataclass
class Initiator:
    """A lab host.

    >>> host = Initiator.from_config(HostConfig(name="localhost"))
    >>> host.run("uname -r").stdout
    """

    config: HostConfig
    host: Any = field(repr=False)  # testinfra.host.Host
    _facts: dict[str, str] | None = field(default=None, repr=False)

    @classmethod
    def from_config(cls, config: HostConfig) -> Initiator:
        kwargs: dict[str, Any] = {}
        if config.ssh_key:
            kwargs["ssh_identity_file"] = config.ssh_key
        if config.transport.startswith(("ssh://", "paramiko://")):
            # A lab host is ours to drive: no interactive prompts, no known_hosts churn.
            kwargs["ssh_extra_args"] = "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o ConnectTimeout=30"
        if config.namespace and config.transport.startswith("ssh://"):
            CONTROL_DIR.mkdir(mode=0o700, exist_ok=True)
            # ssh expands %C to a hash of host, port and user (40 characters); testinfra %-formats the line: %%.
            kwargs["controlpath"] = str(CONTROL_DIR / "%%C")
            kwargs["controlpersist"] = CONTROL_PERSIST_S
        # A password in the URL (paramiko://root:${env:PW}@host) is a reference, percent-encoded in.
        transport = resolve_embedded(config.transport, escape=lambda value: quote(value, safe=""))
        register_inline(transport)
        try:
            host = testinfra.get_host(transport, **kwargs)
        except Exception as exc:  # testinfra raises plain exceptions for bad URLs
            raise HostError(f"host {config.name}: cannot open transport {config.transport}: {exc}") from None
        return cls(config=config, host=host)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def is_local(self) -> bool:
        return self.config.transport.startswith("local://")

    def run_unchecked(self, command: str, *args: str, secrets: Sequence[str] = (), attempts: int = CONNECT_ATTEMPTS) -> CommandResult:
        """Run a shell command; args are quoted. Never raises for a non-zero exit.

        `secrets` (a CHAP password...) never appear in an error message. `attempts`: how often a
        connection that never reached the host is tried (1: once, for clean-up after a failure, where
        the host may be the very thing lost and what is left stays journalled for a later try)."""
        line = command % tuple(shlex.quote(a) for a in args) if args else command
        attempts = max(1, attempts)
        for attempt in range(1, attempts + 1):
            try:
                return self.host.run(line)
            except Exception as exc:  # transport failure (ssh down, host gone)
                # testinfra's ssh backend raises with the CommandResult: its stderr is what ssh said.
                said = getattr(exc.args[0], "stderr", None) if exc.args else None
                detail = said.strip() if isinstance(said, str) and said.strip() else str(exc)
                if attempt < attempts and _NOT_CONNECTED.search(detail):
                    time.sleep(CONNECT_BACKOFF_S * attempt)
                    continue
                tries = f" (after {attempt} attempts to connect)" if attempt > 1 else ""
                raise HostError(_redact(f"host {self.name}: cannot run {line!r}: {detail}{tries}", secrets)) from None
        raise AssertionError("unreachable")

    def probe(self, timeout_s: float, cancel: threading.Event | None = None) -> str | None:
        """Does the host answer over its transport within timeout_s? None if it ran `true`, else
        what went wrong. One try, no retries; the attempt never outlives timeout_s (nor `cancel`):
        an ssh probe (ConnectTimeout = timeout_s) is killed then, so a dead host leaves no ssh behind."""
        if self.is_local:
            return None
        backend = self.host.backend
        if getattr(backend, "NAME", "") == "ssh" and not backend.host.password:
            return self._ssh_probe(backend, timeout_s, cancel or threading.Event())
        return self._bounded_probe(timeout_s)

    def _ssh_probe(self, backend: Any, timeout_s: float, cancel: threading.Event) -> str | None:
        spec = backend.host
        argv = ["ssh", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
                "-o", f"ConnectTimeout={max(1, int(timeout_s))}", "-o", "LogLevel=ERROR"]
        argv += ["-i", backend.ssh_identity_file] if backend.ssh_identity_file else []
        argv += ["-F", backend.ssh_config] if backend.ssh_config else []
        argv += ["-p", str(spec.port)] if spec.port else []
        argv += [f"{spec.user}@{spec.name}" if spec.user else spec.name, "true"]
        deadline = time.monotonic() + timeout_s
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            while proc.poll() is None and time.monotonic() < deadline and not cancel.is_set():
                cancel.wait(0.1)
        finally:
            if proc.poll() is None:
                proc.kill()
            _, stderr = proc.communicate()
        if proc.returncode == 0:
            return None
        if cancel.is_set():
            return "probe cancelled"
        if time.monotonic() >= deadline:
            return f"no answer over ssh within {timeout_s:g} s"
        return redact(stderr.strip() or f"ssh exited {proc.returncode}")

    def _bounded_probe(self, timeout_s: float) -> str | None:
        """Other transports (paramiko): `true` through testinfra, waited for at most timeout_s."""
        box: list[str | None] = []

        def attempt() -> None:
            try:
                result = self.host.run("true")
                box.append(None if result.rc == 0 else f"`true` exited {result.rc}")
            except Exception as exc:  # transport failure
                box.append(redact(str(exc)))

        thread = threading.Thread(target=attempt, name=f"probe {self.name}", daemon=True)
        thread.start()
        thread.join(timeout_s)
        return box[0] if box else f"no answer within {timeout_s:g} s"

    def run(self, command: str, *args: str, secrets: Sequence[str] = (), attempts: int = CONNECT_ATTEMPTS) -> CommandResult:
        """Run a shell command; a non-zero exit raises HostError naming host and command."""
        result = self.run_unchecked(command, *args, secrets=secrets, attempts=attempts)
        if result.rc != 0:
            message = (result.stderr or result.stdout).strip()
            raise HostError(_redact(f"host {self.name}: {result.command!r} exited {result.rc}: {message[-2000:]}", secrets))
        return result

    def write_text(self, path: str, text: str) -> None:
        """Write a (small) text file on the host, whatever the transport."""
        payload = base64.b64encode(text.encode()).decode()
        self.run("mkdir -p %s && echo %s | base64 -d > %s", str_parent(path), payload, path)

    def read_text(self, path: str) -> str:
        return self.run("cat %s", path).stdout

    def facts(self) -> dict[str, str]:
        """Kernel, fio version, CPU count, for the report's environment (cached)."""
        if self._facts is None:
            probe = self.run_unchecked("uname -r; fio --version 2>/dev/null || echo none; nproc").stdout.split("\n")
            self._facts = {
                f"host.{self.name}.kernel": probe[0].strip(),
                f"host.{self.name}.fio": probe[1].strip() if len(probe) > 1 else "unknown",
                f"host.{self.name}.cpus": probe[2].strip() if len(probe) > 2 else "unknown",
            }
        return self._facts

    def cpu_ticks(self) -> tuple[int, int]:
        """(busy, total) jiffies from /proc/stat: CPU % over a run = d(busy)/d(total)."""
        return hostcpu.cpu_ticks(self.read_text("/proc/stat"))  # first eight fields: guests counted once


def _redact(text: str, secrets: Sequence[str]) -> str:
    """text without the given secrets nor any other secret the run knows (iogate.lab.secrets)."""
    for secret in secrets:
        register(secret)
    return redact(text)


def str_parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"
