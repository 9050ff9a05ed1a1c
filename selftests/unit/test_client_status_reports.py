"""What fio 3.33's client does with its servers' status reports: keeps them to the end, as more entries.

selftests/data/fio/client_status_interval.out is the verbatim stdout of real fio 3.33
driving two netns hosts (h1 at 10.71.1.2, h2 at 10.71.2.2, one job each: 200 read IOPS,
ramp 1 s, runtime 2 s; h1's job file is client_status_interval.fio) with
`--status-interval=1` given per client (after each job file, so fio sends it to that
server). While the run went on the file grew only by "<vm> " lines (the servers'
hostname, the same in every namespace): no figure, no host told apart. Every status
report reached the client and was kept as one more client_stats entry, printed with
the final ones at the end. A server started with `fio --server --status-interval=1`
does the same (one localhost server: 6 entries for its one job). So the client/server
engine has no live series to publish, and its final parse must refuse such output
instead of summing the reports as clones.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from iogate.engines.fio.client_server import status_reports_named, stream_client_entries, stream_host_jobs
from iogate.errors import EngineError
from iogate.metrics.types import Dir

DATA = Path(__file__).parents[1] / "data" / "fio"
CAPTURE = DATA / "client_status_interval.out"
HOSTS = {"10.71.1.2": "h1", "10.71.2.2": "h2"}
ONE_CLONE = {("h1", "cap-h1"): 1, ("h2", "cap-h2"): 1}


def _preamble() -> list[str]:
    text = CAPTURE.read_text()
    return text[: text.index("\n{\n")].splitlines()


def test_the_client_prints_no_figure_while_the_run_goes() -> None:
    lines = _preamble()
    assert lines[:4] == [
        "<vm> cap-h2: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=2",
        "<vm> cap-h1: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=2",
        "<vm> Starting 1 process",
        "<vm> Starting 1 process",
    ]
    # One empty text line per server and report: the only thing printed live, and it names no host.
    assert lines[4:] == ["<vm> "] * 8


def test_every_report_is_kept_as_an_entry_of_its_host() -> None:
    runtimes: dict[tuple[str, str], list[int]] = defaultdict(list)
    reads: dict[tuple[str, str], list[int]] = defaultdict(list)
    for entry in stream_client_entries(CAPTURE):
        if entry["jobname"] == "All clients":
            continue
        key = (entry["hostname"], entry["jobname"])
        runtimes[key].append(entry["job_runtime"])
        reads[key].append(entry["read"]["total_ios"])
    assert runtimes == {("10.71.1.2", "cap-h1"): [894, 999, 1999, 2002], ("10.71.2.2", "cap-h2"): [880, 999, 1999, 2001]}
    assert reads == {("10.71.1.2", "cap-h1"): [160, 201, 396, 396], ("10.71.2.2", "cap-h2"): [157, 201, 396, 396]}


def test_the_reports_would_be_summed_as_clones() -> None:
    shares = {share.host: share for share in stream_host_jobs(stream_client_entries(CAPTURE), HOSTS)}
    # 160 + 201 + 396 + 396: every report added up, where the run read 396.
    assert shares["h1"].jobs[0][Dir.READ].ios == 1153


def test_a_host_whose_server_sends_reports_is_refused_by_name() -> None:
    with pytest.raises(EngineError, match=r"host h1: .*cap-h1 \(4 entries, 1 planned\).*status reports"):
        list(stream_host_jobs(stream_client_entries(CAPTURE), HOSTS, numjobs=ONE_CLONE))


def test_clones_of_a_job_are_not_reports() -> None:
    status_reports_named("h1", ["a", "a", "b"], {("h1", "a"): 2, ("h1", "b"): 1}, "test")
    with pytest.raises(EngineError, match=r"a \(3 entries, 2 planned\)"):
        status_reports_named("h1", ["a", "a", "a", "b"], {("h1", "a"): 2, ("h1", "b"): 1}, "test")


def test_a_run_without_reports_parses_as_before() -> None:
    """client_server.json (two servers, jobs vm1 and vm2, one clone each) gives the same results checked or not."""
    path = DATA / "client_server.json"
    hosts = {"127.0.0.1,18765": "host-a", "127.0.0.1,18766": "host-b"}
    clones = {(host, job): 1 for host in hosts.values() for job in ("vm1", "vm2")}
    checked = {s.host: s for s in stream_host_jobs(stream_client_entries(path), hosts, numjobs=clones)}
    plain = {s.host: s for s in stream_host_jobs(stream_client_entries(path), hosts)}
    assert checked == plain
    totals = json.loads(path.read_text().lstrip())["client_stats"]
    assert sum(j[Dir.READ].ios for s in checked.values() for j in s.jobs) == sum(
        e["read"]["total_ios"] for e in totals if e["jobname"] != "All clients")
