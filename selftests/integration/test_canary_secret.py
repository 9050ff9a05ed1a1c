"""A canary secret pushed through hooks, CHAP, failures, logs and attachments appears nowhere IOGate writes."""

from __future__ import annotations

import os
import secrets as random_secrets
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "selftests" / "data" / "canary"


def test_canary_secret_appears_nowhere(tmp_path: Path) -> None:
    canary = f"Canary{random_secrets.token_hex(8)}!$x"  # '!' and '$' so URL-encoded and shell-escaped forms differ
    file_canary = f"FileCanary{random_secrets.token_hex(8)}"
    secret_file = tmp_path / "token"
    secret_file.write_text(file_canary + "\n")
    work = tmp_path / "work"
    lab = tmp_path / "lab.yaml"
    lab.write_text((DATA / "lab.yaml").read_text().replace("WORKDIR", str(work)).replace("CANARY_FILE", str(secret_file)))
    outputs = tmp_path / "out"
    outputs.mkdir()
    # Without the end-of-session scrub: every writer must redact at the source.
    env = {**os.environ, "IOGATE_CANARY": canary, "IOGATE_SELFTEST_NO_FINAL_SCRUB": "1"}
    session = subprocess.run(
        [sys.executable, "-m", "pytest", str(DATA / "canary_session.py"), "--lab", str(lab), "-v", "-rA", "--tb=long", "-l",
         "--alluredir", str(outputs / "allure"), "--junitxml", str(outputs / "junit.xml"),
         "--results-db", str(outputs / "results.sqlite"), "-o", "log_cli=true", "-o", "log_cli_level=INFO",
         "-p", "no:cacheprovider"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env,
    )
    exported = subprocess.run([sys.executable, "-m", "iogate", "export", "--store", str(outputs / "results.sqlite"),
                               "--out", str(outputs / "exports")], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert exported.returncode == 0, exported.stderr
    streams = session.stdout + session.stderr + exported.stdout + exported.stderr
    # The session really pushed the secret at every output: four failures, each with its redacted error.
    assert "4 failed, 1 passed" in streams, streams[-4000:]
    assert "`dedupe` hook failed" in streams and "`snapshot_create` hook failed" in streams
    assert "node.session.auth.password=***" in streams and "***" in (outputs / "junit.xml").read_text()
    assert list((outputs / "allure").glob("*-result.json")) and list(work.glob("runs/*/ledger.jsonl"))
    assert list((outputs / "exports").rglob("*.csv"))

    # The stem catches partial leaks too (a shell expanding the '$x' tail away).
    forms = {canary, quote(canary, safe=""), quote(canary), file_canary, canary[:-3]}
    leaks = [f"captured streams: {form!r}" for form in forms if form in streams]
    for path in [*tmp_path.rglob("*")]:
        if path.is_file() and path != secret_file:
            data = path.read_bytes()
            leaks += [f"{path}: {form!r}" for form in forms if form.encode() in data]
    assert leaks == []
