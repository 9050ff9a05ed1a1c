"""client_stats entries go to the lab host whose fio server ran them, told apart by address and port.

selftests/data/fio/client_server.json is real fio 3.33 output of two servers on one
address (127.0.0.1, ports 18765 and 18766): fio's client writes each entry's server
hostname and port (client.c json_object_add_client_info), never the "addr,port" given
to --client, so a lab whose servers listen on a non-default port must match on both.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iogate.engines.fio.client_server import split_by_host
from iogate.errors import EngineError

DATA = json.loads((Path(__file__).parents[1] / "data" / "fio" / "client_server.json").read_text())


def test_two_servers_on_one_address_are_told_apart_by_port() -> None:
    per_host = split_by_host(DATA, {"127.0.0.1,18765": "host-a", "127.0.0.1,18766": "host-b"})
    assert {h: sorted(e["jobname"] for e in entries) for h, entries in per_host.items()} == {
        "host-a": ["vm1", "vm2"], "host-b": ["vm1", "vm2"]}
    assert {e["port"] for e in per_host["host-a"]} == {18765}
    assert {e["port"] for e in per_host["host-b"]} == {18766}


def test_an_entry_from_a_server_not_in_the_plan_is_an_error_naming_it() -> None:
    with pytest.raises(EngineError, match=r"unknown client '127.0.0.1,18766'"):
        split_by_host(DATA, {"127.0.0.1,18765": "host-a"})


def test_the_default_port_needs_no_port_in_the_client_argument() -> None:
    entries = [{"jobname": "vm1", "hostname": "10.0.0.2", "port": 8765},
               {"jobname": "vm1", "hostname": "10.0.0.3", "port": 8765}]
    per_host = split_by_host({"client_stats": entries}, {"10.0.0.2": "h2", "10.0.0.3": "h3"})
    assert [e["hostname"] for e in per_host["h2"]] == ["10.0.0.2"]
    assert [e["hostname"] for e in per_host["h3"]] == ["10.0.0.3"]
