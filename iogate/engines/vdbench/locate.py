"""Where the vdbench installation is: the lab's option, else VDBENCH_HOME, else the repo's neighbour.

A real lab has its own vdbench (users download it from Oracle) and names it in
the lab file (passed here as `configured`) or in VDBENCH_HOME. The fallback,
`../shared/tools/vdbench` next to the repository (or next to the worktree root
a git worktree lives under), is the development copy self-tests use; a fresh
clone has none, and then this raises, saying where it looked.
"""

from __future__ import annotations

import os
from pathlib import Path

from iogate.errors import EngineError

REPO = Path(__file__).resolve().parents[3]


def candidates(configured: str | None = None) -> list[Path]:
    if configured:
        return [Path(configured)]
    if os.environ.get("VDBENCH_HOME"):
        return [Path(os.environ["VDBENCH_HOME"])]
    return [REPO.parent / "shared" / "tools" / "vdbench", REPO.parent.parent / "shared" / "tools" / "vdbench"]


def vdbench_home(configured: str | None = None) -> Path:
    """The directory holding the `vdbench` launcher (and vdbench.jar)."""
    looked = candidates(configured)
    for home in looked:
        if (home / "vdbench").is_file() and os.access(home / "vdbench", os.X_OK):
            return home
    raise EngineError("no vdbench installation: set the lab's vdbench home or VDBENCH_HOME (looked in "
                      + ", ".join(str(p) for p in looked) + ")")
