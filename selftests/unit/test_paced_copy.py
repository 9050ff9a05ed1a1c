"""The local array's replica sync: every byte copied, holes as zeros, never faster than its rate.

A rate is a lower bound on the copy's duration (a slow machine only takes longer), so the
timing assertion cannot flake.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from iogate.arrays.local import paced_copy

MIB = 1 << 20


def test_every_byte_is_copied_and_holes_read_as_zeros(tmp_path: Path) -> None:
    source = tmp_path / "volume.img"
    with source.open("wb") as out:
        out.truncate(4 * MIB)  # sparse: a hole everywhere ...
        out.seek(MIB + 4096)
        out.write(b"iogate" * 100)  # ... but here
    target = tmp_path / "replica.img"
    assert paced_copy(source, target, bytes_per_s=1024 * MIB) == 4 * MIB
    assert target.read_bytes() == source.read_bytes()
    assert target.stat().st_blocks * 512 >= 4 * MIB  # written out, not sparse like the source


def test_the_copy_never_runs_faster_than_its_rate(tmp_path: Path) -> None:
    source = tmp_path / "volume.img"
    source.write_bytes(os.urandom(3 * MIB))
    started = time.monotonic()
    paced_copy(source, tmp_path / "replica.img", bytes_per_s=4 * MIB, chunk_bytes=MIB // 4)
    # 3 MiB at 4 MiB/s: at least 0.75 s on any machine.
    assert time.monotonic() - started >= 0.75
