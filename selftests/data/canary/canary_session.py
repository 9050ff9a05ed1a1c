"""Run by selftests/integration/test_canary_secret.py as a whole pytest session: each test pushes the
canary secret towards an output (hook failure, HTTP URL, CHAP command error, log, print, assertion,
attachment, results store); none of it may show the secret."""

from __future__ import annotations

import logging
import os

import allure
import pytest

from fixtures.session import Suite
from iogate.arrays.static import StaticArray
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab
from iogate.lab.secrets import resolve
from iogate.results.store import ResultsStore, RunPoint
from iogate.run import Run
from iogate.verdict import Unit, Verdict


@pytest.fixture
def array(lab: Lab, run: Run) -> StaticArray:
    return StaticArray(lab, run)


def test_command_hook_failure(array: StaticArray) -> None:
    array.dedupe_run()


def test_http_hook_with_userinfo_url(array: StaticArray) -> None:
    volume = array.create_volume("v1", 1 << 30, export="iscsi")
    array.snapshot_create(volume, "s1")


def test_chap_password_in_failing_host_command(lab: Lab) -> None:
    password = resolve(lab.protocol("iscsi").options["chap_password"])
    host = Initiator.from_config(lab.hosts[0])
    host.run("echo node.session.auth.password=%s >&2; false", password, secrets=[password])


def test_log_print_assert_attach() -> None:
    canary = os.environ["IOGATE_CANARY"]
    logging.getLogger("iogate.canary").warning("array password is %s", canary)
    print(f"stdout carries {canary}")
    allure.attach(f"attachment with {canary}", name="canary attachment")
    assert canary == "something else"


def test_verdict_detail_stored(suite: Suite, run: Run) -> None:
    canary = os.environ["IOGATE_CANARY"]
    verdict = Verdict("no_io_errors", False, 1, 0, Unit.ERRORS, detail=f"hook output quoted {canary}")
    point = RunPoint.from_verdicts(run_id=run.run_id, lab="canary", array="canary-array", test_id="canary::store", params={},
                                   metrics={}, verdicts=[verdict])
    ResultsStore(suite.results_db).add(point)
