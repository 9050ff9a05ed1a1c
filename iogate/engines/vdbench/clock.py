"""When a vdbench row was written, in epoch ms: its local time, and the zone summary.html places.

vdbench prints local wall-clock times and a zone *abbreviation* (flatfile
`timestamp` 03/08/2019-18:11:39-ICT; summary.html "created 18:11:35 Mar 08 2019
ICT"), which alone does not name an offset (CST is China's +8 in one real output
and the US's -6 elsewhere). What places it, in this order:

1. UTC or GMT: offset 0.
2. summary.html of 5.04.07 prints the same moment in UTC beside the local one
   ("created 21:16:03 5月 10 2023 CST (13:16:03 5月 10 2023 UTC)"): the offset is
   their difference (by the dates when the months read, else by the times alone
   within -12 h..+14 h, the span of real zones).
   It holds for the zone summary.html names; a flatfile row in another zone (a
   daylight-saving change mid-run) goes on to 3.
3. This machine's own zone (a run IOGate made here).
4. An abbreviation that names one offset only (UNAMBIGUOUS below; 5.04.01 "MDT").
Anything else (e.g. CST from a 5.04.06 summary, which has no UTC time) is an
EngineError naming the zone: a guessed offset would move every sample in time.

5.04.01's flatfile has no `timestamp` column: its rows take their date from
summary.html's creation date, a day later at each midnight the `tod` column
passes (flatfile.py). The date's month is English ("Apr") or vdbench's localised
"5月"; any other month leaves such rows without a date (t_ms then fails).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from iogate.engines.vdbench.source import Line, read_lines

_CREATED = re.compile(r"summary report, created (\d\d):(\d\d):(\d\d) (\S+) (\d\d?) (\d{4}) (\w+)"
                      r"(?: \((\d\d):(\d\d):(\d\d) (\S+) (\d\d?) (\d{4}) UTC\))?")
_MONTHS = {m: n for n, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                                       "Dec"), start=1)}
_LOCAL_MONTH = re.compile(r"^(\d\d?)月$")
# Abbreviations used for one offset only (seconds east of UTC). CST, IST, BST, AST ... are not here: ambiguous.
UNAMBIGUOUS = {
    "EDT": -4 * 3600, "CDT": -5 * 3600, "MDT": -6 * 3600, "MST": -7 * 3600, "PDT": -7 * 3600, "PST": -8 * 3600,
    "AKDT": -8 * 3600, "AKST": -9 * 3600, "HST": -10 * 3600,
    "CET": 3600, "CEST": 2 * 3600, "EET": 2 * 3600, "EEST": 3 * 3600, "MSK": 3 * 3600,
    "ICT": 7 * 3600, "WIB": 7 * 3600, "HKT": 8 * 3600, "SGT": 8 * 3600, "AWST": 8 * 3600,
    "JST": 9 * 3600, "KST": 9 * 3600, "AEST": 10 * 3600, "AEDT": 11 * 3600, "NZST": 12 * 3600, "NZDT": 13 * 3600,
}
DAY_S = 86400


@dataclass(frozen=True)
class Clock:
    """What summary.html says about its times: its zone, that zone's offset (5.04.07), its creation moment."""

    zone: str | None = None
    offset_s: int | None = None  # local minus UTC, when summary.html prints both
    created: datetime | None = None  # local, naive; None when the month is unreadable

    def epoch_ms(self, line: Line, local: datetime, zone: str | None) -> int:
        """`local` (naive, the row's wall-clock time) in `zone` (the row's own, else summary.html's) as epoch ms."""
        zone = zone or self.zone
        naive_s = local.replace(tzinfo=UTC).timestamp()
        if zone in ("UTC", "GMT"):
            return round(naive_s * 1000)
        if self.offset_s is not None and zone == self.zone:
            return round((naive_s - self.offset_s) * 1000)
        if zone is not None and zone in time.tzname:
            return round(time.mktime((*local.timetuple()[:8], -1)) * 1000) + local.microsecond // 1000
        if zone in UNAMBIGUOUS:
            return round((naive_s - UNAMBIGUOUS[zone]) * 1000)
        raise line.fail(f"time zone {zone!r} cannot be placed: it is not UTC, not this machine's, names more than one "
                        "offset, and summary.html prints no UTC time beside it (vdbench 5.04.07 does)")


def read_clock(summary: Path) -> Clock:
    """summary.html's creation line as a Clock (an empty Clock when there is none)."""
    return clock_of(read_lines(summary)[:10])


def clock_of(lines: list[Line]) -> Clock:
    """The Clock of summary.html's first lines (an empty Clock without a creation line)."""
    for line in lines:
        match = _CREATED.search(line.text)
        if match is None:
            continue
        hour, minute, second = (int(match.group(i)) for i in (1, 2, 3))
        month = _month(match.group(4))
        created = (datetime(int(match.group(6)), month, int(match.group(5)), hour, minute, second)
                   if month is not None else None)
        return Clock(match.group(7), _offset_s(match, created), created)
    return Clock()


def _offset_s(match: re.Match[str], created: datetime | None) -> int | None:
    """Local minus UTC from the two printed moments: by their dates when both months read, else by
    the times alone within -12 h..+14 h (a -10 h zone then reads as +14 h: only dates tell them apart)."""
    if match.group(8) is None:
        return None
    hour, minute, second = (int(match.group(i)) for i in (8, 9, 10))
    month = _month(match.group(11))
    if created is not None and month is not None:
        utc = datetime(int(match.group(13)), month, int(match.group(12)), hour, minute, second)
        return round((created - utc).total_seconds())
    local_s = int(match.group(1)) * 3600 + int(match.group(2)) * 60 + int(match.group(3))
    offset = (local_s - (hour * 3600 + minute * 60 + second)) % DAY_S
    return offset - DAY_S if offset > 14 * 3600 else offset


def _month(text: str) -> int | None:
    if text in _MONTHS:
        return _MONTHS[text]
    local = _LOCAL_MONTH.match(text)
    return int(local.group(1)) if local else None


