"""no_io_errors on real fio outputs: a clean run and a run whose verify pass found corrupted blocks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from iogate.arrays.base import Volume
from iogate.engines.base import with_targets
from iogate.engines.fio.parse import load_json, parse_jobs
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.hosts.connectors.base import Connection
from iogate.judging import no_io_errors
from iogate.lab import DeviceIdentity
from iogate.metrics.types import JobResult, JobTarget, RunResult, Series

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"


def real_run(name: str) -> RunResult:
    data = load_json((DATA / name).read_text(), name)
    return RunResult(name, tuple(parse_jobs(data, "localhost")), Series(), 0, 0)


def test_clean_run_passes() -> None:
    verdict = no_io_errors.evaluate(real_run("randrw.json"), no_io_errors.Params())
    assert verdict.passed and verdict.measured == 0 and "2 jobs checked" in verdict.detail


def test_verify_failure_fails_and_names_the_job_and_errno() -> None:
    verdict = no_io_errors.evaluate([real_run("randrw.json"), real_run("verify_fail.json")], no_io_errors.Params())
    assert not verdict.passed and verdict.measured == 1
    assert "localhost/w on a target the engine did not record: error 84 (EILSEQ" in verdict.detail
    assert verdict.evidence[0]["job"] == "w"


def test_an_error_names_host_job_device_volume_and_errno() -> None:
    """The text a user reads when a LUN fails under load: where (host, job, device, volume), then what."""
    job = replace(real_run("verify_fail.json").jobs[0], error=5, target=JobTarget("/dev/loop3", "v1"))
    verdict = no_io_errors.evaluate([job], no_io_errors.Params())
    assert verdict.detail == "1 jobs checked; errors: localhost/w on /dev/loop3 (volume v1): error 5 (EIO: Input/output error)"
    assert verdict.evidence[0] == {
        "job": "w",
        "host": "localhost",
        "target": "/dev/loop3",
        "volume": "v1",
        "error": 5,
        "meaning": "EIO: Input/output error",
    }


def test_an_idle_job_names_its_target() -> None:
    job = _idle(replace(real_run("randrw.json").jobs[0], target=JobTarget("/mnt/iogate/v2/data", "v2")))
    detail = no_io_errors.evaluate([job], no_io_errors.Params()).detail
    assert f"did no I/O: localhost/{job.name} on /mnt/iogate/v2/data (volume v2)" in detail


def _connection(host: str, device: str | None, filename: str, volume: str) -> Connection:
    return Connection("p", host, Volume(volume, 64 << 20, DeviceIdentity(serial=volume)), filename, device)


def test_engines_attach_each_jobs_target_from_the_plan() -> None:
    """with_targets (every engine's last step): the device, else the file (NFS), and the volume, by host and job name."""
    jobs = real_run("randrw.json").jobs  # two jobs on localhost
    spec = WorkloadSpec("w", read_pct=50, runtime_s=1)
    plan = RunPlan(
        "p",
        (
            JobSpec(jobs[0].name, spec, _connection("localhost", "/dev/loop3", "/dev/loop3", "v1")),
            JobSpec(jobs[1].name, spec, _connection("localhost", None, "/mnt/iogate/v2/data", "v2")),
        ),
    )
    assert [job.target for job in with_targets(plan, jobs)] == [JobTarget("/dev/loop3", "v1"), JobTarget("/mnt/iogate/v2/data", "v2")]
    elsewhere = [replace(job, host="h9") for job in jobs]  # same names, another host: not the plan's jobs
    assert [job.target for job in with_targets(plan, elsewhere)] == [None, None]


def test_verify_failures_from_another_checker_count() -> None:
    verdict = no_io_errors.evaluate(real_run("randrw.json"), no_io_errors.Params(), verify_failures=2)
    assert not verdict.passed and verdict.measured == 2 and "2 verify failures" in verdict.detail


def test_single_jobs_and_an_allowance() -> None:
    jobs = real_run("verify_fail.json").jobs
    assert not no_io_errors.evaluate(jobs, no_io_errors.Params()).passed
    assert no_io_errors.evaluate(jobs, no_io_errors.Params(max_errors=1)).passed


def _idle(job: JobResult) -> JobResult:
    return replace(job, directions={d: replace(v, ios=0, io_bytes=0) for d, v in job.directions.items()})


def test_job_without_io_fails_even_with_an_allowance() -> None:
    clean = real_run("randrw.json").jobs
    verdict = no_io_errors.evaluate([clean[0], _idle(clean[1])], no_io_errors.Params(max_errors=5))
    assert not verdict.passed and f"did no I/O: localhost/{clean[1].name}" in verdict.detail


def test_no_jobs_fails() -> None:
    verdict = no_io_errors.evaluate([], no_io_errors.Params())
    assert not verdict.passed and "no jobs to check" in verdict.detail
