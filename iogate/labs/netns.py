"""The netns lab: N initiator hosts as network namespaces on this machine.

Each lab host with a `namespace` becomes:
  - a network namespace with loopback up and no default route,
  - a veth pair: one end in the root namespace with <net>.1/24, the peer
    (eth0) inside with the host's `address` (<net>.2); traffic flows only
    between the controller and that namespace,
  - an sshd inside (root login by key only; host key, authorized key and config
    generated into the run directory),
  - a `fio --server` listening on the namespace's address.

The namespaces share this machine's /dev, so a fio job inside one opens the
loop devices of the local array; the guard still checks identity through the
Initiator (over SSH) on that host.

Every namespace, veth, process and file is journalled before it is created;
the removers for "netns" and "veth" check identity (namespace inode, veth name
derived from the run directory) before acting. `lab up` keeps its run directory
at <workdir>/runs/lab-<lab name>, so `lab down` and `python -m iogate cleanup`
find it.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iogate import shell
from iogate.errors import HostError, IOGateError, LabFileError
from iogate.hosts.initiator import CONTROL_DIR
from iogate.lab import HostConfig, Lab
from iogate.run import Run
from iogate.run.ledger import LEDGER_NAME, Ledger, process_start_ticks
from iogate.run.resources import marker_pids, register_remover, release, release_all

SSHD = "/usr/sbin/sshd"
SSH_PORT = 22
FIO_PORT = 8765
LINK_PREFIX_LEN = 24
PEER_IFNAME = "eth0"
NETNS_DIR = Path("/run/netns")
# sshd refuses to start without its privilege separation directory.
SSHD_PRIVSEP_DIR = Path("/run/sshd")
READY_TIMEOUT_S = 15.0
# Hosts brought up or down at once: enough to hide the waits on `ip`, ssh-keygen and daemon start-up,
# few enough that 100 sshds starting together do not starve a 2-core machine past READY_TIMEOUT_S.
PARALLEL_HOSTS = 16


@dataclass(frozen=True)
class NsHost:
    """Where one lab host lives: its namespace, link and addresses."""

    name: str
    namespace: str
    veth: str  # the root-namespace end; the peer is PEER_IFNAME inside
    root_addr: str  # controller side of the link
    ns_addr: str  # the host's address (sshd and fio server listen here)
    ssh_key: str  # the controller's private key for this host


def _err(lab: Lab, host: HostConfig, message: str) -> LabFileError:
    return LabFileError(f"lab {lab.path or lab.name}: host {host.name}: {message}")


def veth_name(run_dir: Path, namespace: str) -> str:
    """Root-side veth name: unique to this run directory and namespace (identity by name)."""
    digest = hashlib.sha1(f"{run_dir}\0{namespace}".encode()).hexdigest()[:10]
    return f"iog{digest}"  # 13 chars; Linux allows 15


def plan_hosts(lab: Lab, run_dir: Path) -> list[NsHost]:
    """Check the lab's namespace hosts and derive their links; errors name the host."""
    planned: list[NsHost] = []
    networks: dict[ipaddress.IPv4Network, str] = {}
    for host in lab.hosts:
        if host.namespace is None:
            raise _err(lab, host, "no `namespace`: the netns lab needs one per host")
        if not host.address:
            raise _err(lab, host, "no `address`: the netns lab needs the host's IPv4 address (e.g. 10.77.1.2)")
        if not host.ssh_key:
            raise _err(lab, host, "no `ssh_key`: the netns lab generates the controller key at that path")
        if len(host.namespace) > 64 or "/" in host.namespace:
            raise _err(lab, host, f"namespace name {host.namespace!r} is not valid")
        try:
            address = ipaddress.IPv4Address(host.address)
        except ValueError as exc:
            raise _err(lab, host, f"address {host.address!r}: {exc}") from None
        if not address.is_private:
            raise _err(lab, host, f"address {address} is not private: the lab must never route elsewhere")
        network = ipaddress.IPv4Network(f"{address}/{LINK_PREFIX_LEN}", strict=False)
        root = network.network_address + 1
        if address in (root, network.network_address, network.broadcast_address):
            raise _err(lab, host, f"address {address}: use another host number in {network} (.1 is the controller's side)")
        if network in networks:
            raise _err(lab, host, f"address {address} shares {network} with host {networks[network]}: one /24 per host")
        networks[network] = host.name
        planned.append(
            NsHost(
                name=host.name,
                namespace=host.namespace,
                veth=veth_name(run_dir, host.namespace),
                root_addr=str(root),
                ns_addr=str(address),
                ssh_key=host.ssh_key,
            )
        )
    return planned


