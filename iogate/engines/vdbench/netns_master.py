"""Multi-host vdbench (hd=) on the netns lab: a master namespace linked to each host namespace.

vdbench's master listens on TCP 5570 and its rsh daemon on 5560, both on the
wildcard address, so neither may run in this machine's own namespace. Here:
  - the master runs in a namespace of its own (lo up, address MASTER_ADDR/32 on lo),
  - one veth pair per lab host joins it to that host's namespace
    (10.<base>.<n>.1 master side, .2 host side, a /24 each; the host namespace
    gets a route to MASTER_ADDR over it and nothing else),
  - a `vdbench rsh` daemon runs in each host namespace (hd=...,shell=vdbench),
  - a hosts file maps this machine's name to MASTER_ADDR for every JVM
    (jdk.net.hosts.file): vdbench refuses a master whose name resolves to
    127.0.0.1, and slaves connect back to the master by that name.
Everything is journalled before it exists: the namespace (its veths go with it)
and each daemon (marker: its path in the run directory, carried on every JVM's
command line, slaves included, through VDBENCH_JVM_OPTS).
"""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from iogate import shell
from iogate.errors import HostError
from iogate.run import Run
from iogate.run.ledger import Entry
from iogate.run.resources import marker_pids, release

RSH_PORT = 5560
READY_TIMEOUT_S = 60.0
HOST_IFNAME = "vdbmaster"
# The product's master subnet, 10.89.0.0/16: apart from the netns lab (10.77), the lab variants
# (78 by default) and the self-tests' fixed ones (81-88, 91-94; grep subnet_base in selftests/).
MASTER_SUBNET_BASE = 89


@dataclass(frozen=True)
class MasterNet:
    namespace: str
    master_addr: str
    systems: Mapping[str, str]  # lab host -> the address its rsh daemon answers on
    hosts_file: Path
    run_dir: Path

    def jvm_opts(self, marker: str) -> str:
        # java.io.tmpdir: the slaves' data-validation map files go into the run directory.
        tmp = self.run_dir / "vdbench-master" / "tmp"
        return f"-Djdk.net.hosts.file={self.hosts_file} -Djava.io.tmpdir={tmp} -Diogate.marker={marker}"


def _ip(*argv: str) -> None:
    shell.run(["ip", *argv], error=HostError)


def _listening(pid: int, port: int) -> bool:
    try:
        rows = Path(f"/proc/{pid}/net/tcp6").read_text().splitlines()[1:] + Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(r.split()[3] == "0A" and int(r.split()[1].rsplit(":", 1)[1], 16) == port for r in rows)


def planned_systems(host_namespaces: Mapping[str, str], subnet_base: int) -> dict[str, str]:
    """The address each host's rsh daemon will answer on once bring_up has run (the same numbering)."""
    return {host: f"10.{subnet_base}.{index}.2" for index, host in enumerate(sorted(host_namespaces), start=1)}


