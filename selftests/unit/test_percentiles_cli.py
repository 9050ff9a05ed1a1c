"""`python -m iogate percentiles`: merged percentiles over json+ files, plain and client/server."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from iogate.metrics.histogram import Histogram
from iogate.metrics.percentiles_cli import main, merged_histograms

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def raw_clat_ns(direction_code: int) -> list[int]:
    values = []
    for name in ("randrw_clat.1.log", "randrw_clat.2.log"):
        for line in (DATA / name).read_text().splitlines():
            fields = [int(f) for f in line.split(",")]
            if fields[2] == direction_code:
                values.append(fields[1])
    return sorted(values)


def test_json_output_within_1pct_of_the_exact_raw_latencies(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, str(DATA / "randrw.json"), "--p", "50,99,99.9")
    assert set(out) == {"read", "write"}  # no trim: only directions with I/O
    assert set(out["read"]) == {"50", "99", "99.9"}
    for direction, code in (("read", 0), ("write", 1)):
        raw = raw_clat_ns(code)
        for key in ("50", "99", "99.9"):
            exact = raw[math.ceil(float(key) / 100 * len(raw)) - 1]
            assert abs(out[direction][key] - exact) <= 0.01 * exact, (direction, key)


def test_client_server_output_merges_every_client_and_skips_all_clients(capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((DATA / "client_server.json").read_text().lstrip())
    entries = doc["client_stats"]
    aggregate = next(e for e in entries if e["jobname"] == "All clients")
    assert "bins" not in aggregate["read"]["clat_ns"]  # fio gives the aggregate no histogram
    per_client = [e for e in entries if e["jobname"] != "All clients"]
    assert len({e["port"] for e in per_client}) == 2 and len(per_client) == 4
    merged = merged_histograms([DATA / "client_server.json"])
    for direction in ("read", "write"):
        # Every I/O counted exactly once: the aggregate's total equals the clients' bins.
        assert merged[direction].total == aggregate[direction]["total_ios"]
        # fio's aggregate keeps only the exact mean: the merged bins agree with it to bin resolution.
        assert merged[direction].mean_ns() == pytest.approx(aggregate[direction]["clat_ns"]["mean"], rel=0.01)
        expected = Histogram.merged(Histogram.from_json_bins(e[direction]["clat_ns"]["bins"]) for e in per_client)
        out = run_json(capsys, str(DATA / "client_server.json"), "--p", "99")
        assert out[direction]["99"] == expected.percentile_ns(99)


def test_several_files_merge_like_one_run(capsys: pytest.CaptureFixture[str]) -> None:
    one = merged_histograms([DATA / "randrw.json"])
    both = merged_histograms([DATA / "randrw.json", DATA / "client_server.json"])
    assert both["read"].total == one["read"].total + merged_histograms([DATA / "client_server.json"])["read"].total
    out = run_json(capsys, str(DATA / "randrw.json"), str(DATA / "client_server.json"))
    assert set(out["read"]) == {"50", "99", "99.9"}  # default percentiles


def test_fio_warnings_before_the_json_are_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    assert (DATA / "verify_fail.json").read_text().startswith("fio: pid=")
    out = run_json(capsys, str(DATA / "verify_fail.json"), "--p", "50")
    assert out["read"]["50"] > 0  # the verify pass reads the blocks back


def test_human_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(DATA / "randrw.json"), "--p", "50,99"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["direction", "ios", "p50", "us", "p99", "us"]
    assert lines[1].split()[:2] == ["read", "5600"] and lines[2].split()[:2] == ["write", "2400"]


def test_plain_json_without_bins_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((DATA / "randrw.json").read_text())
    for job in doc["jobs"]:
        for direction in ("read", "write", "trim"):
            job[direction]["clat_ns"].pop("bins", None)
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(doc))
    assert main([str(plain)]) == 2
    assert "plain.json: job vm1: read did 2800 I/Os but has no clat_ns bins" in capsys.readouterr().err


def test_not_fio_output_and_missing_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    assert main([str(other)]) == 2
    assert "neither 'jobs' nor 'client_stats'" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    text = tmp_path / "text.json"
    text.write_text("fio: something went wrong\n")
    assert main([str(text)]) == 2
    assert "no JSON document" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["0", "101", "x", ""])
def test_bad_percentiles_are_a_usage_error(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([str(DATA / "randrw.json"), "--p", bad])
    assert exc.value.code == 2


def test_a_direction_with_io_but_no_latency_samples_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((DATA / "randrw.json").read_text()[(DATA / "randrw.json").read_text().index("{"):])
    doc["jobs"][0]["write"]["clat_ns"]["bins"] = {}
    broken = tmp_path / "no_bins.json"
    broken.write_text(json.dumps(doc))
    assert main([str(broken)]) == 2
    assert "write did 1200 I/Os but holds no latency samples" in capsys.readouterr().err


def test_single_job_percentiles_are_fios_own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One job alone: the CLI prints fio's json percentiles for that job, bin for bin."""
    text = (DATA / "randrw.json").read_text()
    doc = json.loads(text[text.index("{"):])
    job = doc["jobs"][0]
    single = tmp_path / "one_job.json"
    single.write_text(json.dumps({**doc, "jobs": [job]}))
    keys = list(job["read"]["clat_ns"]["percentile"])
    out = run_json(capsys, str(single), "--p", ",".join(keys))
    for direction in ("read", "write"):
        for key, fio_ns in job[direction]["clat_ns"]["percentile"].items():
            assert out[direction][f"{float(key):g}"] == fio_ns, (direction, key)
