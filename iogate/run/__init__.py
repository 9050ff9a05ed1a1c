"""One run of the suite: its directory, its ledger of what it created, and how that is undone.

    model.py      the Run (run id, run directory, ledger); re-exported here,
                  so `from iogate.run import Run` is the one way to import it
    ledger.py     the append-only record of every resource a run created
    resources.py  removers by resource kind, release at the end of a run,
                  cleanup of what killed or crashed runs left behind
"""

from iogate.run.model import Run

__all__ = ["Run"]
