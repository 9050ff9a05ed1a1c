"""A run's cgroup whose last tasks are still exiting is removed once they are gone, not left behind with EBUSY."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import pytest

from iogate.run import resources


def fake_cgroup(tmp_path: Path) -> Path:
    (tmp_path / "cgroup.procs").write_text("")
    group = tmp_path / "iogate-run"
    group.mkdir()
    (group / "cgroup.procs").write_text("")
    return group


def test_an_exiting_task_delays_the_removal_but_does_not_fail_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    group = fake_cgroup(tmp_path)
    tries: list[Path] = []

    def rmdir(self: Path) -> None:
        tries.append(self)
        if len(tries) < 3:  # two tries while the task is still exiting
            raise OSError(errno.EBUSY, "Device or resource busy")
        shutil.rmtree(self)

    monkeypatch.setattr(Path, "rmdir", rmdir)
    assert resources._remove_cgroup({"path": str(group)}) == f"removed cgroup {group}"
    assert len(tries) == 3 and not group.exists()


def test_a_cgroup_busy_past_the_drain_time_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    group = fake_cgroup(tmp_path)

    def rmdir(self: Path) -> None:
        raise OSError(errno.EBUSY, "Device or resource busy")

    monkeypatch.setattr(Path, "rmdir", rmdir)
    monkeypatch.setattr(resources, "CGROUP_DRAIN_S", 0.0)
    with pytest.raises(OSError) as raised:
        resources._remove_cgroup({"path": str(group)})
    assert raised.value.errno == errno.EBUSY
