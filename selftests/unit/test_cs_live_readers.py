"""The client/server live feed reads its hosts side by side each second, not one ssh round trip after another."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from iogate.engines.fio import cs_live
from iogate.errors import HostError
from iogate.metrics.types import Sample

HOSTS = 3


class Control:
    """The LoadControl part feed_live uses: measuring from t=0, no stop asked."""

    stop_requested = False

    def __init__(self) -> None:
        self.published: list[str] = []

    def wait_measuring(self, timeout_s: float) -> int:
        return 0

    def publish(self, host: str, samples: Sequence[Sample]) -> None:
        self.published.append(host)


class Feed(cs_live.HostFeed):
    """A host whose read waits until every host's read has begun: read one after another, the first never returns
    (the barrier breaks after its deadlock timeout, the read reports the host unreachable and ends the run)."""

    def __init__(self, name: str, barrier: threading.Barrier, reads: list[str], done: threading.Event) -> None:
        super().__init__(initiator=Any, path=f"/{name}", local_file=False, jobs={})  # type: ignore[arg-type]
        self.name, self.barrier, self.reads, self.done = name, barrier, reads, done

    def read(self) -> str:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            self.done.set()
            raise HostError(f"{self.name}: read alone") from None
        self.reads.append(self.name)
        if len(self.reads) == HOSTS:
            self.done.set()
        return ""


def test_every_host_is_read_in_the_same_second() -> None:
    barrier = threading.Barrier(HOSTS, timeout=10)  # a deadlock breaker, not a time being measured
    reads: list[str] = []
    done = threading.Event()
    feeds = {f"h{n}": Feed(f"h{n}", barrier, reads, done) for n in range(HOSTS)}
    cs_live.feed_live(feeds, 60, Control(), done)  # type: ignore[arg-type]
    assert sorted(reads) == ["h0", "h1", "h2"]
    assert not barrier.broken
