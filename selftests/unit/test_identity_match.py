"""identity.matches on the sysfs shapes vendors' devices take (a match must be exact, a near miss refused)."""

from __future__ import annotations

from iogate.hosts.identity import matches
from iogate.lab import DeviceIdentity

ONTAP_NS_UUID = "0b5b4c2e-7e0a-4a4c-9a1e-3f7d2c1b9e01"


def test_an_nvme_namespace_shown_as_uuid_wwid_matches_its_uuid() -> None:
    # Linux: /sys/block/nvmeXnY/wwid = "uuid.<uuid>" when the namespace has a UUID (ONTAP).
    assert matches({"wwid": f"uuid.{ONTAP_NS_UUID}"}, DeviceIdentity(nguid=ONTAP_NS_UUID))


def test_another_uuid_is_refused() -> None:
    assert not matches({"wwid": f"uuid.{ONTAP_NS_UUID[:-1]}2"}, DeviceIdentity(nguid=ONTAP_NS_UUID))


def test_a_pure_wwn_matches_the_scsi_wwid() -> None:
    wwn = "naa.624a9370f4252922ade248cf000113e6"
    assert matches({"device/wwid": wwn}, DeviceIdentity(wwn=wwn))
    assert not matches({"device/wwid": "naa.6001405f4252922ade248cf000113e6"}, DeviceIdentity(wwn=wwn))
