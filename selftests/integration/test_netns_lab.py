"""The netns lab: bring-up, SSH-managed hosts, preflight, and teardown that leaves nothing.

Each test brings up its own small copy of labs/netns.yaml (own namespaces,
subnets and workdir, see iogate.labs.netns.variant), so it never touches a lab a user
brought up with `python -m iogate lab up`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from iogate.errors import HostError, IOGateError, LabFileError
from iogate.hosts.initiator import Initiator
from iogate.hosts.preflight import clock_problem, controller_fio_version, environment_facts, preflight
from iogate.lab import Lab, load_lab
from iogate.labs import netns

REPO = Path(__file__).resolve().parents[2]
NETNS_LAB = REPO / "labs" / "netns.yaml"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
]


def small_lab(tmp_path: Path, count: int, subnet_base: int) -> Lab:
    return netns.variant(load_lab(NETNS_LAB), workdir=tmp_path / "work", tag=f"{os.getpid() % 10000}{subnet_base}",
                         count=count, subnet_base=subnet_base)


def write_lab(lab: Lab, path: Path) -> Path:
    data = lab.model_dump(exclude={"path"}, exclude_none=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iogate", *argv], cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.fixture
def lab_up(tmp_path: Path) -> Iterator[tuple[Lab, list[netns.NsHost]]]:
    lab = small_lab(tmp_path, count=2, subnet_base=81)
    run, hosts = netns.up(lab)
    yield lab, hosts
    netns.down(lab)
    assert netns.leftovers(hosts, run.run_dir) == []


def test_cli_up_gives_ssh_hosts_and_down_leaves_nothing(tmp_path: Path) -> None:
    lab = small_lab(tmp_path, count=3, subnet_base=82)
    lab_file = write_lab(lab, tmp_path / "netns-small.yaml")
    up = cli("lab", "up", str(lab_file))
    assert up.returncode == 0, up.stderr
    hosts = netns.plan_hosts(load_lab(lab_file), netns.lab_run_dir(lab))
    try:
        for host in hosts:
            assert Path(f"/run/netns/{host.namespace}").exists()
            assert Path(f"/sys/class/net/{host.veth}").exists()
        initiator = Initiator.from_config(lab.hosts[1])
        inside = initiator.run("ip -4 -o addr show; echo ROUTES; ip route").stdout
        assert hosts[1].ns_addr in inside
        routes = inside.split("ROUTES", 1)[1]
        assert "default" not in routes, "a namespace must not route anywhere but the controller link"
        assert initiator.run("readlink /proc/self/ns/net").stdout.strip() != os.readlink("/proc/self/ns/net")
        # Each host has a home of its own: this machine's ~/.bashrc (sourced by bash for every command over
        # ssh) is never run on a host; where it runs pyenv init, 100 hosts' ssh commands filled both cores.
        home = netns.lab_run_dir(lab) / "netns" / hosts[1].name / "home"
        assert initiator.run("echo $HOME").stdout.strip() == str(home)
        assert initiator.run("ls -A ~").stdout.strip() == "", "a host's home holds no shell rc file"
        # A second `up` of the same lab is refused while it is up.
        again = cli("lab", "up", str(lab_file))
        assert again.returncode != 0 and "up already" in again.stderr
    finally:
        down = cli("lab", "down", str(lab_file))
    assert down.returncode == 0, down.stderr
    assert netns.leftovers(hosts, netns.lab_run_dir(lab)) == []
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(h.namespace in listed for h in hosts)


def test_cleanup_spares_a_live_lab_and_removes_it_when_asked(tmp_path: Path) -> None:
    lab = small_lab(tmp_path, count=2, subnet_base=83)
    run, hosts = netns.up(lab)
    try:
        spared = cli("cleanup", "--workdir", lab.workdir)
        assert spared.returncode == 0 and "still running" in spared.stdout
        assert netns.leftovers(hosts, run.run_dir) != []
        removed = cli("cleanup", "--workdir", lab.workdir, "--include-live")
        assert removed.returncode == 0, removed.stderr
        assert "deleted namespace" in removed.stdout
        assert netns.leftovers(hosts, run.run_dir) == []
    finally:
        netns.down(lab)


def test_cleanup_after_the_lab_died_removes_the_rest(tmp_path: Path) -> None:
    """The owner (h1's sshd) gone = the lab is dead: plain cleanup removes everything."""
    lab = small_lab(tmp_path, count=2, subnet_base=92)
    run, hosts = netns.up(lab)
    try:
        for pid in netns.marker_pids(netns.sshd_marker(run.run_dir / "netns" / hosts[0].name)):
            os.kill(pid, 9)
        done = cli("cleanup", "--workdir", lab.workdir)
        assert done.returncode == 0, done.stderr
        assert netns.leftovers(hosts, run.run_dir) == []
    finally:
        netns.down(lab)


def test_preflight_passes_on_good_hosts_and_names_the_bad_one(lab_up: tuple[Lab, list[netns.NsHost]]) -> None:
    lab, hosts = lab_up
    initiators = [Initiator.from_config(h) for h in lab.hosts]
    checks = preflight(initiators, fio_server_port=netns.FIO_PORT)
    assert [c.host for c in checks] == [h.name for h in lab.hosts]
    assert all(c.ok and c.fio_version == controller_fio_version() for c in checks)
    facts = environment_facts(checks)
    assert facts[f"host.{hosts[0].name}.mtu"] == "1500" and facts[f"host.{hosts[0].name}.link"] == "eth0"
    assert int(facts[f"host.{hosts[1].name}.cpus"]) >= 1

    with pytest.raises(HostError, match=rf"host {hosts[0].name}: fio fio-3\.33 differs"):
        preflight(initiators, expected_fio="fio-9.99")

    run_dir = netns.lab_run_dir(lab)
    for pid in netns.marker_pids(netns.fio_marker(run_dir / "netns" / hosts[0].name)):
        os.kill(pid, 9)
    with pytest.raises(HostError, match=rf"host {hosts[0].name}: fio server not reachable from the controller") as failure:
        preflight(initiators, fio_server_port=netns.FIO_PORT)
    assert f"host {hosts[1].name}" not in str(failure.value)

    for pid in netns.marker_pids(netns.sshd_marker(run_dir / "netns" / hosts[1].name)):
        os.kill(pid, 9)
    with pytest.raises(HostError, match=rf"host {hosts[1].name}: cannot run") as failure:
        preflight(initiators)
    assert f"host {hosts[0].name}" not in str(failure.value)


def test_clock_offset_is_only_refused_when_certainly_off() -> None:
    ms = 1_000_000
    # The host read its clock between our before (0) and after (200 ms).
    assert clock_problem("h1", host_ns=100 * ms, before_ns=0, after_ns=200 * ms, max_offset_ms=100) is None
    assert clock_problem("h1", host_ns=250 * ms, before_ns=0, after_ns=200 * ms, max_offset_ms=100) is None  # could be +50
    late = clock_problem("h1", host_ns=450 * ms, before_ns=0, after_ns=200 * ms, max_offset_ms=100)
    assert late is not None and "host h1: clock is off by +250..+450 ms" in late
    early = clock_problem("h2", host_ns=-300 * ms, before_ns=0, after_ns=100 * ms, max_offset_ms=100)
    assert early is not None and early.startswith("host h2")


def test_lab_file_errors_name_the_host(tmp_path: Path) -> None:
    lab = load_lab(NETNS_LAB)
    no_ns = lab.model_copy(update={"hosts": [lab.hosts[0], lab.hosts[1].model_copy(update={"namespace": None})]})
    with pytest.raises(LabFileError, match="host h2: no `namespace`"):
        netns.plan_hosts(no_ns, tmp_path)
    same_net = lab.model_copy(update={"hosts": [lab.hosts[0], lab.hosts[1].model_copy(update={"address": "10.77.1.3"})]})
    with pytest.raises(LabFileError, match=re.escape("host h2: address 10.77.1.3 shares 10.77.1.0/24 with host h1")):
        netns.plan_hosts(same_net, tmp_path)
    public = lab.model_copy(update={"hosts": [lab.hosts[0].model_copy(update={"address": "8.8.8.2"})]})
    with pytest.raises(LabFileError, match=re.escape("host h1: address 8.8.8.2 is not private")):
        netns.plan_hosts(public, tmp_path)
    planned = netns.plan_hosts(lab, tmp_path)
    assert [(h.name, h.root_addr, h.ns_addr) for h in planned][:2] == [("h1", "10.77.1.1", "10.77.1.2"), ("h2", "10.77.2.1", "10.77.2.2")]
    assert all(len(h.veth) <= 15 for h in planned)


def test_removers_check_identity_before_acting(tmp_path: Path) -> None:
    name = f"iogother{os.getpid() % 100000}"
    other_link = f"iogd{os.getpid() % 100000}"
    try:
        subprocess.run(["ip", "netns", "add", name], check=True)
        subprocess.run(["ip", "link", "add", other_link, "type", "ifb"], check=True)
        inode = os.stat(f"/run/netns/{name}").st_ino
        # Same name, other inode: someone else's namespace; left alone.
        assert netns._remove_netns({"name": name, "inode": inode + 1}) is None
        assert Path(f"/run/netns/{name}").exists()
        # A link that is not a veth (an ifb here) is never deleted by the veth remover.
        with pytest.raises(IOGateError, match="not our veth"):
            netns._remove_veth({"name": other_link})
        assert Path(f"/sys/class/net/{other_link}").exists()
        # Ours (same inode): removed; a second call finds nothing (idempotent).
        assert netns._remove_netns({"name": name, "inode": inode}) == f"deleted namespace {name}"
        assert netns._remove_netns({"name": name, "inode": inode}) is None
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
        subprocess.run(["ip", "link", "del", other_link], capture_output=True)


def test_the_cluster_helper_takes_its_hosts_down_when_the_runs_release_fails(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A release that fails (a cgroup still busy, a loop device held) must not leave the namespaces,
    veths and sshds of the self-test's cluster behind for the next test to collide with."""
    from iogate.arrays.local import LocalArray
    from selftests.netns_cluster import netns_cluster

    real_teardown = LocalArray.teardown

    def failing_teardown(self: LocalArray) -> None:
        real_teardown(self)
        raise IOGateError("injected: could not release cgroup (busy)")

    monkeypatch.setattr(LocalArray, "teardown", failing_teardown)
    hosts: list[netns.NsHost] = []
    with pytest.raises(IOGateError, match="injected"), netns_cluster(tmp_path / "work", "rf", count=1, subnet_base=74) as cluster:
        hosts, lab = cluster.hosts, cluster.lab
        assert (netns.NETNS_DIR / hosts[0].namespace).exists()
    assert hosts, "the cluster never came up"
    assert netns.leftovers(hosts, netns.lab_run_dir(lab)) == []
