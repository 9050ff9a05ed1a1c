"""vdbench's report files as numbered text lines.

Every vdbench report is `<title>...</title><pre>` followed by plain text, with
<A>/<a>/<i>/<b> tags around links and run headers. Parsers work on the text with
the tags removed, keeping the 1-based line number so an error names file:line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from iogate.errors import EngineError

_TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True)
class Line:
    path: Path
    number: int
    text: str

    def fail(self, why: str) -> EngineError:
        """An EngineError naming this line (the caller raises it)."""
        return EngineError(f"{self.path}:{self.number}: {why}: {self.text.strip()[:200]!r}")


def read_lines(path: Path) -> list[Line]:
    """The file's lines with html tags stripped; a missing file is an EngineError."""
    try:
        raw = path.read_text(errors="replace")
    except OSError as exc:
        raise EngineError(f"{path}: cannot read vdbench output: {exc}") from None
    return [Line(path, number, _TAG.sub("", text)) for number, text in enumerate(raw.splitlines(), start=1)]


_RD_START = re.compile(r"Starting RD=(?P<rd>[^;\s]+)(?P<rest>.*)$")
_FOR_LOOPS = re.compile(r"For loops:\s*(?P<loops>.*?)\s*$")


def run_label(line: Line) -> str | None:
    """'rd_ran xfersize=4k rdpct=0 threads=1' from a 'Starting RD=' header line, else None.

    vdbench names every run point of a for-loop sweep with the same rd=, so the
    for-loop values are part of the label that tells the points apart.
    """
    match = _RD_START.search(line.text)
    if match is None:
        return None
    loops = _FOR_LOOPS.search(match.group("rest"))
    values = loops.group("loops") if loops else ""
    return match.group("rd") if values in ("", "None") else f"{match.group('rd')} {values}"


_PLANNED = re.compile(r'<A HREF="#_-?\d+">([^<]+?) For loops: ([^<]*?)\s*</A>', re.IGNORECASE)


def planned_labels(path: Path) -> list[str]:
    """The run points a report's 'Link to Run Definitions:' list plans, labelled as run_label() does.

    vdbench writes this list before the run starts, so it names points that never printed their
    'Starting RD=' header (a run aborted on its first point's errors)."""
    try:
        raw = path.read_text(errors="replace")
    except OSError as exc:
        raise EngineError(f"{path}: cannot read vdbench output: {exc}") from None
    return [rd if values in ("", "None") else f"{rd} {values}" for rd, values in _PLANNED.findall(raw)]
