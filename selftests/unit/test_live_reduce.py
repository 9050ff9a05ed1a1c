"""The live feed's reduced remote read (iogate/engines/fio/live_reduce.py) on real fio 3.33 status reports.

selftests/data/fio/status_interval.out is fio's own output file of a
`--status-interval=1` json+ run (README there). The remote command runs here in
`sh`, with `awk` being mawk, gawk or busybox awk in turn (what real hosts have).
The reference is the whole text through the feed, as a local host reads it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from iogate.engines.fio import live_reduce
from iogate.engines.fio.live import StatusTail, reports
from iogate.metrics.types import Dir, Sample

DATA = Path(__file__).resolve().parents[1] / "data" / "fio" / "status_interval.out"
TEXT = DATA.read_text()
DIRS = {f"vm{i}": (Dir.READ, Dir.WRITE) for i in range(3)}
AWKS = {"mawk": ["mawk"], "gawk": ["gawk"], "busybox": ["busybox", "awk"]}


@pytest.fixture(params=sorted(AWKS))
def awk_path(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A PATH whose `awk` is the one named (installed by `make apt`)."""
    argv = AWKS[request.param]
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed (make apt installs it)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "awk").write_text(f"#!/bin/sh\nexec {' '.join(argv)} \"$@\"\n")
    (bin_dir / "awk").chmod(0o755)
    return f"{bin_dir}:/usr/bin:/bin"


def _remote(path: Path, offset: int, search_path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/bin/sh", "-c", live_reduce.read_command(str(path), offset)], capture_output=True, text=True,
                          env={**os.environ, "PATH": search_path}, check=False)


def _report_ends(text: str) -> list[int]:
    """The character offset just past each report (a line that is a lone `}` at column 0)."""
    ends, at = [], 0
    for line in text.splitlines(keepends=True):
        at += len(line)
        if line.rstrip("\n") == "}":
            ends.append(at)
    return ends


def test_the_data_holds_status_reports_of_three_jobs_in_both_directions() -> None:
    assert len(_report_ends(TEXT)) == 6  # five status reports and the run's own
    ends = _report_ends(TEXT)
    last_status = json.loads(TEXT[ends[-3]:ends[-2]])
    assert [j["jobname"] for j in last_status["jobs"]] == ["vm0", "vm1", "vm2"]
    assert "bins" in last_status["jobs"][0]["read"]["clat_ns"]  # json+: what the filter exists to drop


def test_one_report_reduced_keeps_every_figure_the_feed_reads_and_an_eighth_of_the_bytes(awk_path: str, tmp_path: Path) -> None:
    end = _report_ends(TEXT)[1]
    path = tmp_path / "out.json"
    path.write_text(TEXT[:end])
    reply = _remote(path, 0, awk_path)
    got = live_reduce.split_reply(reply.stdout)
    assert got is not None, reply.stderr
    reduced, consumed = got
    assert consumed == len(TEXT[:end].encode())
    assert len(reduced) < end / 8
    docs = [json.loads(TEXT[:_report_ends(TEXT)[0]]), json.loads(TEXT[_report_ends(TEXT)[0]:end])]
    small, used = reports(reduced)
    assert len(small) == 2 and used == len(reduced.rstrip("\n"))
    for whole, cut in zip(docs, small, strict=True):
        assert cut["timestamp_ms"] == whole["timestamp_ms"]
        for job, job_cut in zip(whole["jobs"], cut["jobs"], strict=True):
            for key in ("jobname", "error", "job_runtime", "elapsed"):
                assert job_cut[key] == job[key]
            for direction in ("read", "write"):
                assert job_cut[direction]["total_ios"] == job[direction]["total_ios"]
                assert job_cut[direction]["clat_ns"]["mean"] == job[direction]["clat_ns"]["mean"]
                assert not job_cut[direction]["clat_ns"].get("bins") and "iops" not in job_cut[direction]


def _cuts() -> list[int]:
    """Where the growing file is read: every 2003 bytes (mid-line mostly); in the first two reports, inside
    the key of each kept line (a line fio is still writing, not yet one the filter would keep) and just after
    each kept line that ends in a comma (the cut that leaves the filter a comma it cannot settle yet)."""
    cuts = set(range(2003, len(TEXT), 2003))
    at = 0
    for line in TEXT[: _report_ends(TEXT)[1]].splitlines(keepends=True):
        if any(f'"{key}" :' in line for key in live_reduce.KEPT_KEYS):
            cuts.add(at + line.index('"') + 3)
            if line.rstrip().endswith(","):
                cuts.add(at + len(line))
        at += len(line)
    return sorted(cuts | {len(TEXT)})


def test_a_growing_file_read_reduced_feeds_the_same_intervals_as_its_whole_text(awk_path: str, tmp_path: Path) -> None:
    assert TEXT.isascii()  # offsets in characters are offsets in bytes
    path = tmp_path / "out.json"
    whole = StatusTail("h1", DIRS, first_elapsed_s=2)
    reduced = StatusTail("h1", DIRS, first_elapsed_s=2)
    expected: list[Sample] = []
    got: list[Sample] = []
    offset = previous = received = 0
    for cut in _cuts():
        path.write_text(TEXT[:cut])
        expected += whole.feed(TEXT[previous:cut])
        previous = cut
        reply = live_reduce.split_reply(_remote(path, offset, awk_path).stdout)
        assert reply is not None
        offset += reply[1]
        received += len(reply[0])
        got += reduced.feed(reply[0])
    assert offset == len(TEXT)
    assert len(expected) >= 3 * 2 * 3  # three jobs, both directions, at least three whole seconds each
    assert got == expected
    assert received < len(TEXT) / 8


@pytest.mark.parametrize("host", ["no awk", "busybox grep (no -b)"])
def test_a_host_without_the_tools_answers_without_the_trailer_so_the_feed_reads_the_whole_text(host: str, tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text(TEXT[:5000])
    bare = tmp_path / "bare"
    bare.mkdir()
    for tool in ("wc", "tail", "head", "grep"):
        (bare / tool).symlink_to(shutil.which(tool) or tool)
    if host.startswith("busybox"):
        if shutil.which("busybox") is None:
            pytest.skip("busybox is not installed (make apt installs it)")
        (bare / "grep").unlink()
        (bare / "grep").write_text(f"#!/bin/sh\nexec {shutil.which('busybox')} grep \"$@\"\n")
        (bare / "grep").chmod(0o755)
        (bare / "awk").symlink_to(shutil.which("awk") or "awk")
    reply = _remote(path, 0, str(bare))
    assert reply.returncode != 0
    assert reply.stdout == ""
    assert live_reduce.split_reply(reply.stdout) is None


def test_no_file_yet_and_nothing_new_consume_nothing(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    assert live_reduce.split_reply(_remote(path, 0, "/usr/bin:/bin").stdout) == ("", 0)
    path.write_text(TEXT[:100])
    assert live_reduce.split_reply(_remote(path, 100, "/usr/bin:/bin").stdout) == ("", 0)
