"""The half-done provisioning case each vendor driver's contract tests run: the volume is made, then its
host mapping call fails (the array did it and the answer was lost, the array refused it, or no answer
came). The error must name the call and the objects, the write must not be repeated, and the journal's
cleanup (what `iogate cleanup` runs) must leave nothing on the array and no open ledger entry.

A vendor's test module takes the test as one assignment, so the case is written once:

    test_a_failed_mapping_names_the_call_is_not_repeated_and_leaks_nothing = failed_mapping_test(
        make_driver, r"/connections$", error=r"POST /connections volume \\S+vol0 host \\S+h1-iscsi",
        leftovers=lambda fake: {"volumes": fake.volumes, ...})

It uses the module's fixtures tmp_path, server, array (the fake), run and monkeypatch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from iogate.errors import ArrayError
from iogate.run import Run
from iogate.run.resources import release_all
from selftests.vendors.server import ContractServer, Fault

MakeDriver = Callable[..., Any]  # (tmp_path, server, run, monkeypatch, **options) -> the vendor driver, set up


def failed_mapping_test(
    make_driver: MakeDriver, path_regex: str, *, error: str, leftovers: Callable[[Any], dict[str, Any]]
) -> Callable[..., None]:
    """The test, parametrized over the three ways the mapping call (POST `path_regex`) fails.

    `error`: a regex of what the ArrayError says before ": <HTTP 503 | HTTP 500 | no answer: timed out>"
    (the call and its objects); `leftovers(fake)`: what the fake array holds by kind (all empty: nothing).
    """

    @pytest.mark.parametrize(
        ("fault", "says"),
        [
            (Fault("POST", path_regex, status=503, after_app=True), "HTTP 503"),  # made on the array, the answer lost
            (Fault("POST", path_regex, status=500), "HTTP 500"),  # refused by the array
            (Fault("POST", path_regex, hang=True), "no answer: timed out"),
        ],
        ids=["lost-answer", "refused", "timeout"],
    )
    def test(
        tmp_path: Path, server: ContractServer, array: Any, run: Run, monkeypatch: pytest.MonkeyPatch, fault: Fault, says: str
    ) -> None:
        driver = make_driver(tmp_path, server, run, monkeypatch, timeout_s=5)  # the timeout case: any timeout will do
        server.inject(fault)
        with pytest.raises(ArrayError, match=rf"{error}: {says}"):
            driver.create_volume("vol0", 1 << 30)
        sent = [c for c in server.calls() if c.startswith(f"{fault.method} ") and re.search(fault.path_regex, c.split(" ", 1)[1])]
        assert len(sent) == 1, sent  # a write is not repeated
        release_all(run.ledger)  # what `iogate cleanup` runs on the journal
        assert {kind: left for kind, left in leftovers(array).items() if left} == {}
        assert run.ledger.open_entries() == []

    return test
