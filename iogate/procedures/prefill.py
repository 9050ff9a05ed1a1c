"""The suite's prefill: Dell's pre-fill (workloads/sweeps.yaml `prefill`), written once on every volume
before the first test so reads meet written blocks, not holes.

Sequential 256 KiB writes over the whole volume, with compratio 2 / dedupratio 2
data (dedupe_pct = compress_pct = 50). A prefill is a helper job: its run must
complete (iogate.engines.helper.require_complete), it is not measured.
"""

from __future__ import annotations

from collections.abc import Sequence

from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.hosts.connectors.base import Connection

PREFILL = WorkloadSpec(
    "prefill", read_pct=0, random_pct=0, bs=256 << 10, iodepth=8, numjobs=1, time_based=False,
    runtime_s=0, dedupe_pct=50, compress_pct=50,
)


def prefill_plan(name: str, connections: Sequence[Connection]) -> RunPlan:
    """One run point `name` that prefills every connected volume at once: job "prefill-<volume>" each."""
    return RunPlan(name, tuple(JobSpec(f"prefill-{c.volume.name}", PREFILL, c) for c in connections))
