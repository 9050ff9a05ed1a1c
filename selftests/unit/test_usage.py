"""iogate.hosts.usage: why a device is in use, from the facts the probe prints."""

from iogate.hosts.usage import in_use


def _facts(**lines: str) -> dict[str, str]:
    return {"device": "/dev/sdb", **lines}


def test_free_device_has_no_reason() -> None:
    assert in_use(_facts()) == []


def test_lvm_and_md_holders_named() -> None:
    reasons = in_use(_facts(holder="sdb dm-3 vg0-data\nsdb1 md127"), destructive=True)
    assert reasons == [
        "it is held by dm-3 (vg0-data) (LVM, md or device-mapper)",
        "its partition sdb1 is held by md127 (LVM, md or device-mapper)",
    ]


def test_inactive_pv_signature_refused_unless_destructive() -> None:
    facts = _facts(fs="sdb LVM2_member")
    assert in_use(facts) == ["it carries a LVM2_member signature (mark the volume `destructive: true` if it may be overwritten)"]
    assert in_use(facts, destructive=True) == []


def test_partition_table_without_file_systems_is_free() -> None:
    assert in_use(_facts(pttype="gpt")) == []
    assert "gpt partition table with file systems on sdb2 (xfs)" in in_use(_facts(pttype="gpt", fs="sdb2 xfs"))[0]


def test_root_mount_named_as_root() -> None:
    assert in_use(_facts(mount="sdb2 /\nsdb2 /home"), destructive=True) == [
        "its partition sdb2 carries the root file system (/)",
        "its partition sdb2 carries a file system mounted at /home",
    ]
