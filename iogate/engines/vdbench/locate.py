"""Where the vdbench installation is: on this controller, the lab's option, else VDBENCH_HOME, else
the repo's neighbour; on a remote host, the lab's option only, checked on that host.

A real lab has its own vdbench (users download it from Oracle) and names it in
the lab file (passed here as `configured`) or in VDBENCH_HOME. The fallback,
`../shared/tools/vdbench` next to the repository (or next to the worktree root
a git worktree lives under), is the development copy self-tests use; a fresh
clone has none, and then this raises, saying where it looked. A remote host's
vdbench is never the controller's: it is the lab's option, looked up on that host
(remote_problem), which the controller's own file system says nothing about.
"""

from __future__ import annotations

import os
from pathlib import Path

from iogate.errors import EngineError
from iogate.hosts.initiator import Initiator

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


def remote_problem(initiator: Initiator, home: str) -> str | None:
    """Why vdbench at `home` cannot start on this (remote) host, in its own terms; None when it can.

    Asked over the host's own transport: a real lab installs vdbench on its hosts, at a path
    this controller may not have at all."""
    launcher = f"{home.rstrip('/')}/vdbench"
    found = initiator.run_unchecked(
        'if [ ! -x %s ]; then echo "no executable %s"; '
        'elif ! command -v "${VDBENCH_JAVA:-java}" >/dev/null 2>&1; then echo "no java (${VDBENCH_JAVA:-java}) on its PATH"; fi',
        launcher, launcher)
    said = found.stdout.strip()
    if found.rc != 0 and not said:
        said = f"the check exited {found.rc}: {(found.stderr or '').strip()[-500:]}"
    return said or None
