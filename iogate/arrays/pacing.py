"""Background work of the local array at a byte rate: the dedupe pass's reads and a replica's copy.

An array runs its data services at a rate (a replication link, a dedupe QoS), not at the full speed of
its disks; the local array's services do the same, so their impact on the load is the lab's setting.
"""

from __future__ import annotations

import time


class Pacer:
    """Keeps the bytes moved at or below `bytes_per_s` since it was made: `account` sleeps while ahead."""

    def __init__(self, bytes_per_s: int) -> None:
        self.bytes_per_s = bytes_per_s
        self.moved_bytes = 0
        self.started = time.monotonic()

    def account(self, length: int) -> None:
        self.moved_bytes += length
        ahead_s = self.moved_bytes / self.bytes_per_s - (time.monotonic() - self.started)
        if ahead_s > 0:
            time.sleep(ahead_s)
