"""client_stats entries go to the lab host whose fio server ran them, told apart by address and port.

selftests/data/fio/client_server.json is real fio 3.33 output of two servers on one
address (127.0.0.1, ports 18765 and 18766): fio's client writes each entry's server
hostname and port (client.c json_object_add_client_info), never the "addr,port" given
to --client, so a lab whose servers listen on a non-default port must match on both.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from iogate.engines.fio.client_server import (
    _JsonStream,
    cluster_directions,
    host_jobs,
    host_runtimes_ms,
    split_by_host,
    stream_client_entries,
    stream_host_jobs,
)
from iogate.errors import EngineError
from iogate.metrics.types import Dir

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


# -- streamed: entries reduced one at a time, the same results as the whole document ------------------
def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "client.out"
    path.write_text(text)
    return path


TEXT = (Path(__file__).parents[1] / "data" / "fio" / "client_server.json").read_text()
HOSTS = {"127.0.0.1,18765": "host-a", "127.0.0.1,18766": "host-b"}


@pytest.mark.parametrize("chunk", [7, 4096, 1 << 20])  # entries cut anywhere between two reads, and never
def test_streamed_entries_give_what_the_whole_document_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(_JsonStream, "CHUNK", chunk)
    path = _write(tmp_path, "<127.0.0.1> Starting 2 processes\nsome progress {not json}\n" + TEXT)
    streamed = {share.host: share for share in stream_host_jobs(stream_client_entries(path, copy_to=tmp_path / "client.json"), HOSTS)}
    whole = host_jobs(DATA, HOSTS)
    assert {h: s.jobs for h, s in streamed.items()} == whole
    assert {h: s.runtime_ms for h, s in streamed.items()} == host_runtimes_ms(DATA, HOSTS)
    assert json.loads((tmp_path / "client.json").read_text()) == DATA  # the point's client.json artifact
    merged = cluster_directions({h: s.jobs for h, s in streamed.items()})
    # Worked from the file's own bins, summed here with Counter: the streamed merge adds them exactly.
    expected: Counter[int] = Counter()
    for entry in DATA["client_stats"]:
        if entry["jobname"] != "All clients":
            expected.update({int(k): v for k, v in entry["read"]["clat_ns"]["bins"].items()})
    assert merged[Dir.READ].clat.bins == dict(sorted(expected.items()))


def test_a_streamed_unknown_client_missing_host_or_broken_json_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, TEXT)
    with pytest.raises(EngineError, match=r"unknown client '127.0.0.1,18766'"):
        list(stream_host_jobs(stream_client_entries(path), {"127.0.0.1,18765": "host-a"}))
    with pytest.raises(EngineError, match=r"no results for host\(s\) host-c"):
        list(stream_host_jobs(stream_client_entries(path), {**HOSTS, "127.0.0.1,18767": "host-c"}))
    with pytest.raises(EngineError, match="not valid JSON"):
        list(stream_client_entries(_write(tmp_path, TEXT[: len(TEXT) // 2])))
    with pytest.raises(EngineError, match="not valid JSON"):
        list(stream_client_entries(_write(tmp_path, TEXT + "\n{")))
    with pytest.raises(EngineError, match="no JSON"):
        list(stream_client_entries(_write(tmp_path, "<h1> fio: failed to connect\n")))
    with pytest.raises(EngineError, match="no 'client_stats'"):
        list(stream_client_entries(_write(tmp_path, '{\n  "fio version" : "fio-3.33"\n}\n')))
    with pytest.raises(EngineError, match="fio 2.x"):
        list(stream_client_entries(_write(tmp_path, '{\n  "fio version" : "fio-2.18",\n  "client_stats" : []\n}\n')))


def test_the_client_text_outside_its_json_is_read_without_the_json(tmp_path: Path) -> None:
    from iogate.engines.fio.client_server import _client_text

    path = _write(tmp_path, "<h1> Starting 1 process\n<h1> fio: terminating on signal 2\n" + TEXT.lstrip("\n") + "<h2> late line\n")
    head, text, has_stats = _client_text(path)
    assert head == "<h1> Starting 1 process\n<h1> fio: terminating on signal 2\n"
    assert text == head + "<h2> late line\n" and has_stats
    assert _client_text(_write(tmp_path, "<h1> fio: failed to connect\n")) == ("<h1> fio: failed to connect\n",) * 2 + (False,)