# -- removers ----------------------------------------------------------------------
def _netns_inode(name: str) -> int | None:
    try:
        return os.stat(NETNS_DIR / name).st_ino
    except OSError:
        return None


def _netns_pids(name: str) -> list[int]:
    done = shell.run(["ip", "netns", "pids", name], check=False)
    return [int(p) for p in done.stdout.split() if p.isdigit()]


def _stop_pids(pids: list[int]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and any(process_start_ticks(p) is not None for p in pids):
            time.sleep(0.05)


def _remove_netns(attrs: dict[str, Any]) -> str | None:
    """Delete our namespace (same inode as created) after stopping what still runs in it."""
    name = attrs["name"]
    inode = _netns_inode(name)
    if inode is None:
        return None
    if attrs.get("inode") is None:
        # Journalled but killed before its inode was recorded: only an empty namespace is surely ours.
        if _netns_pids(name):
            raise IOGateError(f"namespace {name}: identity unknown (not recorded) and processes run in it; left alone")
    elif attrs["inode"] != inode:
        return None  # the name now belongs to another namespace: ours is gone
    pids = _netns_pids(name)
    _stop_pids(pids)
    try:
        shell.run(["ip", "netns", "del", name])
    except IOGateError:
        if _netns_inode(name) is None:
            return None  # a concurrent release (cleanup beside the run's own teardown) deleted it first
        raise
    return f"deleted namespace {name}" + (f" (stopped pid {', '.join(map(str, pids))})" if pids else "")


def _remove_veth(attrs: dict[str, Any]) -> str | None:
    """Delete the veth pair by its root-side name, which only this run directory produces."""
    name = attrs["name"]
    if not Path(f"/sys/class/net/{name}").exists():
        return None
    info = json.loads(shell.run(["ip", "-j", "-d", "link", "show", "dev", name]).stdout or "[]")
    kind = info[0].get("linkinfo", {}).get("info_kind") if info else None
    if kind != "veth":
        raise IOGateError(f"link {name} is a {kind or 'unknown'} link, not our veth; left alone")
    if attrs.get("address"):
        _end_ssh_master(str(attrs["address"]))
    shell.run(["ip", "link", "del", "dev", name])
    return f"deleted veth {name}"


def _end_ssh_master(address: str) -> None:
    """End the controller's ssh master connection to a host (iogate/hosts/initiator.py CONTROL_DIR) while its link
    is still there: once the link is gone the master never hears its sshd go and idles on for CONTROL_PERSIST_S
    (run 2 of the 100-host stepping left 100 of them for 2 minutes). Asks only the master at that socket."""
    subprocess.run(["ssh", "-o", f"ControlPath={CONTROL_DIR}/%C", "-O", "exit", f"root@{address}"],
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False)


register_remover("netns", _remove_netns)
register_remover("veth", _remove_veth)


# -- bring-up -----------------------------------------------------------------------
def _ip(*argv: str) -> None:
    shell.run(["ip", *argv], error=HostError)


def _write(run: Run, path: Path, text: str, mode: int = 0o644) -> None:
    entry = run.ledger.intend("file", path=str(path))
    path.write_text(text)
    path.chmod(mode)
    run.ledger.created(entry)


def _mkdir(run: Run, path: Path) -> None:
    entry = run.ledger.intend("dir", path=str(path))
    path.mkdir(parents=True, exist_ok=True)
    run.ledger.created(entry)


def _keygen(run: Run, path: Path, comment: str) -> None:
    """An ed25519 key pair; both files journalled before ssh-keygen writes them."""
    entries = [run.ledger.intend("file", path=str(path)), run.ledger.intend("file", path=f"{path}.pub")]
    path.parent.mkdir(parents=True, exist_ok=True)
    shell.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)], error=HostError)
    for entry in entries:
        run.ledger.created(entry)


def host_home(host_dir: Path) -> Path:
    """The namespace host's own (empty) home directory: HOME of every ssh session on it."""
    return host_dir / "home"


