"""The backed fakes of the emulated VAST, Huawei and Hitachi arrays, without a guest: the state each one
asks the guest for (`Desired`) follows what the driver made through the vendor API, and carries the
identity the driver reported (the device the host will match), so the lab VM tier fails only on the
guest side. The guest side is exercised by selftests/vendors/behaviour (make vendor-behaviour)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from iogate.arrays import vendor_base
from iogate.hosts.identity import normalized
from iogate.run import Run
from selftests.vendors.behaviour.conftest import VENDORS
from selftests.vendors.conftest import INITIATORS, make_lab
from selftests.vendors.guest_backing import Desired, lio_wwn_parts
from selftests.vendors.server import ContractServer

pytestmark = pytest.mark.vendors
EMULATED = ["vast", "huawei", "hitachi"]


class RecordingBacking:
    """The guest side as the fakes see it: the last Desired, and the copies asked for."""

    def __init__(self, iqn: str, nqn: str) -> None:
        self.iqn, self.nqn = iqn, nqn
        self.state = Desired()
        self.copies: list[tuple[str, str]] = []

    def sync(self, desired: Desired) -> None:
        self.state = desired

    def overwrite(self, vol: str, source: str) -> None:
        assert source in self.state.snapshots or source in self.state.volumes, (vol, source)
        self.copies.append((vol, source))

    def replica_done(self, rep: str) -> bool:
        return True


@pytest.mark.parametrize("name", EMULATED)
def test_the_guest_is_asked_for_what_the_driver_made_with_the_identity_it_reported(
    name: str, tmp_path: Path, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    vendor = VENDORS[name]()
    pytest.importorskip(vendor.sdk, reason="vendor SDK not installed: pip install -r requirements-vendors.txt")
    backing = RecordingBacking(vendor.target_iqn, vendor.subsys_nqn)
    fake = vendor.make_fake(canary, backing)
    monkeypatch.setattr(vendor_base, "read_initiator_ids", lambda lab: INITIATORS)
    with ContractServer(fake, vendor.contract(), tmp_path) as server:
        lab = make_lab(tmp_path, name, vendor.options(server), connector=vendor.protocol)
        driver: Any = getattr(importlib.import_module(f"iogate.arrays.{name}"), vendor.driver_class)(lab, Run.start(tmp_path / "w", "t"))
        driver.setup()
        assert "emulated" in " ".join(driver.facts().values()), driver.facts()
        volume = driver.create_volume("bh0", 64 << 20, export=vendor.protocol)
        (key, spec), = backing.state.volumes.items()
        assert spec.size_bytes == 64 << 20
        if vendor.protocol == "iscsi":
            assert spec.wwn and normalized(spec.wwn) == normalized(volume.identity.wwn or "")
            lio_wwn_parts(spec.wwn)  # LIO can show it: NAA 6, 32 hex digits
            assert list(backing.state.iscsi_maps) == [(key, INITIATORS["h1"]["iscsi"])]
            assert backing.state.iscsi_hosts == {INITIATORS["h1"]["iscsi"]}
            export = volume.exports[0]
            assert export.target_iqn == vendor.target_iqn and export.portal == "127.0.0.1:3260", export
        else:
            assert spec.nguid and normalized(spec.nguid) == normalized(volume.identity.nguid or "")
            assert list(backing.state.nvme_maps) == [key]
            assert backing.state.nvme_hosts == {INITIATORS["h1"]["nvme-tcp"]}
            export = volume.exports[0]
            assert export.subsys_nqn == vendor.subsys_nqn and export.traddr == "127.0.0.1", export
        snapshot = driver.snapshot_create(volume, "s1")
        assert list(backing.state.snapshots.values()) == [key]
        if "RESTORE" in {c.name for c in driver.capabilities}:
            driver.snapshot_restore(volume, snapshot)
            assert backing.copies == [(key, next(iter(backing.state.snapshots)))]
        driver.snapshot_delete(snapshot)
        assert backing.state.snapshots == {}
        driver.teardown()
        assert backing.state == Desired() and vendor.leftovers(fake) == {}
        assert server.violations == [], "\n".join(server.violations)
