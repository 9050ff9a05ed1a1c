"""`labvm down` races the `labvm up --die-with-caller` that waits on qemu: both remove the state file.

Seen at the end of an emulated run (2026-12-06): `labvm down` killed qemu through the ledger, the waiting
`up` saw qemu gone and removed labvm.json first, and `down` then died of FileNotFoundError, so
emulated_run reported a failure although everything was down. Removing what is already removed is done.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iogate.labs.labvm import cli


def test_down_is_done_when_the_waiting_up_removed_the_state_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "ledger.jsonl").write_text("")
    state = tmp_path / "labvm.json"
    state.write_text(json.dumps({"run_dir": str(run_dir)}))

    def release_and_race(ledger: object) -> list[str]:
        state.unlink()  # the waiting `up` noticed qemu end
        return ["killed qemu lab VM pid 1"]

    monkeypatch.setattr(cli, "release_all", release_and_race)
    assert cli._down(state) == 0
    assert not state.exists()