def bring_up(run: Run, host_namespaces: Mapping[str, str], vdbench: Path, *, subnet_base: int) -> MasterNet:
    """The master namespace, its links, the hosts file and one rsh daemon per host; on failure undo it."""
    base = run.run_dir / "vdbench-master"
    base.mkdir(parents=True, exist_ok=True)
    tmp_entry = run.ledger.intend("dir", path=str(base / "tmp"))
    (base / "tmp").mkdir(exist_ok=True)
    run.ledger.created(tmp_entry)
    digest = hashlib.sha1(str(run.run_dir).encode()).hexdigest()[:8]
    namespace = f"iogvdb{digest}"
    master_addr = f"10.{subnet_base}.0.1"
    ledger = run.ledger
    first = tmp_entry.id - 1
    try:
        entry = ledger.intend("netns", name=namespace, host="vdbench master")
        _ip("netns", "add", namespace)
        ledger.created(entry, inode=os.stat(f"/run/netns/{namespace}").st_ino)
        _ip("-n", namespace, "link", "set", "dev", "lo", "up")
        _ip("-n", namespace, "addr", "add", f"{master_addr}/32", "dev", "lo")
        hosts_file = base / "hosts"
        hosts_file.write_text(f"{master_addr} {socket.gethostname()}\n")
        systems = {}
        for index, (host, host_ns) in enumerate(sorted(host_namespaces.items()), start=1):
            master_side, host_side = f"10.{subnet_base}.{index}.1", planned_systems(host_namespaces, subnet_base)[host]
            veth = f"vdb{digest[:6]}{index}"
            # Made inside the master namespace: deleting that namespace deletes the pair.
            _ip("link", "add", veth, "netns", namespace, "type", "veth", "peer", "name", HOST_IFNAME, "netns", host_ns)
            _ip("-n", namespace, "addr", "add", f"{master_side}/24", "dev", veth)
            _ip("-n", namespace, "link", "set", "dev", veth, "up")
            _ip("-n", host_ns, "addr", "add", f"{host_side}/24", "dev", HOST_IFNAME)
            _ip("-n", host_ns, "link", "set", "dev", HOST_IFNAME, "up")
            _ip("-n", host_ns, "route", "add", f"{master_addr}/32", "via", master_side)
            systems[host] = host_side
        net = MasterNet(namespace, master_addr, systems, hosts_file, run.run_dir)
        for host, host_ns in sorted(host_namespaces.items()):
            _start_rsh(run, net, host, host_ns, vdbench, base)
        return net
    except BaseException:
        release(ledger, [e for e in ledger.entries.values() if e.id > first])
        raise


def rsh_marker(net: MasterNet, host: str) -> str:
    return str(net.run_dir / "vdbench-master" / f"rsh-{host}")


def _start_rsh(run: Run, net: MasterNet, host: str, host_ns: str, vdbench: Path, base: Path) -> None:
    marker = rsh_marker(net, host)
    entry = run.ledger.intend("process", name=f"vdbench rsh daemon in {host_ns}", marker=marker, host=host)
    env = {**os.environ, "VDBENCH_JVM_OPTS": net.jvm_opts(marker)}
    with (base / f"rsh-{host}.log").open("ab") as log:
        subprocess.run(["setsid", "-f", "ip", "netns", "exec", host_ns, str(vdbench / "vdbench"), "rsh"],
                       stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=base, env=env, check=True,
                       timeout=30)
    run.ledger.created(entry)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if any(_listening(pid, RSH_PORT) for pid in marker_pids(marker)):
            return
        time.sleep(0.3)
    log_text = (base / f"rsh-{host}.log").read_text(errors="replace")[-1500:]
    raise HostError(f"vdbench rsh daemon in {host_ns} did not listen on {RSH_PORT} within {READY_TIMEOUT_S:g} s: {log_text}")


def private_namespace(run: Run, label: str) -> Entry:
    """A loopback-only namespace for a vdbench run on this machine (journalled; release() deletes it)."""
    digest = hashlib.sha1(f"{run.run_dir}/{label}".encode()).hexdigest()[:10]
    name = f"iogvdb{digest}"
    entry = run.ledger.intend("netns", name=name, host="vdbench private network")
    _ip("netns", "add", name)
    run.ledger.created(entry, inode=os.stat(f"/run/netns/{name}").st_ino)
    _ip("-n", name, "link", "set", "dev", "lo", "up")
    return entry


def tear_down(run: Run, net: MasterNet) -> list[str]:
    """Stop the daemons and delete the master namespace (and with it every link)."""
    base = str(net.run_dir / "vdbench-master")
    mine = [e for e in run.ledger.open_entries()
            if (e.kind == "process" and str(e.attrs.get("marker", "")).startswith(base))
            or (e.kind == "dir" and str(e.attrs.get("path", "")).startswith(base))
            or (e.kind == "netns" and e.attrs.get("name") == net.namespace)]
    return release(run.ledger, mine)
