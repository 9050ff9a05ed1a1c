"""Every malformed lab of the committed corpus is refused with file:line, before anything is provisioned.

Each file in selftests/data/labs_bad/ says in its first lines what is wrong
(`# wrong:`) and which fragment the error must carry (`# expect:`). A few go
through a real pytest session too: a usage error, no traceback, no workdir.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.errors import LabFileError
from iogate.lab import load_lab

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "selftests" / "data" / "labs_bad").glob("*.yaml"))
WORKDIR = Path("/var/tmp/iogate-labs-bad")  # what every corpus lab names; must never appear


def _expected(path: Path) -> str:
    match = re.search(r"^# expect: (.+)$", path.read_text(), re.MULTILINE)
    assert match, f"{path.name} lacks an `# expect:` line"
    return match.group(1).strip()


def _fs_holds(size_bytes: int) -> bool:
    with open(os.open("/var/tmp", os.O_TMPFILE | os.O_RDWR, 0o600), "wb") as probe:
        try:
            probe.truncate(size_bytes)
        except OSError:
            return False
    return True


@pytest.fixture(autouse=True)
def _corpus_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """The vendor labs of the corpus name ${env:IOGATE_LABS_BAD_SECRET}: set, so each is refused for its own mistake."""
    monkeypatch.setenv("IOGATE_LABS_BAD_SECRET", "labs-bad-secret-value")


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 70


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_refused_with_file_and_line(path: Path) -> None:
    if path.stem == "pool_size_900tib" and _fs_holds(900 << 40):
        load_lab(path)  # valid where the file system can hold it (xfs, btrfs): it loads
        return
    with pytest.raises(LabFileError) as caught:
        load_lab(path)
    message = str(caught.value)
    assert re.search(rf"^{re.escape(str(path))} line \d+: ", message, re.MULTILINE), message
    assert _expected(path) in message, message
    assert not WORKDIR.exists()


@pytest.mark.parametrize("name", ["dup_protocols", "volumes_exceed_pool", "workdir_root", "pool_size_beyond_any_fs"])
def test_pytest_session_refuses_without_traceback(name: str) -> None:
    path = ROOT / "selftests" / "data" / "labs_bad" / f"{name}.yaml"
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/test_baseline.py", "--lab", str(path), "-q"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 4, done.stdout + done.stderr
    assert f"{path} line" in done.stderr and _expected(path) in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert not WORKDIR.exists()
