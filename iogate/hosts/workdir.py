"""A run point's working directory on a remote host, for any engine: journalled, removed, cleaned up."""

from __future__ import annotations

import shlex

from iogate.errors import HostError
from iogate.hosts import remote
from iogate.hosts.initiator import CONNECT_ATTEMPTS, Initiator
from iogate.run import Run
from iogate.run.ledger import Entry

REMOTE_ROOT = "/var/tmp/iogate-remote"


class RemoteWorkdir:
    """A run point's working directory on a remote host: REMOTE_ROOT/<run>/<point>/<host>.

    Journalled in the run's ledger as a resource of that host (kind "remote", with the script
    that removes it) before it exists, and removed over the host's transport by remove() once
    the point's results are fetched; after a crash `iogate cleanup` runs the same script (the
    "remote" remover, iogate/hosts/remote.py, over the journalled transport). The
    run's and the point's directories go with the last host's, and only when empty: other
    hosts of the point, or other points, may still be using them."""

    def __init__(self, run: Run, initiator: Initiator, point: str) -> None:
        self.run = run
        self.initiator = initiator
        self.path = self.path_for(run, point, initiator.name)
        self.point_dir = f"{REMOTE_ROOT}/{run.run_id}/{point}"
        undo = (f"rm -rf {shlex.quote(self.path)} && {{ rmdir {shlex.quote(self.point_dir)} "
                f"{shlex.quote(f'{REMOTE_ROOT}/{run.run_id}')} 2>/dev/null; true; }}")
        self.entry: Entry = remote.intend(run.ledger, initiator, f"working directory {self.path}", undo)
        initiator.run("mkdir -p %s", self.path)
        run.ledger.created(self.entry)

    @staticmethod
    def path_for(run: Run, point: str, host: str) -> str:
        return f"{REMOTE_ROOT}/{run.run_id}/{point}/{host}"

    def remove(self, *, failing: bool = False) -> None:
        """Remove it now. `failing`: the point already failed (perhaps the host is gone); a directory
        that cannot be removed then stays journalled for cleanup, and the point's own error is the one raised."""
        # Over the session's own transport: the remover (cleanup's way) would open a new one per call.
        if remote.vanished(self.entry.attrs):
            self.run.ledger.released(self.entry)
            return
        try:
            self.initiator.run(self.entry.attrs["undo"], attempts=1 if failing else CONNECT_ATTEMPTS)
        except HostError:
            if not failing:
                raise
            return
        self.run.ledger.released(self.entry)
