"""Each fio version's json quirk, read right (iogate.engines.fio.versions); expected values by hand."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import pytest

from iogate.engines.fio import parse
from iogate.engines.fio.output import parse_fio_output
from iogate.engines.fio.versions import FioVersion, parse_version, run_problem
from iogate.errors import EngineError, HostError
from iogate.hosts.preflight import check_host, check_local_fio
from iogate.lab import HostConfig
from iogate.metrics.summary import summary
from iogate.metrics.types import Dir, Direction, JobResult, LatencyStats, RunResult, Sample, Series
from selftests.fake_host import Said

IDLE = {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
        "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0}}


def _report(version: str, read: dict[str, Any], *, name: str = "j", extra: str = "") -> str:
    entry = {"jobname": name, "error": 0, "read": read, "write": IDLE, "trim": IDLE}
    return extra + json.dumps({"fio version": version, "timestamp_ms": 1_000_000, "jobs": [entry]})


def test_fio_3_16_plain_json_without_n_keeps_the_mean() -> None:
    """fio <= 3.17 writes no N: the samples are the direction's completed I/Os, the mean stays."""
    read = {"io_bytes": 26783744, "bw_bytes": 443902, "iops": 108.374629, "runtime": 60337, "total_ios": 6539,
            "clat_ns": {"min": 159272, "max": 1139905836, "mean": 53607647.995565, "stddev": 105302908.182689,
                        "percentile": {"99.000000": 935329792}}}
    job = parse_fio_output(_report("fio-3.16", read), "x").jobs[0]
    assert job["read"].clat.samples == 6539
    assert job["read"].clat.mean_ns == 53607647.995565
    assert job["read"].clat.histogram is None  # plain json: no bins, no percentile computed
    assert job["write"].clat.samples == 0 and not job["write"].active


def test_fio_3_16_json_plus_without_n_counts_its_bins() -> None:
    """json+ without N: the samples are the bins' sum (4), not total_ios (5), and the bins stay."""
    read = {"io_bytes": 20480, "bw_bytes": 20480, "iops": 5.0, "runtime": 1000, "total_ios": 5,
            "clat_ns": {"min": 10, "max": 20, "mean": 12.5, "stddev": 5.0, "bins": {"10": 3, "20": 1}}}
    direction = parse_fio_output(_report("fio-3.16", read), "x").jobs[0]["read"]
    assert direction.clat.samples == 4
    assert direction.clat.mean_ns == 12.5
    histogram = direction.clat.histogram
    assert histogram is not None
    # bins below 64 ns hold one value each; p50: 2 of 4 samples lie in the 10 ns bin; p99 needs 3.96 -> 20 ns.
    assert histogram.percentile_ns(50) == 10 and histogram.percentile_ns(99) == 20
    # No printed list: fio's default one, from the bins (p70: 2.8 of 4 -> 10 ns; p80: 3.2 -> 20 ns).
    output = parse_fio_output(_report("fio-3.16", read), "x")
    table = output.clat_percentiles_ns(output.jobs[0], "read")
    assert len(table) == 17 and table[1.0] == 10 and table[70.0] == 10 and table[80.0] == 20 and table[99.99] == 20


