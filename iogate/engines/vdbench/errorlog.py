"""errorlog.html: every line after vdbench's preamble is an I/O or data-validation error."""

from __future__ import annotations

from pathlib import Path

from iogate.engines.vdbench.source import Line, read_lines

_PREAMBLE_END = "If there are no error messages beyond this line"


def error_lines(path: Path) -> list[Line]:
    """The error lines; a log without vdbench's preamble is not understood (EngineError)."""
    lines = read_lines(path)
    for index, line in enumerate(lines):
        if _PREAMBLE_END in line.text:
            return [entry for entry in lines[index + 1:] if entry.text.strip()]
    raise (lines[-1] if lines else Line(path, 0, "")).fail("no vdbench error-log preamble")
