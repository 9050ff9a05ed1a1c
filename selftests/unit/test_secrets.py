"""iogate.lab.secrets: references, embedded references, the forms a secret takes, short secrets refused."""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import quote

import pytest

from iogate.errors import ArrayError
from iogate.lab import secrets


def test_env_and_file_references(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("IOGATE_T_PW", "envpass-123")
    (tmp_path / "pw").write_text("filepass-456\n")
    assert secrets.resolve("${env:IOGATE_T_PW}") == "envpass-123"
    assert secrets.resolve(f"${{file:{tmp_path / 'pw'}}}") == "filepass-456"
    assert secrets.redact("a envpass-123 b filepass-456") == "a *** b ***"


def test_embedded_references_resolved_with_escape(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IOGATE_T_EMB", "p@ss/wd$1")
    text = secrets.resolve_embedded("https://u:${env:IOGATE_T_EMB}@array/api", escape=lambda v: quote(v, safe=""))
    assert text == "https://u:p%40ss%2Fwd%241@array/api"
    assert secrets.redact(text) == "https://u:***@array/api"  # the URL-encoded form is known too


def test_short_secret_refused_not_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IOGATE_T_SHORT", "pw")
    with pytest.raises(secrets.SecretError, match="resolves to 2 character"):
        secrets.resolve("${env:IOGATE_T_SHORT}")
    with pytest.raises(secrets.SecretError):
        secrets.register("abc")


def test_unset_reference_names_reference_only() -> None:
    with pytest.raises(secrets.SecretError, match=r"\$\{env:IOGATE_T_NEVER\}.*not set"):
        secrets.resolve("${env:IOGATE_T_NEVER}")


def test_inline_credentials_registered() -> None:
    secrets.register_inline("curl -u admin:inlinepw-77 https://root:urlpw-88@array/x -H 'Authorization: Bearer tok-99999'")
    assert secrets.redact("inlinepw-77 urlpw-88 tok-99999") == "*** *** ***"


def test_errors_are_redacted_when_made() -> None:
    secrets.register("made-secret-1")
    assert str(ArrayError("hook `x --pw made-secret-1` failed")) == "hook `x --pw ***` failed"


def test_log_records_redacted(caplog: pytest.LogCaptureFixture) -> None:
    secrets.register("log-secret-2")
    secrets.install_log_redaction()
    with caplog.at_level(logging.INFO):
        logging.getLogger("iogate.test").info("token %s", "log-secret-2")
    assert "log-secret-2" not in caplog.text and "token ***" in caplog.text


def test_transport_password_reference_resolved_and_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    from iogate.hosts.initiator import Initiator
    from iogate.lab import HostConfig

    monkeypatch.setenv("IOGATE_T_SSH", "ssh-pass/word")
    host = Initiator.from_config(HostConfig(name="h", transport="paramiko://root:${env:IOGATE_T_SSH}@192.0.2.1"))
    assert host.host.backend.host.password == "ssh-pass/word"  # testinfra decodes the percent-encoded form
    assert secrets.redact("paramiko://root:ssh-pass%2Fword@192.0.2.1") == "paramiko://root:***@192.0.2.1"
