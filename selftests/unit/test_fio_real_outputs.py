"""Every real fio output in shared/data/real-outputs/fio (other people's runs, SOURCES.md names each):
read with figures equal to the file's own, or refused with one line naming the version or reason.

The expected figures are the file's own numbers, taken from its JSON here with plain arithmetic
(sums over a job's clone entries; a clone-pooled mean weighted by each entry's sample count,
`N` or, where fio wrote none, its total_ios), never from the code under test.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from iogate.engines.fio.output import read_fio_output
from iogate.errors import EngineError
from iogate.metrics.types import Dir

# ../shared beside the repository (the issue's ../shared/data/real-outputs), one level further up as the
# vdbench sample tests look, or the lab machine's /work/shared.
_REPO = Path(__file__).resolve().parents[2]
_CANDIDATES = [base / "shared" / "data" / "real-outputs" / "fio" for base in (_REPO.parent, _REPO.parent.parent, Path("/work"))]
REAL = next((path for path in _CANDIDATES if path.is_dir()), _CANDIDATES[0])
FILES = sorted(p.name for p in REAL.iterdir() if p.is_file() and p.name != "SOURCES.md") if REAL.is_dir() else []
pytestmark = pytest.mark.skipif(not FILES, reason=f"real fio outputs not found at {REAL} (a fresh clone has no shared/)")

# What must be refused, and the words its one line must carry (version or reason).
REFUSED = {
    "benson_fio-3.33_rw_sigint.json": ("fio-3.33", "SIGINT"),
    "fioplot_fio-3.34_randread-1-1.json": ("fio-3.34", "SIGINT"),
    "fioplot_fio-2.18_randread-01.json": ("fio-2.18-59-g618e", "fio 2.x"),
    "pkb_fio-2.17_hist.json": ("fio-2.17", "fio 2.x"),
    "pkb_fio-2.1.4_parser-sample.json": ("fio-2.1.4", "fio 2.x"),
}


def _raw(name: str) -> dict[str, Any]:
    text = (REAL / name).read_text()
    return json.JSONDecoder().raw_decode(text, text.find("{"))[0]


def _host_of(entry: dict[str, Any]) -> str:
    return str(entry.get("hostname", ""))


def _expected(name: str) -> dict[tuple[str, str, str], dict[str, float]]:
    """Per (host, job, direction with I/O): IOPS, bytes/s, clat mean (ns) and samples, from the file."""
    data = _raw(name)
    entries = [e for e in data.get("client_stats") or data["jobs"] if e["jobname"] != "All clients"]
    sums: dict[tuple[str, str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for entry in entries:
        for d in ("read", "write", "trim"):
            section = entry[d]
            if not section["total_ios"]:
                continue
            key = (_host_of(entry), entry["jobname"], d)
            bw = section["bw_bytes"] if "bw_bytes" in section else section["io_bytes"] * 1000 // section["runtime"]
            clat = section["clat_ns"]
            n = clat.get("N", section["total_ios"])
            sums[key]["iops"] += n * 1000 / section["runtime"]  # completions / runtime (fio's total_ios counts issues)
            sums[key]["fio_iops"] += section["iops"]
            sums[key]["issued"] += section["total_ios"]
            sums[key]["bw"] += bw
            sums[key]["n"] += n
            sums[key]["mean_x_n"] += clat["mean"] * n
    return {key: {"iops": s["iops"], "fio_iops": s["fio_iops"], "issued": s["issued"], "bw": s["bw"],
                  "mean": s["mean_x_n"] / s["n"], "n": s["n"]} for key, s in sums.items()}


def _entry_counts(name: str) -> dict[tuple[str, str], int]:
    data = _raw(name)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for entry in data.get("client_stats") or data["jobs"]:
        if entry["jobname"] != "All clients":
            counts[(_host_of(entry), entry["jobname"])] += 1
    return counts


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_one_line_naming_version_and_reason(name: str) -> None:
    if name not in FILES:
        pytest.skip(f"{name} not in {REAL}")
    with pytest.raises(EngineError) as caught:
        read_fio_output(REAL / name)
    message = str(caught.value)
    assert "\n" not in message
    for words in REFUSED[name]:
        assert words in message, message
    assert "no completed I/O" not in message  # 2.1.4 did I/O: the reason is its version


@pytest.mark.parametrize("name", [f for f in FILES if f not in REFUSED])
def test_read_figures_equal_the_files_own(name: str) -> None:
    output = read_fio_output(REAL / name)
    data = _raw(name)
    assert output.version == data["fio version"]
    expected = _expected(name)
    got = {(job.host, job.name, d.value): job[d] for job in output.jobs for d in Dir if job[d].ios}
    assert set(got) == set(expected), "every job and direction that did I/O, and only those"
    counts = _entry_counts(name)
    for key, want in expected.items():
        direction = got[key]
        assert direction.iops == pytest.approx(want["iops"], rel=1e-12), key
        if want["issued"] == want["n"]:  # every I/O issued in the measured phase: fio's own figure, to its six decimals
            assert direction.iops == pytest.approx(want["fio_iops"], rel=1e-9, abs=1e-6), key
        assert direction.bw_bytes_per_s == want["bw"], key
        assert direction.clat.samples == want["n"], key
        assert direction.clat.mean_ns == pytest.approx(want["mean"], rel=1e-12), key
        assert direction.clat.mean_ns > 0  # a direction that did I/O keeps its mean, whatever the version
        host, job, d = key
        printed = _printed(name, host, job, d)
        if counts[(host, job)] == 1:
            # fio's own printed percentiles come with the record, in ns ...
            assert output.percentiles_ns[(host, job, Dir(d))] == printed, key
            # ... and where json+ bins came too, the histogram gives every one of them exactly.
            if direction.clat.histogram is not None:
                for pct, value_ns in printed.items():
                    assert direction.clat.histogram.percentile_ns(pct) == value_ns, (key, pct)
            record = next(j for j in output.jobs if (j.host, j.name) == (host, job))
            assert output.clat_percentiles_ns(record, d) == printed, key
        else:
            assert (host, job, Dir(d)) not in output.percentiles_ns  # clones' percentiles do not merge
            record = next(j for j in output.jobs if (j.host, j.name) == (host, job))
            if direction.clat.histogram is None:
                assert output.clat_percentiles_ns(record, d) == {}, key  # none claimed without bins


def _printed(name: str, host: str, job: str, d: str) -> dict[float, float]:
    for entry in _raw(name).get("client_stats") or _raw(name)["jobs"]:
        if _host_of(entry) == host and entry["jobname"] == job:
            return {float(k): float(v) for k, v in entry[d]["clat_ns"].get("percentile", {}).items()}
    raise AssertionError(f"{name}: no entry {host}/{job}")


def test_every_file_is_either_read_or_refused() -> None:
    """No file goes unexamined: the two lists above cover the directory."""
    read = [f for f in FILES if f not in REFUSED]
    assert len(read) + len([f for f in FILES if f in REFUSED]) == len(FILES)
    assert len(read) >= 8  # 13 files: 5 refused (2 interrupted, 3 fio 2.x), 8 read


def test_client_server_json_plus_percentiles_of_each_host() -> None:
    """The 20-host fio 3.19 client/server json+: 13 printed percentiles per host from the bins, exactly."""
    name = "intel-vast_fio-3.19_jsonplus_clientserver20.log"
    if name not in FILES:
        pytest.skip(f"{name} not in {REAL}")
    output = read_fio_output(REAL / name)
    assert len(output.hosts) == 20 and output.client_server
    checked = 0
    for job in output.jobs:
        histogram = job["read"].clat.histogram
        assert histogram is not None
        for pct, value_ns in output.percentiles_ns[(job.host, job.name, Dir.READ)].items():
            assert histogram.percentile_ns(pct) == value_ns
            checked += 1
    assert checked == 260
    assert not math.isnan(sum(job["read"].clat.mean_ns for job in output.jobs))


def test_percentiles_cli_names_the_version_of_the_real_2_1_4_file(capsys: pytest.CaptureFixture[str]) -> None:
    """`iogate percentiles` refused it saying "no completed I/O" (it did I/O: fio 2.1.4 writes no total_ios)."""
    from iogate.metrics.percentiles_cli import main

    name = "pkb_fio-2.1.4_parser-sample.json"
    if name not in FILES:
        pytest.skip(f"{name} not in {REAL}")
    assert main([str(REAL / name)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "fio-2.1.4" in err and "no completed I/O" not in err



OWN_RAMP = Path(__file__).resolve().parents[1] / "data" / "fio" / "ramp_deep_queue.json"


@pytest.mark.parametrize(("path", "host", "job", "issued", "completed", "runtime_ms", "fio_iops"), [
    # This machine, fio 3.33: iodepth 128 on a loop device capped at 500 read IOPS, ramp 1 s, runtime 1 s.
    (OWN_RAMP, "", "x", 508, 635, 1204, 421.92691),
    # A public run, fio 3.19 client/server: 16 jobs at iodepth 8 (one entry per client) after a 60 s ramp.
    (REAL / "intel-vast_fio-3.19_jsonplus_clientserver20.log", "client-cluster53", "rd_rnd_qd_128_1024k_16w",
     1701267, 1701379, 300106, 5668.886993),
])
def test_ios_in_flight_at_the_ramps_end_count_in_the_measured_phase(path: Path, host: str, job: str, issued: int,
                                                                    completed: int, runtime_ms: int, fio_iops: float) -> None:
    """fio's json iops is total_ios / runtime, and total_ios counts the I/Os issued after ramp_time: the ones in
    flight at the ramp's end complete in the measured phase uncounted (here 127 and 112). The parsed figure is
    every completion of the measured phase: 635 / 1.204 s = 527.4 IOPS, not 421.9 (508 / 1.204 s);
    1701379 / 300.106 s = 5669.26, not 5668.89."""
    if not path.is_file():
        pytest.skip(f"{path} not here")
    output = read_fio_output(path)
    (record,) = [j for j in output.jobs if (j.host, j.name) == (host, job)]
    assert record[Dir.READ].ios == completed
    assert record[Dir.READ].iops == pytest.approx(completed * 1000 / runtime_ms, rel=1e-12)
    assert fio_iops == pytest.approx(issued * 1000 / runtime_ms, abs=1e-6)  # fio's own figure, for the record
