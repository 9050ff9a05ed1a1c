"""One iSCSI session / NVMe controller per (host, target, portal), shared by that host's volumes.

A vendor array (PowerStore, ONTAP, FlashArray) presents one target IQN / one
subsystem NQN per port for every volume mapped to a host, so a second login or
connect to it is refused ("1 session requested, but 1 already present",
"already connected"). The first volume of a run on a target logs in (journalled:
its undo logs out); the next ones rescan the session and find their device by
identity; the last one of the run to disconnect logs out. A session that was
there before the run is used but never ended: it has no ledger entry, so neither
disconnect nor `iogate cleanup` touches it.

The registry is per run, not per connector, so two protocols (or multipath's
inner connector) that reach the same target count on the same session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from iogate.errors import IOGateError
from iogate.run import Run
from iogate.run.ledger import Entry
from iogate.run.resources import release


@dataclass
class Shared:
    """A session (controller) and the volumes of this run that use it."""

    handle: str  # iSCSI session id / NVMe controller name, for rescans
    entry: Entry | None  # None: it existed before the run, so it is not ours to end
    volumes: set[str] = field(default_factory=set)

    @property
    def ours(self) -> bool:
        return self.entry is not None


Key = tuple[str, str, str, str]  # (run id, host, target, portal)

_lock = threading.RLock()
_open: dict[Key, Shared] = {}


def key(run: Run, host: str, target: str, portal: str) -> Key:
    return (run.run_id, host, target, portal)


def acquire(run: Run, at: Key, volume: str, existing: Callable[[], str | None], rescan: Callable[[str], None],
            log_in: Callable[[], Shared]) -> Shared:
    """The shared session at `at`, with `volume` counted on it.

    Known to this run: rescanned. Otherwise `existing()` names one that is already
    there (used, rescanned, not ours) or `log_in()` makes one (and journals it)."""
    with _lock:
        shared = _open.get(at)
        if shared is not None and shared.entry is not None and not shared.entry.open:
            shared = None  # released behind our back (the run's release_all after a failure): gone
        if shared is None:
            handle = existing()
            if handle is not None:
                shared = Shared(handle, None)
                rescan(handle)
            else:
                shared = log_in()
            _open[at] = shared
        else:
            rescan(shared.handle)
        shared.volumes.add(volume)
        return shared


def drop(run: Run, at: Key, volume: str, *, quiet: bool = False) -> bool:
    """`volume` no longer uses the session; the last volume of the run on a session this run made
    releases its ledger entry (logout / disconnect). True when the session was ended.
    `quiet`: on a failure path, a logout that fails is left to the run's cleanup (release_quietly)."""
    with _lock:
        shared = _open.get(at)
        if shared is None:
            return False
        shared.volumes.discard(volume)
        if shared.volumes:
            return False
        del _open[at]
        if shared.entry is None:
            return False
        if quiet:
            release_quietly(run, shared.entry)
        else:
            release(run.ledger, [shared.entry])
        return True


def release_quietly(run: Run, entry: Entry) -> None:
    """Undo a half-made resource on a failure path: the failure is what the caller reports; an
    entry that cannot be released stays open for the run's cleanup."""
    try:
        release(run.ledger, [entry])
    except IOGateError:
        pass


def users(at: Key) -> set[str]:
    """The volumes of the run on a session (empty when none is open)."""
    with _lock:
        shared = _open.get(at)
        return set(shared.volumes) if shared else set()
