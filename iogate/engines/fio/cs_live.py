"""The live feed of a fio client/server point: each host's block counters, read while it runs.

fio's client gives no live series of its servers (client_server.status_reports_named), so the
point's per-host sampler (iogate/hosts/cpu_sampler.py) also reads the stat file of each job's
device, and one thread here reads every host's new sampler lines each second, cuts them into whole
intervals (iogate/metrics/device_feed.py) and publishes them to the live judge. Hosts that share
this machine's files (local, netns) are read from their file; others with `tail -c` over their
transport, one host after another.

Only jobs alone on a block device are fed (device_feed says why); a host without such a job
publishes nothing, and the live judge then takes no decision for the point.
"""

from __future__ import annotations

import shlex
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from iogate.engines.base import LoadControl
from iogate.engines.fio.live import planned_dirs
from iogate.engines.workload import JobSpec
from iogate.errors import HostError
from iogate.hosts.initiator import Initiator
from iogate.metrics.device_feed import DeviceTail, alone_on_device
from iogate.metrics.types import Dir

LIVE_READERS = 16  # hosts read at once each second (ssh sessions the controller keeps open side by side)


def device_stat_paths(initiator: Initiator, jobs: Sequence[JobSpec]) -> dict[str, str | None]:
    """{job: the stat file of the block device it opens on the host}, None for a file target or a device the
    host has no block stat for (one command for all of the host's jobs)."""
    devices = {job.name: job.target.device for job in jobs}
    asked = sorted({d for d in devices.values() if d})
    if not asked:
        return dict.fromkeys(devices)
    script = "; ".join(f'b=$(basename "$(readlink -f {shlex.quote(d)})"); '
                       f'if [ -r "/sys/class/block/$b/stat" ]; then echo "/sys/class/block/$b/stat"; else echo -; fi'
                       for d in asked)
    answers = initiator.run_unchecked("sh -c %s", script).stdout.split()
    found = {d: (a if a.startswith("/sys/") else None) for d, a in zip(asked, answers, strict=False)}
    return {job: found.get(device) if device else None for job, device in devices.items()}


@dataclass
class HostFeed:
    """One host's part: its sampler file and the jobs numbered as the sampler reads their devices."""

    initiator: Initiator
    path: str  # the sampler's output file (here when `local_file`, else on the host)
    local_file: bool
    jobs: dict[int, tuple[str, tuple[Dir, ...]]]  # index -> (job, directions)
    offset: int = 0
    tail: DeviceTail | None = None

    def read(self) -> str:
        if self.local_file:
            try:
                with open(self.path, "rb") as handle:
                    handle.seek(self.offset)
                    data = handle.read()
            except OSError:
                return ""
        else:
            data = self.initiator.run_unchecked("tail -c +%s %s", str(self.offset + 1), self.path, attempts=1).stdout.encode()
        self.offset += len(data)
        return data.decode(errors="replace")


def plan_feed(initiator: Initiator, jobs: Sequence[JobSpec]) -> tuple[list[str], dict[int, tuple[str, tuple[Dir, ...]]]]:
    """(the stat files the host's sampler reads, in order; index -> (job, directions)) for a host's jobs."""
    alone = alone_on_device(device_stat_paths(initiator, jobs))
    dirs = planned_dirs(jobs)
    paths = sorted(set(alone.values()))
    return paths, {paths.index(path): (job, dirs[job]) for job, path in alone.items()}


def _read(feed: HostFeed) -> str | None:
    try:
        return feed.read()
    except HostError:
        return None  # a host that stopped answering is the watchdog's to name; its intervals stay missing


def feed_live(hosts: Mapping[str, HostFeed], runtime_s: float, control: LoadControl, done: threading.Event) -> None:
    """Publish every host's whole intervals each second until the run ends or a stop is asked. The hosts are read
    side by side (at most LIVE_READERS at once): read one after another over ssh, a hundred hosts took longer
    than the second between two readings."""
    start_ms = None
    while start_ms is None:
        if done.is_set() or control.stop_requested:
            return
        start_ms = control.wait_measuring(1.0)
    for name, feed in hosts.items():
        feed.tail = DeviceTail(name, feed.jobs, start_ms=start_ms, end_ms=start_ms + round(runtime_s * 1000))
    with ThreadPoolExecutor(max_workers=max(1, min(LIVE_READERS, len(hosts))), thread_name_prefix="live read") as readers:
        while not done.wait(1.0):
            if control.stop_requested:
                return
            texts = list(readers.map(_read, hosts.values()))
            for (name, feed), text in zip(hosts.items(), texts, strict=True):
                if control.stop_requested or done.is_set():
                    return
                assert feed.tail is not None
                if text is None:
                    continue
                samples = feed.tail.feed(text)
                if samples:
                    control.publish(name, samples)
