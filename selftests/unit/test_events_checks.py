"""Every events check of a shipped spec is applied by a test, and a dead verifier cannot pass for a clean one."""

from __future__ import annotations

import pytest

from iogate.errors import EngineError
from iogate.events.load import require_verifier_ran
from iogate.judging.events_family import event_checks
from iogate.judging.families import (
    AGAINST_BASELINE,
    DEDUPE,
    MIRROR_BACKEND_WRITE,
    MIRROR_FRONTEND_WRITE,
    NO_ERRORS,
    ON_EVENT,
    ON_TARGETS,
    REPLICA,
    SNAPSHOT,
)
from iogate.judging.spec import load_named
from iogate.metrics.types import Dir, Direction, JobResult, RunResult, Series

# The prefixes the events tests select their checks by (iogate.judging.events_family.event_checks).
PREFIXES = (SNAPSHOT, DEDUPE, REPLICA, MIRROR_FRONTEND_WRITE, MIRROR_BACKEND_WRITE)
JUDGEABLE = ON_EVENT | AGAINST_BASELINE | ON_TARGETS


@pytest.mark.parametrize("spec_name", ["poc", "nightly", "local"])
def test_every_events_check_is_applied_by_a_test_and_can_judge_a_window(spec_name: str) -> None:
    family = load_named(spec_name).for_family("events")
    assert NO_ERRORS in family.checks
    orphans = [c.name for c in family if c.name != NO_ERRORS and not c.name.startswith(PREFIXES)]
    assert not orphans, f"criteria/{spec_name}.yaml events checks no test applies: {orphans}"
    unjudgeable = [c.name for c in family if c.name != NO_ERRORS and c.criterion not in JUDGEABLE]
    assert not unjudgeable, unjudgeable
    for prefix in (SNAPSHOT, DEDUPE):
        assert event_checks(family, prefix), f"criteria/{spec_name}.yaml judges nothing of {prefix}* events"


def test_case_prefixes_keep_cases_apart() -> None:
    family = load_named("poc").for_family("events")
    cases = [f"{SNAPSHOT}{case}_" for case in ("read", "frontend_write", "backend_write")]
    backend = event_checks(family, f"{SNAPSHOT}backend_write_")
    shared = event_checks(family, SNAPSHOT, others=cases)
    assert [c.name for c in backend] == ["snapshot_backend_write_drop_max"]
    assert all(not c.name.startswith(tuple(cases)) for c in shared)


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
