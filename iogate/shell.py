"""Run a local command and fail with a message that names it (controller side)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from iogate.errors import IOGateError


def run(
    argv: Sequence[str], *, check: bool = True, timeout_s: float = 120, error: type[IOGateError] = IOGateError
) -> subprocess.CompletedProcess[str]:
    """Run argv; on failure raise `error` with the command, exit code and stderr."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError as exc:
        raise error(f"{argv[0]}: command not found (is it installed? `make setup` installs it)") from exc
    except subprocess.TimeoutExpired as exc:
        raise error(f"{' '.join(argv)}: no answer after {timeout_s:.0f} s") from exc
    if check and done.returncode != 0:
        raise error(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip() or done.stdout.strip()}")
    return done
