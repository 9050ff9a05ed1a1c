"""Results store schema 3: one run context per run (what judged and drove it), migrated in safely."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from iogate.results.run_context import run_context
from iogate.results.store import ResultsStore, RunContext, StoreError

CONTEXT = RunContext(spec="criteria/poc.yaml", spec_sha256="aa11", profile="smoke", engine="fio", engine_version="fio-3.36",
                     environment={"host_kernel": "6.8.0", "fio_version": "fio-3.36"})
SCHEMA_2 = """
CREATE TABLE run_points (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, lab TEXT NOT NULL, array_name TEXT NOT NULL,
    test_id TEXT NOT NULL, params_json TEXT NOT NULL, metrics_json TEXT NOT NULL, verdicts_json TEXT NOT NULL,
    started_at REAL NOT NULL, suite_version TEXT NOT NULL, passed INTEGER, measurement_invalid TEXT
);
INSERT INTO run_points (run_id, lab, array_name, test_id, params_json, metrics_json, verdicts_json, started_at,
    suite_version, passed) VALUES ('old', 'l', 'a', 't', '{}', '{}', '[]', 1.0, '0.1', 0);
PRAGMA user_version = 2;
"""


def test_a_run_context_reads_back_as_written(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "r.sqlite")
    store.set_run_context("r1", CONTEXT)
    store.set_run_context("r1", CONTEXT)  # a second xdist worker of the same run: no change, no error
    assert store.run_context("r1") == CONTEXT
    assert store.run_context("r2") is None


def test_another_context_for_a_recorded_run_is_refused(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "r.sqlite")
    store.set_run_context("r1", CONTEXT)
    with pytest.raises(StoreError, match=r"run r1 already records another context: profile smoke \(recorded\), full \(now\)"):
        store.set_run_context("r1", RunContext(**{**CONTEXT.__dict__, "profile": "full"}))
    assert store.run_context("r1") == CONTEXT


def test_a_field_not_yet_known_is_filled_by_a_later_worker(tmp_path: Path) -> None:
    """An xdist worker that records before its hosts reported the engine version leaves it to the next one."""
    store = ResultsStore(tmp_path / "r.sqlite")
    store.set_run_context("r1", RunContext(**{**CONTEXT.__dict__, "engine_version": None}))
    assert store.run_context("r1").engine_version is None  # type: ignore[union-attr]
    store.set_run_context("r1", CONTEXT)
    store.set_run_context("r1", RunContext(**{**CONTEXT.__dict__, "engine_version": None}))  # never unset again
    assert store.run_context("r1") == CONTEXT


def test_a_schema_2_store_gains_the_table_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA_2)
    store = ResultsStore(path)
    ResultsStore(path)  # opening a migrated store again changes nothing
    assert [p.run_id for p in store.points("old")] == ["old"]
    assert store.run_context("old") is None  # never recorded: a bake-off refuses it, it is not made up
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (5,)
    store.set_run_context("new", CONTEXT)
    assert store.run_context("new") == CONTEXT


def test_a_session_context_folds_host_names_and_finds_the_engine_version(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"abc")
    facts = {"host.h1.kernel": "6.8.0", "host.h2.kernel": "6.1.0", "host.h1.fio": "fio-3.36", "host.h2.fio": "fio-3.36",
             "host.h1.clock_offset_ms": "+0.4", "array.model": "X1"}
    context = run_context(spec_path=spec, profile="smoke", engine="fio", facts=facts)
    # sha256("abc"), the FIPS 180-2 test vector
    assert context.spec_sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert context.engine_version == "fio-3.36"
    assert dict(context.environment) == {"array.model": "X1", "host fio": "fio-3.36", "host kernel": "6.1.0, 6.8.0"}


def test_an_engine_version_hosts_disagree_on_is_not_recorded(tmp_path: Path) -> None:
    facts = {"host.h1.fio": "fio-3.36", "host.h2.fio": "fio-3.16"}
    context = run_context(spec_path=tmp_path / "gone.yaml", profile="smoke", engine="fio", facts=facts)
    assert context.engine_version is None and context.spec_sha256 is None


def test_a_probe_placeholder_is_not_a_version(tmp_path: Path) -> None:
    for placeholder in ("unknown", "none", "missing"):
        facts = {"host.h1.fio": placeholder, "host.h2.fio": placeholder}
        assert run_context(spec_path=tmp_path / "s.yaml", profile="smoke", engine="fio", facts=facts).engine_version is None
