"""The live feed of a remote host over real SSH: reduced on the host, the same intervals as fio's whole reports.

One netns host (sshd, its own loop volume). The fio engine runs a capped read
there with a live listener; the host's reads go through the host-side filter
(iogate/engines/fio/live_reduce.py). Ground truth: fio's own output file,
fetched whole after the run and fed to a StatusTail as a local host's would be.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence

import pytest

from iogate.engines.base import LoadControl
from iogate.engines.fio import live_reduce
from iogate.engines.fio.live import StatusTail
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.metrics.types import Dir, Sample
from selftests.netns_cluster import NetnsCluster, netns_cluster

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and loop devices need root"),
]

RATE, RUNTIME_S, RAMP_S = 100, 6, 1


class _Recorder:
    """A live listener that never stops the load: what the engine published, in order."""

    def __init__(self) -> None:
        self.samples: list[Sample] = []

    def feed(self, host: str, samples: Sequence[Sample]) -> bool:
        self.samples.extend(samples)
        return False

    def errors(self, host: str, failed: Mapping[str, int]) -> bool:
        return False


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    with netns_cluster(tmp_path_factory.mktemp("livefeed") / "work", "lfr", count=1, subnet_base=75) as made:
        yield made


def test_a_remote_hosts_live_intervals_come_reduced_and_equal_its_whole_reports(cluster: NetnsCluster,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (host, target), = cluster.targets.items()
    initiator = cluster.initiators[host]
    assert not initiator.is_local
    replies: list[int] = []
    split = live_reduce.split_reply

    def counting(stdout: str) -> tuple[str, int] | None:
        got = split(stdout)
        replies.append(-1 if got is None else got[1])
        return got

    monkeypatch.setattr(live_reduce, "split_reply", counting)
    workload = WorkloadSpec("live", read_pct=70, random_pct=100, bs=4 << 10, iodepth=1, runtime_s=RUNTIME_S, ramp_s=RAMP_S,
                            rate_iops=RATE)
    job = JobSpec("live-1", workload, target)
    recorder = _Recorder()
    engine = FioEngine(cluster.run, {host: initiator}, cluster.guard)
    engine.run_plan(RunPlan("livefeed", (job,)), LoadControl(live=recorder))

    assert replies and -1 not in replies, f"the host's replies were not all reduced: {replies}"
    outputs = sorted(cluster.run.run_dir.rglob("out.json"))
    assert len(outputs) == 1, outputs
    whole = StatusTail(host, {"live-1": (Dir.READ, Dir.WRITE)}, first_elapsed_s=RAMP_S + 1).feed(outputs[0].read_text())
    assert len(recorder.samples) >= 2 * (RUNTIME_S - 3), f"few live intervals: {recorder.samples}"
    assert recorder.samples == whole[: len(recorder.samples)]
