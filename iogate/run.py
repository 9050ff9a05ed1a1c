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

from iogate.ledger import Ledger


@dataclass
class Run:
    run_id: str
    run_dir: Path
    ledger: Ledger

    @classmethod
    def start(cls, workdir: Path | str, label: str = "run") -> Run:
        run_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{label}-{os.getpid()}"
        run_dir = Path(workdir) / "runs" / run_id
        return cls(run_id=run_id, run_dir=run_dir, ledger=Ledger.create(run_dir))

    def path(self, *parts: str) -> Path:
        """A path inside the run directory (created parent directories included)."""
        target = self.run_dir.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        return target
