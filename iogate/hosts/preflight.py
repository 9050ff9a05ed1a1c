"""Before load: is every host reachable, is its fio recent enough and the controller's, is its clock right?

Every host's fio must be at least the oldest IOGate runs
(iogate.engines.fio.versions.MIN_RUN; a lab's Ubuntu 20.04 host runs 3.16): an
older one is refused naming the host and its version. fio client/server only
talks between equal protocol versions, so the host's `fio --version` must also
equal the controller's. Per-second logs are stamped with
each host's epoch clock and lined up with the controller's event times, so a
host clock off by more than `max_clock_offset_ms` is refused. The offset is
bracketed by the controller's clock before and after one round trip: it is
only called wrong when the whole bracket lies outside the bound.

Host facts (kernel, fio, CPU count, the MTU of the link the controller reaches
it by) go into the report's environment.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from iogate import shell
from iogate.engines.fio.versions import run_problem
from iogate.errors import HostError
from iogate.hosts.initiator import Initiator
from iogate.lab import HostConfig
from iogate.units import ns_to_ms

DEFAULT_MAX_CLOCK_OFFSET_MS = 100.0

# One round trip gathers everything. SSH_CONNECTION = "client_ip client_port server_ip
# server_port": the route back to the controller names the link; local hosts have none.
_PROBE = r"""
echo "clock_ns=$(date +%s%N)"
echo "kernel=$(uname -r)"
echo "fio=$(fio --version 2>/dev/null || echo missing)"
echo "cpus=$(nproc)"
set -- $SSH_CONNECTION
if [ -n "$1" ]; then
  dev=$(ip -o route get "$1" 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p')
  echo "link=$dev"
  [ -n "$dev" ] && echo "mtu=$(cat /sys/class/net/$dev/mtu 2>/dev/null)"
fi
true
"""


@dataclass(frozen=True)
class HostCheck:
    """What preflight learnt about one host; `problems` empty means ready."""

    host: str
    reachable: bool
    fio_version: str | None = None
    clock_offset_ms: float | None = None  # host clock minus controller clock (bracket midpoint)
    clock_uncertainty_ms: float | None = None  # half the bracket
    round_trip_ms: float | None = None
    facts: dict[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def describe(self) -> str:
        if not self.reachable:
            return f"host {self.host}: UNREACHABLE: {'; '.join(self.problems)}"
        facts = ", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in self.facts.items())
        clock = f"clock {self.clock_offset_ms:+.1f} ms (+/- {self.clock_uncertainty_ms:.1f})"
        status = "ok" if self.ok else "PROBLEM: " + "; ".join(self.problems)
        return f"host {self.host}: {status}; {clock}; {facts}"


def fio_server_address(config: HostConfig) -> str:
    """The address a host's fio server listens on: `address`, else the transport's host part."""
    if config.address:
        return config.address
    rest = config.transport.split("://", 1)[1]
    host = rest.rsplit("@", 1)[-1].split(":", 1)[0]
    if not host or config.transport.startswith("local://"):
        raise HostError(f"host {config.name}: no address for its fio server (set `address` in the lab)")
    return host


def fio_server_problem(config: HostConfig, port: int, timeout_s: float = 5.0) -> str | None:
    """Can the controller open a connection to the host's `fio --server`? (It just closes again.)"""
    try:
        address = fio_server_address(config)
        socket.create_connection((address, port), timeout=timeout_s).close()
    except (OSError, HostError) as exc:
        return f"host {config.name}: fio server not reachable from the controller on port {port}: {exc}"
    return None


def controller_fio_version() -> str:
    return shell.run(["fio", "--version"], error=HostError).stdout.strip()


def _parse_probe(stdout: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)


def clock_problem(host: str, host_ns: int, before_ns: int, after_ns: int, max_offset_ms: float) -> str | None:
    """The host read its clock somewhere inside [before, after] of ours: refuse only if the
    whole bracket of possible offsets lies outside +/- max_offset_ms."""
    low_ms, high_ms = ns_to_ms(host_ns - after_ns), ns_to_ms(host_ns - before_ns)
    if low_ms > max_offset_ms or high_ms < -max_offset_ms:
        return (f"host {host}: clock is off by {low_ms:+.0f}..{high_ms:+.0f} ms vs the controller "
                f"(limit {max_offset_ms:g} ms): sync it (chrony/ntp); per-second logs would not line up")
    return None


LOGIN_TIMEOUT_S = 30.0  # ssh's own ConnectTimeout for lab hosts


def check_host(initiator: Initiator, expected_fio: str, max_clock_offset_ms: float = DEFAULT_MAX_CLOCK_OFFSET_MS,
               fio_server_port: int | None = None) -> HostCheck:
    """Probe one host (one round trip); never raises, problems are listed."""
    # A fresh login first: a host's commands may ride a shared ssh master (netns hosts), which outlives a dead
    # sshd; the run still needs new logins (fio servers, liveness), so a host that refuses them is named here.
    refused = initiator.probe(LOGIN_TIMEOUT_S)
    if refused is not None:
        return HostCheck(host=initiator.name, reachable=False,
                         problems=(f"host {initiator.name}: cannot run commands: a new login failed: {refused}",))
    before_ns = time.time_ns()
    try:
        done = initiator.run(_PROBE)
    except HostError as exc:
        return HostCheck(host=initiator.name, reachable=False, problems=(str(exc),))
    after_ns = time.time_ns()
    probe = _parse_probe(done.stdout)
    problems: list[str] = []
    try:
        host_ns = int(probe["clock_ns"])
    except (KeyError, ValueError):
        problem = f"host {initiator.name}: unreadable probe output {done.stdout[:200]!r}"
        return HostCheck(host=initiator.name, reachable=True, problems=(problem,))
    clock = clock_problem(initiator.name, host_ns, before_ns, after_ns, max_clock_offset_ms)
    if clock:
        problems.append(clock)
    low_ms, high_ms = ns_to_ms(host_ns - after_ns), ns_to_ms(host_ns - before_ns)
    fio = probe.get("fio", "missing")
    too_old = None if fio == "missing" else run_problem(initiator.name, fio)
    if fio == "missing":
        problems.append(f"host {initiator.name}: fio is not installed")
    elif too_old:
        problems.append(too_old)
    if fio != "missing" and fio != expected_fio:
        problems.append(f"host {initiator.name}: fio {fio} differs from the controller's {expected_fio} "
                        "(fio client/server needs the same version on both ends)")
    if fio_server_port is not None:
        server = fio_server_problem(initiator.config, fio_server_port)
        if server:
            problems.append(server)
    facts = {
        f"host.{initiator.name}.kernel": probe.get("kernel", "unknown"),
        f"host.{initiator.name}.fio": fio,
        f"host.{initiator.name}.cpus": probe.get("cpus", "unknown"),
    }
    if probe.get("link"):
        facts[f"host.{initiator.name}.link"] = probe["link"]
        facts[f"host.{initiator.name}.mtu"] = probe.get("mtu", "unknown")
    return HostCheck(
        host=initiator.name,
        reachable=True,
        fio_version=fio,
        clock_offset_ms=(low_ms + high_ms) / 2,
        clock_uncertainty_ms=(high_ms - low_ms) / 2,
        round_trip_ms=ns_to_ms(after_ns - before_ns),
        facts=facts,
        problems=tuple(problems),
    )


def preflight(
    initiators: Sequence[Initiator],
    *,
    expected_fio: str | None = None,
    max_clock_offset_ms: float = DEFAULT_MAX_CLOCK_OFFSET_MS,
    fio_server_port: int | None = None,
    raise_on_problem: bool = True,
) -> list[HostCheck]:
    """Check every host in parallel; by default raise one HostError naming every failing host.

    With fio_server_port, also check that each host's `fio --server` accepts connections
    from the controller (client/server runs need it)."""
    expected = expected_fio or controller_fio_version()
    if not initiators:
        return []
    with ThreadPoolExecutor(max_workers=min(32, len(initiators))) as pool:
        checks = list(pool.map(lambda i: check_host(i, expected, max_clock_offset_ms, fio_server_port), initiators))
    failing = [c for c in checks if not c.ok]
    if failing and raise_on_problem:
        raise HostError("preflight failed: " + "; ".join(p for c in failing for p in c.problems))
    return checks


def check_local_fio(initiators: Sequence[Initiator], version: str | None = None) -> None:
    """The version check of preflight for hosts that are this machine (they skip the remote probe):
    HostError naming each such host and the fio version when it is older than IOGate runs."""
    if not initiators:
        return
    installed = version if version is not None else controller_fio_version()
    problems = [problem for i in initiators if (problem := run_problem(i.name, installed))]
    if problems:
        raise HostError("preflight failed: " + "; ".join(problems))


def environment_facts(checks: Sequence[HostCheck]) -> dict[str, str]:
    """All hosts' facts in one mapping for the report's environment."""
    facts: dict[str, str] = {}
    for check in checks:
        facts.update(check.facts)
        if check.clock_offset_ms is not None:
            facts[f"host.{check.host}.clock_offset_ms"] = f"{check.clock_offset_ms:+.1f}"
    return facts
