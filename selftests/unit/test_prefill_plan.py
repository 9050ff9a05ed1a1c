"""The suite's prefill plan (iogate.procedures.prefill): one job per connected volume, named after it."""

from __future__ import annotations

import pytest

from iogate.arrays.base import Volume
from iogate.hosts.connectors.base import Connection
from iogate.lab import DeviceIdentity
from iogate.procedures.prefill import PREFILL, prefill_plan


def connection(host: str, name: str) -> Connection:
    volume = Volume(name, 1 << 30, DeviceIdentity(backing_file=f"/pool/{name}.img"), {"device": f"/dev/{name}"})
    return Connection("block", host, volume, f"/dev/{name}")


def test_prefill_plan_writes_every_volume_at_once_with_the_prefill_workload() -> None:
    a, b = connection("h1", "lab-vol1"), connection("h2", "lab-vol2")
    plan = prefill_plan("prefill", [a, b])
    assert plan.name == "prefill"
    assert [(j.name, j.target, j.workload) for j in plan.jobs] == [("prefill-lab-vol1", a, PREFILL), ("prefill-lab-vol2", b, PREFILL)]
    assert plan.hosts == ["h1", "h2"]


def test_prefill_is_a_whole_volume_sequential_write_not_time_based() -> None:
    assert (PREFILL.read_pct, PREFILL.random_pct, PREFILL.bs, PREFILL.iodepth, PREFILL.numjobs) == (0, 0, 262144, 8, 1)
    assert (PREFILL.time_based, PREFILL.size, PREFILL.offset) == (False, None, None)


def test_a_prefill_of_no_volume_is_refused() -> None:
    with pytest.raises(ValueError, match="run point prefill-kpi: no jobs"):
        prefill_plan("prefill-kpi", [])
