"""The operations behind each optional capability, for the vendor tests that check a driver refuses what it
does not offer by raising Unsupported naming the driver, the operation and why."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from iogate.arrays.base import Capability, Snapshot, Unsupported, Volume
from iogate.lab import QoS

OPERATIONS: dict[Capability, Callable[[Any, Volume], Any]] = {
    Capability.RESTORE: lambda d, v: d.snapshot_restore(v, Snapshot("s1", v.name)),
    Capability.DEDUPE: lambda d, v: d.dedupe_run(),
    Capability.REPLICATE: lambda d, v: d.replicate(v),
    Capability.MIRROR: lambda d, v: d.mirror_attach(v),
    Capability.QOS: lambda d, v: d.set_qos(v, QoS(read_iops=1000)),
    Capability.METRICS: lambda d, v: d.volume_metrics(v, datetime.now(UTC) - timedelta(minutes=5), datetime.now(UTC)),
}


def assert_refusals(driver: Any, volume: Volume) -> list[str]:
    """Every operation whose capability the driver lacks raises Unsupported "array driver <d> does not support
    <capability>: <why>"; the reasons, for the test to read."""
    reasons = []
    for capability, operation in OPERATIONS.items():
        if capability in driver.capabilities:
            continue
        with pytest.raises(Unsupported) as refused:
            operation(driver, volume)
        head = f"array driver {driver.DRIVER} does not support {capability.value}: "
        assert str(refused.value).startswith(head), str(refused.value)
        why = str(refused.value).removeprefix(head)
        assert len(why) > 20 and "not offered by this driver" not in why, why  # a reason, not a shrug
        # The reason a test's skip gives (driver.refusal) is a reason too, whatever the operation adds to it.
        skip_reason = driver.refusal(capability)
        assert len(skip_reason) > 20 and "not offered by this driver" not in skip_reason, skip_reason
        reasons.append(f"{capability.value}: {why}")
    return reasons
