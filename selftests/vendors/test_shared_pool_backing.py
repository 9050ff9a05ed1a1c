"""Several emulated arrays on one pool in the guest (emulate.py pure,ontap,huawei), without a guest: the
scripts each backing would run, recorded. The arrays share the pool's LinuxTarget (its VG, thin pool and
nvmet port), and the same volume name on two arrays makes two LVs and two LIO backstores, never one."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.lab import load_lab
from iogate.run import Run
from selftests.vendors.guest_backing import Desired, GuestBacking, VolumeSpec

pytestmark = pytest.mark.vendors
LABVM = Path(__file__).resolve().parents[2] / "labs" / "labvm.yaml"
WWN = "naa.624a9370" + "0" * 23 + "1"


def test_two_arrays_on_one_pool_share_its_target_and_never_an_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lab, run = load_lab(LABVM), Run.start(tmp_path / "run", "shared-pool")
    pool = GuestBacking(lab, run)
    scripts: list[str] = []
    monkeypatch.setattr(pool.target, "sh", lambda script, timeout_note="": scripts.append(script) or "")
    monkeypatch.setattr(pool.target, "_nvme_port_id", "7")  # what the pool's setup found free
    pure = GuestBacking(lab, run, pool=pool, prefix="emu-pure-")
    ontap = GuestBacking(lab, run, pool=pool, prefix="emu-ontap-")
    assert pure.target is pool.target and ontap.target is pool.target and pure.vg == pool.vg
    pure.open_array("iqn.2010-06.com.purestorage:a", "nqn.2010-06.com.purestorage:a")
    ontap.open_array("iqn.1992-08.com.netapp:b", "nqn.1992-08.com.netapp:b")
    assert sum("/nvmet/ports/7/subsystems/" in s for s in scripts) == 2  # both subsystems on the pool's port
    for backing in (pure, ontap):
        backing.sync(Desired(volumes={"v1": VolumeSpec(64 << 20, wwn=WWN)}))
    made = [s for s in scripts if s.startswith("lvcreate")]
    assert [s.split(" -n ")[1].split()[0] for s in made] == ["emu-pure-v1", "emu-ontap-v1"], made
    assert any("iblock_0/emu-pure-v1 " in s for s in scripts) and any("iblock_0/emu-ontap-v1 " in s for s in scripts)
    journalled = [entry.describe() for entry in run.ledger.open_entries()]  # each undone on its own at cleanup
    assert [d for d in journalled if "emulated volume v1" in d and "emu-pure-v1" in d], journalled
    assert [d for d in journalled if "emulated volume v1" in d and "emu-ontap-v1" in d], journalled
