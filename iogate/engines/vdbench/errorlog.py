"""errorlog.html: the I/O and data-validation errors of a run.

After vdbench's preamble every line is an error, except the bookkeeping a
data-validation run (-v) always writes there: the map file it created, the map
it allocated, and the closing count of validated blocks with zero in error.
Those are recognised exactly; any other line counts as an error (fail closed).
"""

from __future__ import annotations

import re
from pathlib import Path

from iogate.engines.vdbench.source import Line, read_lines

# 5.04.06/5.04.07: "If there are no error messages beyond this line then ..."; 5.04.01: "If there is no data ...".
_PREAMBLE_ENDS = ("If there are no error messages beyond this line", "If there is no data beyond this line")
_SLAVE = r"^\d\d:\d\d:\d\d\.\d{3} \S+: "
BOOKKEEPING = (
    re.compile(_SLAVE + r"Created new mmap file: \S+ mmap size: \S+\s*$"),
    re.compile(_SLAVE + r"Allocating Data Validation map: [\d,]+ one-byte entries for each [\d,]+-byte block\.\s*$"),
    re.compile(_SLAVE + r"Created new DV map: \S+ size: [\d,]+ bytes; key block size: \d+; entries: [\d,]+\s*$"),
    re.compile(_SLAVE + r"\d\d:\d\d:\d\d\.\d{3} Total amount of key blocks read and validated:\s+[\d,]+; "
               r"key blocks marked in error:\s+0\s*$"),
)


def error_lines(path: Path) -> list[Line]:
    """The error lines; a log without vdbench's preamble is not understood (EngineError)."""
    lines = read_lines(path)
    for index, line in enumerate(lines):
        if any(end in line.text for end in _PREAMBLE_ENDS):
            return [entry for entry in lines[index + 1:]
                    if entry.text.strip() and not any(p.match(entry.text) for p in BOOKKEEPING)]
    raise (lines[-1] if lines else Line(path, 0, "")).fail("no vdbench error-log preamble")
