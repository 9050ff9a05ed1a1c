"""The events tests' checks exist in every shipped spec, and a dead verifier cannot pass for a clean one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from criteria.spec import load_named
from fixtures.events import require_verifier_ran
from iogate.errors import EngineError
from iogate.metrics.types import Dir, Direction, JobResult, RunResult, Series

ROOT = Path(__file__).resolve().parents[2]
EVENT_TESTS = ("tests/test_snapshot_impact.py", "tests/test_dedupe_during_load.py", "tests/test_mirror_impact.py")
CHECK_NAME = re.compile(r'"((?:snapshot|dedupe|replica|mirror)_[a-z_]+(?:_max|_held)|no_errors)"')


def used_checks() -> set[str]:
    return {name for path in EVENT_TESTS for name in CHECK_NAME.findall((ROOT / path).read_text())}


def test_the_scan_finds_the_checks_of_every_test() -> None:
    names = used_checks()
    assert {"snapshot_backend_write_drop_max", "dedupe_targets_held", "replica_sync_drop_max", "no_errors"} <= names


@pytest.mark.parametrize("spec_name", ["poc", "nightly"])
def test_every_check_the_events_tests_use_is_in_the_spec(spec_name: str) -> None:
    family = load_named(spec_name).for_family("events")
    missing = used_checks() - set(family.checks)
    assert not missing, f"criteria/{spec_name}.yaml events family lacks {sorted(missing)}"


def verifier(writes: int, reads: int, error: int = 0) -> RunResult:
    directions = {Dir.WRITE: Direction(Dir.WRITE, ios=writes), Dir.READ: Direction(Dir.READ, ios=reads)}
    jobs = (JobResult("load", "h", {Dir.WRITE: Direction(Dir.WRITE, ios=10_000)}), JobResult("verify", "h", directions, error=error))
    return RunResult("snap", jobs, Series(), 0, 1000)


def test_a_verifier_that_read_back_its_writes_is_accepted() -> None:
    require_verifier_ran(verifier(writes=1539, reads=1536))


def test_a_verifier_killed_after_one_read_is_a_harness_failure() -> None:
    # fio 3.33 with verify reads and a write-only rate dies of SIGFPE: 1024 writes, 1 read, error 0.
    with pytest.raises(EngineError, match="host h: the verify job read back 1 of 1024 written blocks"):
        require_verifier_ran(verifier(writes=1024, reads=1))


def test_a_verifier_that_found_bad_data_is_left_to_no_io_errors() -> None:
    require_verifier_ran(verifier(writes=640, reads=577, error=84))
    require_verifier_ran(verifier(writes=640, reads=3, error=84))
