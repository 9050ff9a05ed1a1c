"""The client/server watchdog's liveness rule (iogate.lab.HostLiveness) and the bounded probe under it.

A host that answered no probe for deadline_s is lost, named with what its last probe said; a healthy
host whose probes are slow but answer within interval_s + probe_timeout_s never is; a probe never
outlives its timeout or the run (no ssh left behind). Timing asserts are one-sided or generous:
detection never comes before the deadline (the rule), and comes long before a bound of the deadline
plus generous slack (a loaded machine delays threads by seconds, not by minutes); a rule that
tripped early fails the slow-but-answering host's test.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from iogate.engines.fio.client_server import ClientServerEngine, _Watch
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import HostConfig, HostLiveness
from iogate.run import Run
from iogate.run.resources import marker_pids

# A healthy host's probe answers in well under a second, but on a loaded 2-core machine (xdist workers, a
# niced suite beside) the prober thread itself can run seconds late: a 2 s deadline once lost a healthy host.
FAST = HostLiveness(interval_s=0.1, probe_timeout_s=0.5, deadline_s=5.0)
SLACK_S = 15.0  # generous: threads on a loaded 2-core machine run late by seconds


class _FakeHost:
    """A host whose probes answer after delay_s until `lost` is set; then they hang until cancelled."""

    def __init__(self, name: str, delay_s: float = 0.0) -> None:
        self.name = name
        self.delay_s = delay_s
        self.lost = threading.Event()
        self.probes = 0

    def probe(self, timeout_s: float, cancel: threading.Event | None = None) -> str | None:
        self.probes += 1
        stop = cancel or threading.Event()
        if self.lost.is_set():
            stop.wait(timeout_s)
            return "cancelled" if stop.is_set() else "no answer within the probe timeout"
        stop.wait(self.delay_s)
        return None


def _watch(tmp_path: Path, hosts: dict[str, _FakeHost], liveness: HostLiveness) -> tuple[_Watch, threading.Thread]:
    engine = ClientServerEngine(Run.start(tmp_path, "live"), {}, Guard(allowed=[]), liveness=liveness)
    watch = _Watch({})
    thread = threading.Thread(target=engine._watchdog, args=(hosts, watch), daemon=True)
    thread.start()
    return watch, thread


def test_a_silent_host_is_lost_after_the_deadline_and_named(tmp_path: Path) -> None:
    silent, healthy = _FakeHost("h1"), _FakeHost("h2")
    watch, thread = _watch(tmp_path, {"h1": silent, "h2": healthy}, FAST)
    try:
        time.sleep(0.5)
        silent.lost.set()
        lost_at = time.monotonic()
        while not watch.failures and time.monotonic() < lost_at + FAST.deadline_s + SLACK_S:
            time.sleep(0.05)
        detect_s = time.monotonic() - lost_at
    finally:
        watch.stop.set()
        thread.join(10)
    assert list(watch.failures) == ["h1"], f"the silent host alone is lost: {watch.failures}"
    assert detect_s < FAST.deadline_s + SLACK_S  # too early is the slow host's test: it would be lost
    reason = watch.failures["h1"]
    assert re.search(r"^stopped answering: no probe answered over its transport for \d+ s ", reason), reason
    assert "host_liveness deadline 5 s" in reason and "last probe: still waiting for an answer" in reason
    assert not thread.is_alive(), "the watchdog (and its probes) outlived the stop"


def test_a_slow_but_answering_host_is_not_lost(tmp_path: Path) -> None:
    """Every probe takes the whole probe timeout and still answers: within interval + timeout <= deadline."""
    slow = _FakeHost("h1", delay_s=FAST.probe_timeout_s * 0.8)
    watch, thread = _watch(tmp_path, {"h1": slow}, FAST)
    try:
        time.sleep(2 * FAST.deadline_s)
    finally:
        watch.stop.set()
        thread.join(10)
    assert slow.probes >= 3 and watch.failures == {}


def test_the_deadline_must_cover_an_interval_and_a_slow_probe() -> None:
    HostLiveness(interval_s=5, probe_timeout_s=10, deadline_s=15)
    with pytest.raises(ValidationError, match=r"deadline_s \(14\) must be at least interval_s \+ probe_timeout_s \(5 \+ 10\)"):
        HostLiveness(interval_s=5, probe_timeout_s=10, deadline_s=14)


def test_defaults_are_the_documented_figures() -> None:
    assert HostLiveness() == HostLiveness(interval_s=5, probe_timeout_s=10, deadline_s=20)


# -- the ssh probe itself (a local port: refused, or a listener that never speaks) -----------------
def _ssh_host(port: int) -> Initiator:
    return Initiator.from_config(HostConfig(name="far", transport=f"ssh://root@127.0.0.1:{port}"))


def _leftover_probes(port: int) -> list[int]:
    return marker_pids(f"-p {port} root@127.0.0.1 true")


def test_a_refused_probe_says_so() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, not listening: refused
        said = _ssh_host(port).probe(5.0)
    assert said is not None and "Connection refused" in said


def test_a_silent_sshd_times_the_probe_out_and_leaves_no_ssh() -> None:
    with socket.socket() as mute:  # accepts the connection (backlog), never sends a banner
        mute.bind(("127.0.0.1", 0))
        mute.listen(4)
        port = mute.getsockname()[1]
        started = time.monotonic()
        said = _ssh_host(port).probe(1.0)
        took = time.monotonic() - started
        assert said is not None and ("within 1 s" in said or "banner" in said), said
        assert took < 1.0 + SLACK_S
        assert _leftover_probes(port) == []


def test_a_cancelled_probe_ends_at_once_and_leaves_no_ssh() -> None:
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(4)
        port = mute.getsockname()[1]
        cancel = threading.Event()
        threading.Timer(0.3, cancel.set).start()
        started = time.monotonic()
        said = _ssh_host(port).probe(60.0, cancel=cancel)
        assert said == "probe cancelled" and time.monotonic() - started < 30
        assert _leftover_probes(port) == []


def test_a_local_host_always_answers() -> None:
    assert Initiator.from_config(HostConfig(name="me")).probe(0.1) is None


class _CountingHost(_FakeHost):
    """A host whose probe takes delay_s and counts how many probes (of all hosts) are in flight at once."""

    in_flight = 0
    most_in_flight = 0
    lock = threading.Lock()

    def probe(self, timeout_s: float, cancel: threading.Event | None = None) -> str | None:
        with _CountingHost.lock:
            _CountingHost.in_flight += 1
            _CountingHost.most_in_flight = max(_CountingHost.most_in_flight, _CountingHost.in_flight)
        try:
            return super().probe(timeout_s, cancel)
        finally:
            with _CountingHost.lock:
                _CountingHost.in_flight -= 1


def test_many_hosts_are_probed_a_few_at_a_time_and_none_is_lost(tmp_path: Path) -> None:
    """40 hosts: at most PROBES_AT_ONCE probes (ssh handshakes) in flight, every host still answered in time."""
    from iogate.engines.fio.client_server import PROBES_AT_ONCE

    hosts = {f"h{n}": _CountingHost(f"h{n}", delay_s=0.05) for n in range(1, 41)}
    watch, thread = _watch(tmp_path, dict(hosts), FAST)
    try:
        time.sleep(2 * FAST.deadline_s)
    finally:
        watch.stop.set()
        thread.join(10)
    assert PROBES_AT_ONCE == 8  # the figure the docstring's arithmetic (100 hosts answered within ~6 s) is worked for
    assert 1 <= _CountingHost.most_in_flight <= PROBES_AT_ONCE, _CountingHost.most_in_flight
    assert watch.failures == {} and all(host.probes >= 2 for host in hosts.values())