def sshd_config(host: NsHost, host_dir: Path) -> str:
    return "\n".join(
        [
            f"# IOGate netns lab host {host.name} (namespace {host.namespace})",
            f"ListenAddress {host.ns_addr}",
            f"Port {SSH_PORT}",
            f"HostKey {host_dir / 'ssh_host_ed25519_key'}",
            f"AuthorizedKeysFile {host_dir / 'authorized_keys'}",
            f"PidFile {host_dir / 'sshd.pid'}",
            "PermitRootLogin prohibit-password",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            # The run directory lives under world-writable /var/tmp, which StrictModes rejects.
            "StrictModes no",
            "X11Forwarding no",
            "AllowTcpForwarding no",
            "PrintMotd no",
            "UseDNS no",
            "MaxStartups 100:30:200",
            "Subsystem sftp internal-sftp",
            # A namespace shares this machine's /root: without a home of its own, every command run over
            # ssh would source the controller machine's ~/.bashrc (bash does for sshd's commands). On the
            # reference machine that is `pyenv init`: 105 processes per command instead of 6, and at 100
            # hosts the liveness probes and CPU reads alone kept both cores over 90 % busy (generator
            # saturated on every step from 60 hosts). A separate machine has its own home: so has each host here.
            f"SetEnv HOME={host_home(host_dir)}",
            "",
        ]
    )


def _spawn(run: Run, host: NsHost, label: str, argv: list[str], marker: str, log: Path, cwd: Path) -> None:
    """Start a daemon inside the namespace, detached (setsid -f) so it outlives `lab up`.

    The process kind's remover kills by `marker`, a run-directory path in the command line.
    """
    entry = run.ledger.intend("process", name=f"{label} in {host.namespace}", marker=marker, host=host.name)
    with log.open("ab") as out:
        subprocess.run(
            ["setsid", "-f", "ip", "netns", "exec", host.namespace, *argv],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, check=True, timeout=30,
        )
    run.ledger.created(entry)


def _listening(pid: int, port: int) -> bool:
    """True when the namespace of pid has a TCP socket listening on port (its /proc/PID/net/tcp)."""
    try:
        rows = Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(row.split()[3] == "0A" and int(row.split()[1].split(":")[1], 16) == port for row in rows)


def sshd_marker(host_dir: Path) -> str:
    return str(host_dir / "sshd_config")


def fio_marker(host_dir: Path) -> str:
    return str(host_dir / "fio-server.log")


