"""no_io_errors on real fio outputs: a clean run and a run whose verify pass found corrupted blocks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from criteria import no_io_errors
from iogate.engines.fio.parse import load_json, parse_jobs
from iogate.metrics.types import JobResult, RunResult, Series

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
    assert "localhost/w error 84 (EILSEQ" in verdict.detail
    assert verdict.evidence[0]["job"] == "w"


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
