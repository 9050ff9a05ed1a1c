"""The guard's size rule on its own: the facts a probe returns decide, and a size it cannot read refuses."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest

from iogate.arrays.base import Volume
from iogate.errors import GuardRefused
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import require_volume_size
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity

HOST = cast(Initiator, SimpleNamespace(name="h1"))
VOLUME = Volume(name="vol1", size_bytes=268435456, identity=DeviceIdentity(wwn="naa.6001405abc"))
CONNECTION = Connection.to_device("iscsi", "h1", VOLUME, "/dev/sdb")


@pytest.mark.parametrize("facts, shown", [({}, "nothing"), ({"size_bytes": ""}, "nothing"), ({"size_bytes": "n/a"}, "n/a")])
def test_size_unreadable_is_refused(facts: dict[str, str], shown: str) -> None:
    with pytest.raises(GuardRefused) as refused:
        require_volume_size(HOST, CONNECTION, facts)
    assert str(refused.value) == f"refusing /dev/sdb on host h1: its size in sysfs reads {shown}"


def test_device_one_mib_short_is_refused_naming_the_gap() -> None:
    # 268435456 - 267386880 = 1048576: md's v1.2 data offset, the lab VM's old short LUN.
    with pytest.raises(GuardRefused, match=r"holds 267386880 bytes, less than the 268435456 bytes of volume vol1.*last 1048576 bytes"):
        require_volume_size(HOST, CONNECTION, {"size_bytes": "267386880"})


@pytest.mark.parametrize("size", ["268435456", "268435457"])
def test_device_at_or_above_the_volume_size_passes(size: str) -> None:
    require_volume_size(HOST, CONNECTION, {"size_bytes": size})
