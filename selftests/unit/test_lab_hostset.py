"""Hosts generated from a count (`hosts: {count, network, ssh_key}`): the plain list a netns lab of any size needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.errors import LabFileError
from iogate.lab import load_lab
from iogate.labs import netns

REPO = Path(__file__).resolve().parents[2]

LAB = """name: gen
array: {name: a, driver: local}
hosts: {count: %(count)s, network: %(network)s, ssh_key: /var/tmp/k}
protocols: [{name: block, connector: block}]
"""


def write(tmp_path: Path, count: int, network: str) -> Path:
    path = tmp_path / "lab.yaml"
    path.write_text(LAB % {"count": count, "network": network})
    return path


def test_count_expands_to_named_hosts_one_slash24_each(tmp_path: Path) -> None:
    lab = load_lab(write(tmp_path, 3, "10.110.0.0/16"))
    assert [(h.name, h.namespace, h.address, h.transport, h.ssh_key) for h in lab.hosts] == [
        ("h1", "iogate-h1", "10.110.1.2", "ssh://root@10.110.1.2", "/var/tmp/k"),
        ("h2", "iogate-h2", "10.110.2.2", "ssh://root@10.110.2.2", "/var/tmp/k"),
        ("h3", "iogate-h3", "10.110.3.2", "ssh://root@10.110.3.2", "/var/tmp/k"),
    ]
    planned = netns.plan_hosts(lab, tmp_path)
    assert [(h.root_addr, h.ns_addr) for h in planned] == [("10.110.1.1", "10.110.1.2"), ("10.110.2.1", "10.110.2.2"),
                                                          ("10.110.3.1", "10.110.3.2")]


def test_a_wider_network_carries_past_256_hosts(tmp_path: Path) -> None:
    lab = load_lab(write(tmp_path, 300, "10.96.0.0/14"))
    # host N is the N-th /24 of 10.96.0.0/14: 255 -> 10.96.255.0/24, 256 = 1 * 256 + 0 -> 10.97.0.0/24,
    # 300 = 1 * 256 + 44 -> 10.97.44.0/24
    assert [lab.hosts[n - 1].address for n in (255, 256, 300)] == ["10.96.255.2", "10.97.0.2", "10.97.44.2"]


@pytest.mark.parametrize(("count", "network", "message"), [
    (256, "10.110.0.0/16", "room for 255 hosts, not 256"),
    (2, "8.8.0.0/16", "not private"),
    (2, "10.110.1.0/24", "give a /23 or wider"),
    (0, "10.110.0.0/16", "greater than or equal to 1"),
])
def test_bad_host_sets_are_refused(tmp_path: Path, count: int, network: str, message: str) -> None:
    with pytest.raises(LabFileError, match=message):
        load_lab(write(tmp_path, count, network))


def test_the_hundred_host_lab_file_loads() -> None:
    lab = load_lab(REPO / "labs" / "netns-100.yaml")
    assert len(lab.hosts) == 100 and lab.hosts[99].address == "10.110.100.2" and lab.bring_up == "netns"
    assert len({h.namespace for h in lab.hosts}) == 100
