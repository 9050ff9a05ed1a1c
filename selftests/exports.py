"""Test helpers over iogate.arrays.exports."""

from __future__ import annotations

from iogate.arrays.base import Volume
from iogate.arrays.exports import BlockExport


def block_device(volume: Volume) -> str:
    """The volume's local block device (its BlockExport); fails the test when it has none."""
    export = volume.export_of(BlockExport)
    assert export is not None, f"volume {volume.name} has no BlockExport: {volume.exports}"
    return export.device
