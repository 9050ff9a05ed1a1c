"""One run of the suite: its id, its directory and its ledger.

Everything a run creates or produces (pool images, job files, fio output, the
ledger) lives under <workdir>/runs/<run_id>/ so a reviewer can find it and
cleanup can undo it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from iogate.errors import LedgerError
from iogate.run.ledger import Ledger


@dataclass
class Run:
    run_id: str
    run_dir: Path
    ledger: Ledger

    @classmethod
    def start(cls, workdir: Path | str, label: str = "run") -> Run:
        """A new run with a directory of its own.

        The directory is created exclusively: two runs of one process in the same
        second (a session and the lab VM it boots) must never share a ledger.
        """
        runs = Path(workdir) / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        base = f"{time.strftime('%Y%m%d-%H%M%S')}-{label}-{os.getpid()}"
        for attempt in range(1000):
            run_id = base if attempt == 0 else f"{base}.{attempt}"
            try:
                (runs / run_id).mkdir()
            except FileExistsError:
                continue
            return cls(run_id=run_id, run_dir=runs / run_id, ledger=Ledger.create(runs / run_id))
        raise LedgerError(f"{runs}: no free run directory for {base}")

    def path(self, *parts: str) -> Path:
        """A path inside the run directory (created parent directories included)."""
        target = self.run_dir.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        return target