def test_an_all_zero_section_without_n_recorded_nothing() -> None:
    """fio writes zeros for a latency it did not record (disable_lat): no samples, not a 0 ns mean."""
    read = {"io_bytes": 4096, "bw_bytes": 4096, "iops": 1.0, "runtime": 1000, "total_ios": 1,
            "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0},
            "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0}}
    direction = parse_fio_output(_report("fio-3.16", read), "x").jobs[0]["read"]
    assert direction.active and direction.clat.samples == 0 and direction.lat.samples == 0


def test_fio_3_1_without_bw_bytes_gets_fios_own_formula() -> None:
    """fio 3.1 writes no bw_bytes: io_bytes x 1000 // runtime_ms, as fio computes it. The 3.7 client/server
    figures (488804352 bytes in 15005 ms) give 32576098, the bw_bytes fio 3.7 wrote for them."""
    read = {"io_bytes": 488804352, "iops": 7951.016328, "runtime": 15005, "total_ios": 119305,
            "clat_ns": {"min": 864000, "max": 36297000, "mean": 3994084.886371, "stddev": 2336151.242295}}
    direction = parse_fio_output(_report("fio-3.1", read), "x").jobs[0]["read"]
    assert direction.bw_bytes_per_s == 32576098.0
    assert direction.clat.samples == 119305


@pytest.mark.parametrize("version", ["fio-2.1.4", "fio-2.17", "fio-2.18-59-g618e"])
def test_fio_2_is_refused_naming_the_version(version: str) -> None:
    read = {"io_bytes": 17568, "bw": 292, "iops": 73.184143, "runtime": 60013,
            "clat": {"min": 2761, "max": 26160, "mean": 13636.394809, "stddev": 3949.424092}}
    with pytest.raises(EngineError, match=rf"^x: {version} output is not read: fio 2.x writes latency in usec"):
        parse_fio_output(_report(version, read), "x")


def test_an_unnamed_version_with_2x_sections_is_refused() -> None:
    text = json.dumps({"jobs": [{"jobname": "j", "read": {"clat": {"mean": 1.0}}}]})
    with pytest.raises(EngineError, match="fio 2.x latency sections"):
        parse_fio_output(text, "x")


@pytest.mark.parametrize(("number", "name"), [(2, "SIGINT"), (15, "SIGTERM")])
def test_an_interrupted_fio_is_an_error_naming_the_signal(number: int, name: str) -> None:
    read = {"io_bytes": 4096, "bw_bytes": 4096, "iops": 1.0, "runtime": 1000, "total_ios": 1,
            "clat_ns": {"min": 5, "max": 5, "mean": 5.0, "stddev": 0.0, "N": 1}}
    text = _report("fio-3.33", read, extra=f"\nfio: terminating on signal {number}\n")
    with pytest.raises(EngineError, match=rf"fio-3.33: fio was interrupted by {name} \(\"fio: terminating on signal {number}\"\)"):
        parse_fio_output(text, "x")


def test_client_server_hosts_sharing_a_name_are_told_apart_by_port() -> None:
    read = {"io_bytes": 4096, "bw_bytes": 4096, "iops": 1.0, "runtime": 1000, "total_ios": 1,
            "clat_ns": {"min": 5, "max": 5, "mean": 5.0, "stddev": 0.0, "N": 1}}
    entries = [{"jobname": "j", "read": read, "write": IDLE, "trim": IDLE, "hostname": "h", "port": port}
               for port in (8765, 8766)]
    entries.append({"jobname": "All clients", "read": read, "write": IDLE, "trim": IDLE})
    output = parse_fio_output("<h> Starting 1 process\n" + json.dumps({"fio version": "fio-3.7", "client_stats": entries}), "x")
    assert output.client_server and output.hosts == ["h,8765", "h,8766"]
    assert [job["read"].iops for job in output.jobs] == [1.0, 1.0]  # the aggregate is not a host


def test_group_reporting_runtime_is_the_longest_clones_not_the_sum() -> None:
    """fio 3.36, numjobs=2 + group_reporting: job_runtime 240001 for a 120 s run; the read runtime says 120002."""
    entry = {"jobname": "seqread", "job_runtime": 240001, "read": {"runtime": 120002}, "write": {"runtime": 0}}
    assert parse.entry_runtime_ms(entry) == 120002
    data = {"timestamp_ms": 200_000, "jobs": [entry]}
    assert parse.measured_start_ms(data, [], "h") == 200_000 - 120_002
    # After a signal fio 3.33 wrote job_runtime 288990 for a 48170 ms run: the direction's runtime counts.
    assert parse.entry_runtime_ms({"job_runtime": 288990, "read": {"runtime": 48170}, "write": {"runtime": 48168}}) == 48170
    # A job that did no I/O at all keeps its job_runtime (a stall is a span of zeros, never no span).
    assert parse.entry_runtime_ms({"job_runtime": 5000, "read": {"runtime": 0}}) == 5000


def test_job_spans_run_from_the_logged_start_to_the_last_logged_interval_or_runtime() -> None:
    entry = {"jobname": "a", "job_runtime": 240_001, "read": {"runtime": 10_000}}
    data = {"timestamp_ms": 100_000, "jobs": [entry]}
    lines = [Sample(91_010 + 1000 * n, "a", "h", Dir.READ, 5.0, 1e6) for n in range(9)]  # 91 010 .. 99 010
    start_ms = parse.measured_start_ms(data, lines, "h")
    assert start_ms == 90_000  # the report's 100 000 - 10 000 is earlier than 91 010 - 1000
    [span] = parse.job_spans(data, "h", start_ms, lines)
    assert (span.start_ms, span.end_ms) == (90_000, 100_000)  # not 90 000 + 240 001
    late = [*lines, Sample(101_000, "a", "h", Dir.READ, 5.0, 1e6)]
    [span] = parse.job_spans(data, "h", start_ms, late)
    assert span.end_ms == 101_000  # a logged interval is never outside its job's span


def test_summary_leaves_out_a_mean_without_samples() -> None:
    """A direction that did I/O with no latency recorded: no read_mean_ms, never 0.0."""
    read = Direction(Dir.READ, ios=100, iops=100.0, clat=LatencyStats())
    job = JobResult("j", "h", {Dir.READ: read, Dir.WRITE: Direction(Dir.WRITE), Dir.TRIM: Direction(Dir.TRIM)})
    assert summary(RunResult("p", (job,), Series(), 0, 0)) == {"iops": 100.0, "read_iops": 100.0}


def test_versions_compare_by_major_and_minor() -> None:
    assert parse_version("fio-3.28-4-gdeadbeef") == FioVersion(3, 28)
    assert parse_version("fio-2.18-59-g618e") == FioVersion(2, 18)
    assert parse_version("fio-3.7") < FioVersion(3, 16) < FioVersion(3, 33)  # 3.7 is not 3.70
    assert parse_version("nothing") is None


def test_run_problem_names_host_and_version() -> None:
    assert run_problem("h1", "fio-3.7\n") == ("host h1: fio-3.7 is older than the oldest fio IOGate runs, fio-3.16: "
                                              "upgrade fio on this host")
    assert run_problem("h1", "fio-3.16") is None
    assert run_problem("h1", "fio-3.39") is None
    assert "cannot tell the fio version" in str(run_problem("h1", "bash: fio: not found"))


@dataclass
class _Host:
    """What check_host uses of an Initiator: its name, config, a fresh login and one probe round trip."""

    name: str
    fio: str

    @property
    def config(self) -> HostConfig:
        return HostConfig(name=self.name, address="192.0.2.1")

    def probe(self, _timeout_s: float) -> str | None:
        return None  # a fresh login succeeds

    def run(self, _script: str) -> Said:
        return Said(stdout=f"clock_ns={time.time_ns()}\nkernel=6.1\nfio={self.fio}\ncpus=2\n")


def test_preflight_refuses_a_host_with_an_old_fio_naming_host_and_version() -> None:
    check = check_host(_Host("ubuntu18", "fio-3.1"), expected_fio="fio-3.1")  # type: ignore[arg-type]
    assert check.problems == ("host ubuntu18: fio-3.1 is older than the oldest fio IOGate runs, fio-3.16: "
                              "upgrade fio on this host",)
    mismatch = check_host(_Host("h2", "fio-3.16"), expected_fio="fio-3.33")  # type: ignore[arg-type]
    assert mismatch.problems == ("host h2: fio fio-3.16 differs from the controller's fio-3.33 "
                                 "(fio client/server needs the same version on both ends)",)
    assert check_host(_Host("h3", "fio-3.33"), expected_fio="fio-3.33").ok  # type: ignore[arg-type]


def test_local_hosts_get_the_version_check_too() -> None:
    with pytest.raises(HostError, match="preflight failed: host me: fio-3.7 is older"):
        check_local_fio([_Host("me", "")], version="fio-3.7")  # type: ignore[list-item]
    check_local_fio([_Host("me", "")], version="fio-3.33")  # type: ignore[list-item]


def test_percentiles_cli_refuses_fio_2_naming_the_version(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """fio 2.1.4 writes no total_ios: `iogate percentiles` said "no completed I/O" for a file that did I/O."""
    from iogate.metrics.percentiles_cli import main

    read = {"io_bytes": 361984, "bw": 68118, "iops": 133, "runtime": 5314,
            "clat": {"min": 189263, "max": 869891, "mean": 477734.84, "stddev": 92609.34, "percentile": {"99.000000": 765952}}}
    path = tmp_path / "old.json"
    path.write_text(_report("fio-2.1.4", read))
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: fio-2.1.4 output is not read: fio 2.x") and "no completed I/O" not in err