def _cmdlines() -> dict[int, str]:
    """Every process's command line, read once (one /proc scan serves all hosts' readiness checks)."""
    lines = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                lines[int(proc.name)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
    return lines


def _wait_ready(hosts: list[NsHost], run_dir: Path) -> None:
    """Wait until every host's sshd and fio server listen; the error names each host that did not."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    pending = {(host, label): (marker, port) for host in hosts for label, marker, port in (
        ("sshd", sshd_marker(run_dir / "netns" / host.name), SSH_PORT),
        ("fio server", fio_marker(run_dir / "netns" / host.name), FIO_PORT))}
    while pending and time.monotonic() < deadline:
        cmdlines = _cmdlines()
        for key, (marker, port) in list(pending.items()):
            if any(_listening(pid, port) for pid, line in cmdlines.items() if marker in line):
                del pending[key]
        if pending:
            time.sleep(0.1)
    if pending:
        problems = []
        for (host, label), _ in sorted(pending.items(), key=lambda item: (item[0][0].name, item[0][1])):
            log = run_dir / "netns" / host.name / f"{label.split()[0]}.log"
            problems.append(f"host {host.name} (namespace {host.namespace}): {label} not listening after "
                            f"{READY_TIMEOUT_S:g} s: {_tail(log)}")
        raise HostError("; ".join(problems))


def _tail(path: Path) -> str:
    try:
        return path.read_text()[-500:].strip() or "(log empty)"
    except OSError:
        return "(no log)"


def _taken_networks() -> list[ipaddress.IPv4Network]:
    rows = json.loads(shell.run(["ip", "-j", "-4", "addr", "show"]).stdout or "[]")
    return [ipaddress.IPv4Network(f"{a['local']}/{a['prefixlen']}", strict=False) for row in rows for a in row.get("addr_info", [])]


def _check_free(lab: Lab, hosts: list[NsHost]) -> None:
    taken = _taken_networks()
    for host in hosts:
        if (NETNS_DIR / host.namespace).exists():
            raise HostError(f"host {host.name}: namespace {host.namespace} exists already "
                            f"(is lab {lab.name} up? `python -m iogate lab down {lab.path or '<lab file>'}`)")
        network = ipaddress.IPv4Network(f"{host.ns_addr}/{LINK_PREFIX_LEN}", strict=False)
        clash = [str(n) for n in taken if n.overlaps(network)]
        if clash:
            raise HostError(f"host {host.name}: {network} overlaps addresses already on this machine ({', '.join(clash)})")


def bring_up_host(run: Run, host: NsHost) -> None:
    """Namespace, link, addresses, keys, sshd and fio server for one host (all journalled)."""
    ledger = run.ledger
    entry = ledger.intend("netns", name=host.namespace, host=host.name)
    _ip("netns", "add", host.namespace)
    ledger.created(entry, inode=_netns_inode(host.namespace))

    entry = ledger.intend("veth", name=host.veth, peer=PEER_IFNAME, namespace=host.namespace, host=host.name, address=host.ns_addr)
    _ip("link", "add", host.veth, "type", "veth", "peer", "name", PEER_IFNAME, "netns", host.namespace)
    ledger.created(entry)
    _ip("link", "set", "dev", host.veth, "alias", f"iogate lab host {host.name} ns {host.namespace}")
    _ip("addr", "add", f"{host.root_addr}/{LINK_PREFIX_LEN}", "dev", host.veth)
    _ip("link", "set", "dev", host.veth, "up")
    _ip("-n", host.namespace, "addr", "add", f"{host.ns_addr}/{LINK_PREFIX_LEN}", "dev", PEER_IFNAME)
    _ip("-n", host.namespace, "link", "set", "dev", PEER_IFNAME, "up")
    _ip("-n", host.namespace, "link", "set", "dev", "lo", "up")

    host_dir = run.run_dir / "netns" / host.name
    _mkdir(run, host_dir)
    _mkdir(run, host_home(host_dir))
    _keygen(run, host_dir / "ssh_host_ed25519_key", f"iogate {host.name} host key")
    public_key = Path(f"{host.ssh_key}.pub").read_text()
    _write(run, host_dir / "authorized_keys", public_key, 0o600)
    _write(run, host_dir / "sshd_config", sshd_config(host, host_dir), 0o600)
    _spawn(run, host, "sshd", [SSHD, "-D", "-f", sshd_marker(host_dir), "-E", str(host_dir / "sshd.log")],
           sshd_marker(host_dir), host_dir / "sshd.log", host_dir)
    # --output is where the server logs; its path in the command line is the process marker.
    _spawn(run, host, "fio server", ["fio", f"--server=ip:{host.ns_addr},{FIO_PORT}", f"--output={fio_marker(host_dir)}"],
           fio_marker(host_dir), host_dir / "fio.log", host_dir)


def bring_up(lab: Lab, run: Run) -> list[NsHost]:
    """Bring up every host of a netns lab under `run`; on failure undo what was made."""
    hosts = plan_hosts(lab, run.run_dir)
    _check_free(lab, hosts)
    SSHD_PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)  # system directory the openssh package owns; left in place
    try:
        for key in sorted({h.ssh_key for h in hosts}):
            if Path(key).exists():
                raise HostError(f"ssh key {key} exists already and is not this run's; remove it or point ssh_key elsewhere")
            _keygen(run, Path(key), f"iogate controller key for lab {lab.name}")
        # Hosts come up side by side (each step journalled; the ledger is thread-safe): 100 hosts one
        # after another spend most of their time waiting on `ip`, ssh-keygen and daemon start-up.
        _each(hosts, lambda host: bring_up_host(run, host))
        _wait_ready(hosts, run.run_dir)
    except BaseException:
        release_parallel(run.ledger)
        raise
    return hosts


def _each(hosts: list[NsHost], action: Callable[[NsHost], None]) -> None:
    """Run action for every host on a bounded pool; raise the first failure (by host order) after all ended."""
    if not hosts:
        return
    with ThreadPoolExecutor(max_workers=min(PARALLEL_HOSTS, len(hosts))) as pool:
        futures = [pool.submit(action, host) for host in hosts]
    errors = [error for future in futures if (error := future.exception()) is not None]
    if errors:
        first = errors[0]
        if len(errors) > 1 and isinstance(first, IOGateError):
            raise type(first)(f"{first} (and {len(errors) - 1} more host(s) failed)") from first
        raise first


def release_parallel(ledger: Ledger) -> list[str]:
    """Release a lab's journal: each host's entries (newest first) side by side, then the shared rest.

    Entries with a `host` attribute (namespace, veth, daemons) belong to one host; a host's own
    order is kept (daemons stopped before its link and namespace go). Files, directories and keys
    follow once every host is down. Failures are collected and raised together, as release() does.
    """
    by_host: dict[str, list[Any]] = {}
    for entry in ledger.open_entries():
        if entry.attrs.get("host"):
            by_host.setdefault(str(entry.attrs["host"]), []).append(entry)
    report: list[str] = []
    failures: list[str] = []
    if by_host:
        with ThreadPoolExecutor(max_workers=min(PARALLEL_HOSTS, len(by_host))) as pool:
            futures = [pool.submit(release, ledger, entries) for entries in by_host.values()]
        for future in futures:
            if future.exception() is not None:
                failures.append(str(future.exception()))
            else:
                report.extend(future.result())
    try:
        report.extend(release_all(ledger))
    except IOGateError as exc:
        failures.append(str(exc))
    if failures:
        raise IOGateError("; ".join(failures))
    return report


# -- lab up / down (state in <workdir>/runs/lab-<name>) --------------------------------
def lab_run_dir(lab: Lab) -> Path:
    return Path(lab.workdir) / "runs" / f"lab-{lab.name}"


def up(lab: Lab) -> tuple[Run, list[NsHost]]:
    """`lab up`: a fixed run directory per lab so the static ssh_key paths in the lab file hold."""
    run_dir = lab_run_dir(lab)
    ledger_path = run_dir / LEDGER_NAME
    if ledger_path.exists():
        old, _ = Ledger.load(ledger_path)
        if old.open_entries():
            raise HostError(f"lab {lab.name} is up already (or was left half up): {run_dir}; "
                            f"run `python -m iogate lab down {lab.path or '<lab file>'}` first")
        shutil.rmtree(run_dir)  # a fully released earlier bring-up: start a fresh journal
    run = Run(run_id=run_dir.name, run_dir=run_dir, ledger=Ledger.create(run_dir))
    hosts = bring_up(lab, run)
    # `lab up` exits now; the first host's sshd owns the journal so a `cleanup` while the lab
    # runs leaves it alone (`lab down` or `cleanup --include-live` removes it).
    owner = marker_pids(sshd_marker(run_dir / "netns" / hosts[0].name))
    if owner:
        run.ledger.hand_over(owner[0])
    return run, hosts


def down(lab: Lab) -> list[str]:
    """`lab down`: release everything the lab's journal holds, newest first."""
    ledger_path = lab_run_dir(lab) / LEDGER_NAME
    if not ledger_path.exists():
        return []
    ledger, _ = Ledger.load(ledger_path)
    return release_parallel(ledger)


def leftovers(hosts: list[NsHost], run_dir: Path) -> list[str]:
    """What of these hosts still exists on the machine (for teardown checks)."""
    found = []
    for host in hosts:
        if (NETNS_DIR / host.namespace).exists():
            found.append(f"namespace {host.namespace}")
        if Path(f"/sys/class/net/{host.veth}").exists():
            found.append(f"veth {host.veth}")
        host_dir = run_dir / "netns" / host.name
        for marker in (sshd_marker(host_dir), fio_marker(host_dir)):
            found.extend(f"process {pid} ({marker})" for pid in marker_pids(marker))
    return found


def variant(lab: Lab, *, workdir: Path | str, tag: str, count: int | None = None, subnet_base: int = 78) -> Lab:
    """A copy of a netns lab with its own namespaces, subnets and workdir.

    Self-tests use it so they never collide with a lab that `lab up` brought up:
    namespaces become iog<tag>-<host>, addresses 10.<subnet_base>.<n>.2, keys
    live in the new workdir.
    """
    hosts = []
    for index, host in enumerate(lab.hosts[: count or len(lab.hosts)], start=1):
        address = f"10.{subnet_base}.{index}.2"
        hosts.append(
            host.model_copy(
                update={
                    "namespace": f"iog{tag}-{host.name}"[:64],
                    "address": address,
                    "transport": f"ssh://root@{address}",
                    "ssh_key": str(Path(workdir) / "runs" / f"lab-{lab.name}" / "id_ed25519"),
                }
            )
        )
    return lab.model_copy(update={"hosts": hosts, "workdir": str(workdir)})


def is_up(lab: Lab) -> bool:
    """True while the lab's journal (from `lab up`) still holds open resources."""
    ledger_path = lab_run_dir(lab) / LEDGER_NAME
    if not ledger_path.exists():
        return False
    ledger, _ = Ledger.load(ledger_path)
    return bool(ledger.open_entries())
