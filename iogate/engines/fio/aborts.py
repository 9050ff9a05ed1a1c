"""fio's own aborts, which only its text output tells.

fio refuses some jobs ("fio: /dev/loop0 appears mounted, and 'allow_mounted_write'
isn't set. Aborting.") with exit status 0 and a json whose jobs say error 0 and
did no I/O; read as results that is 0 IOPS and a passing error check. Both
engines look for the line in fio's stdout/stderr and raise instead.
"""

from __future__ import annotations

import re

# A client/server line may carry the server's name before "fio:".
_ABORT = re.compile(r"^(?:<[^>]*>\s*)?(fio: .*\bAborting\b.*)$", re.MULTILINE)


def abort_message(text: str) -> str | None:
    """fio's first "fio: ... Aborting" line (None when it did not abort)."""
    match = _ABORT.search(text)
    return match.group(1).strip() if match else None
