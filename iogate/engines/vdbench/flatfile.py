"""flatfile.html: one header line of column names, then one row per interval and per run average.

Rows of one run point are `Interval` 1..N followed by vdbench's own average row
`avg_X-Y`. `n/a` means "not available or conflicting" (e.g. xfersize of a run
with two workloads) and is kept as None; a number that a statistic needs but is
n/a is an error naming the line. Block (wd) and file system (fwd) runs write
different columns; `Stats` gives both the same shape.

Layouts by version (version.py): the header starts `tod timestamp Run Interval`,
or `tod Run Interval` in 5.04.01 (no timestamp: a row's date is summary.html's
creation date, advanced at each midnight `tod` passes); 5.04.07 adds read_max,
write_max, read_std, write_std to block rows and names the file-system columns
`Rate`, `Resp`, `Reqrate` (5.04.06: `rate`, `resp`, `reqrate`), read here in lower case.
A row's epoch time is placed by clock.py, lazily: a directory refused for
another reason (stopped mid-run) is refused for that reason, not for its zone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from iogate.engines.vdbench.clock import DAY_S, Clock
from iogate.engines.vdbench.source import Line, read_lines
from iogate.errors import EngineError

_AVG = re.compile(r"^avg_(\d+)-(\d+)$")
_LEADS = (("tod", "timestamp", "Run", "Interval"), ("tod", "Run", "Interval"))
# 5.04.07 file-system flatfiles capitalise these; every other column keeps its name.
_ALIASES = {"Rate": "rate", "Resp": "resp", "Reqrate": "reqrate"}


@dataclass(frozen=True)
class FlatRow:
    line: Line
    run: str
    interval: str  # "7" or "avg_3-12"
    local: datetime | None  # wall-clock time vdbench wrote the row (the interval's end); None: no date known
    zone: str | None  # the timestamp column's zone abbreviation (None: no timestamp column)
    values: Mapping[str, float | None]
    clock: Clock = field(default_factory=Clock)

    @property
    def t_ms(self) -> int:
        """When vdbench wrote the row, epoch ms (clock.py; an EngineError when its zone or date cannot be placed)."""
        if self.local is None:
            raise self.line.fail("no date for this row: the flatfile has no timestamp column and summary.html "
                                 "no readable creation date")
        return self.clock.epoch_ms(self.line, self.local, self.zone)

    def get(self, column: str) -> float | None:
        if column not in self.values:
            raise self.line.fail(f"flatfile has no column {column!r}")
        return self.values[column]

    def need(self, column: str) -> float:
        value = self.get(column)
        if value is None:
            raise self.line.fail(f"column {column!r} is n/a where a number is needed")
        return value

    @property
    def avg_range(self) -> tuple[int, int] | None:
        match = _AVG.match(self.interval)
        return (int(match.group(1)), int(match.group(2))) if match else None


@dataclass(frozen=True)
class Stats:
    """One row in engine-neutral terms (block and file-system flatfiles alike)."""

    iops: float
    mb_per_s: float
    read_iops: float
    write_iops: float
    resp_ms: float
    read_resp_ms: float
    write_resp_ms: float
    resp_max_ms: float | None  # file-system flatfiles have none
    reqrate: float | None
    cpu_user_pct: float | None
    cpu_kernel_pct: float | None
    mb_read_per_s: float | None  # only file-system flatfiles split MB/s by direction
    mb_write_per_s: float | None


def stats(row: FlatRow) -> Stats:
    """The row's figures; a response time is only required where I/O was done."""
    values = row.values
    iops = row.need("rate")
    if "read%" in values:  # block workload
        read_pct = row.need("read%") if iops else (row.get("read%") or 0.0)
        read_iops = iops * read_pct / 100
        write_iops = iops - read_iops
        mb_read = mb_write = None
        resp_max = row.get("resp_max")
    else:  # file-system workload
        read_iops, write_iops = row.need("Read_rate"), row.need("Write_rate")
        mb_read, mb_write = row.need("MB_read"), row.need("MB_write")
        resp_max = None
    return Stats(
        iops=iops,
        mb_per_s=row.need("MB/sec"),
        read_iops=read_iops,
        write_iops=write_iops,
        resp_ms=_resp(row, "resp", iops),
        read_resp_ms=_resp(row, "read_resp" if "read_resp" in values else "Read_resp", read_iops),
        write_resp_ms=_resp(row, "write_resp" if "write_resp" in values else "Write_resp", write_iops),
        resp_max_ms=resp_max,
        reqrate=row.get("reqrate"),
        # vdbench 5.04.06 fills cpu_used with the user share (a Report.java bug): busy CPU
        # is cpu_user + cpu_kernel, which is what its console prints as "cpu% sys+u".
        cpu_user_pct=values.get("cpu_user"),
        cpu_kernel_pct=values.get("cpu_kernel"),
        mb_read_per_s=mb_read,
        mb_write_per_s=mb_write,
    )


def _resp(row: FlatRow, column: str, rate: float) -> float:
    return row.need(column) if rate else (row.get(column) or 0.0)


@dataclass(frozen=True)
class FlatPoint:
    """One run point: its interval rows (1..N, none missing) and vdbench's average row."""

    run: str
    intervals: tuple[FlatRow, ...]
    avg: FlatRow

    def avg_range_or_fail(self) -> tuple[int, int]:
        span = self.avg.avg_range
        if span is None:
            raise self.avg.line.fail("not an avg_X-Y row")
        return span


@dataclass(frozen=True)
class FlatFile:
    """The completed run points, and the intervals of one vdbench had not averaged when it stopped."""

    points: tuple[FlatPoint, ...]
    unfinished: tuple[FlatRow, ...] = ()  # a run point's intervals 1..k without their avg_X-Y row
    has_header: bool = True  # False: vdbench wrote no column header at all (stopped before the first interval)


def parse_flatfile(path: Path, clock: Clock | None = None) -> FlatFile:
    clock = clock or Clock()
    lines = read_lines(path)
    header: list[str] | None = None
    points: list[FlatPoint] = []
    pending: list[FlatRow] = []
    day = _Days(clock)
    for line in lines:
        text = line.text.strip()
        if not text or text.startswith("*") or (header is None and line.number == 1 and text.startswith("Vdbench")):
            continue
        fields = text.split()
        if header is None:
            if not any(tuple(fields[:len(lead)]) == lead for lead in _LEADS):
                raise line.fail(f"expected the column header ({' '.join(_LEADS[0])} ..., or {' '.join(_LEADS[1])} ...)")
            header = fields
            continue
        if len(fields) != len(header):
            raise line.fail(f"{len(fields)} fields where the header has {len(header)} columns")
        row = _row(line, header, fields, clock, day)
        if row.avg_range is None:
            if not row.interval.isdigit():
                raise line.fail("Interval is neither a number nor avg_X-Y")
            expected = len(pending) + 1
            if int(row.interval) != expected or (pending and pending[0].run != row.run):
                raise line.fail(f"interval {row.interval} of {row.run} where interval {expected} of "
                                f"{pending[0].run if pending else row.run} was due (a missing interval is no data)")
            pending.append(row)
            continue
        if not pending or pending[0].run != row.run:
            raise line.fail("average row without the intervals it averages")
        first, highest = row.avg_range
        if highest != len(pending) or not 1 <= first <= highest + 1:
            raise line.fail(f"average over {first}-{highest} but the run point has intervals 1-{len(pending)}")
        points.append(FlatPoint(row.run, tuple(pending), row))
        pending = []
    return FlatFile(tuple(points), tuple(pending), header is not None)


def parse_rows(text: str, path: Path = Path("flatfile.html"), clock: Clock | None = None) -> list[FlatRow]:
    """The complete rows of a flatfile vdbench is still writing (a run in progress): no
    checks, a torn last line is left out. For live steering only; results use parse_flatfile."""
    clock = clock or Clock()
    header: list[str] | None = None
    rows = []
    day = _Days(clock)
    lines = text.split("\n")[:-1]  # the part after the last newline may be torn
    for number, raw in enumerate(lines, start=1):
        fields = raw.split()
        if header is None:
            header = fields if any(tuple(fields[:len(lead)]) == lead for lead in _LEADS) else None
            continue
        if len(fields) == len(header):
            try:
                rows.append(_row(Line(path, number, raw), header, fields, clock, day))
            except EngineError:
                continue
    return rows


def _row(line: Line, header: list[str], fields: list[str], clock: Clock, day: _Days) -> FlatRow:
    lead = 4 if header[1] == "timestamp" else 3
    values: dict[str, float | None] = {}
    for raw_name, text in zip(header[lead:], fields[lead:], strict=True):
        name = _ALIASES.get(raw_name, raw_name)
        if name in values:
            raise line.fail(f"column {name!r} appears twice in the header")
        if text == "n/a":
            values[name] = None
            continue
        try:
            values[name] = float(text)
        except ValueError:
            raise line.fail(f"column {raw_name!r} holds {text!r}, not a number or n/a") from None
    tod = _TOD.match(fields[0])
    if tod is None:
        raise line.fail(f"unreadable time of day {fields[0]!r}")
    hour, minute, second, milli = (int(g) for g in tod.groups())
    day_seconds = hour * 3600 + minute * 60 + second
    if lead == 4:
        when, zone = _stamped(line, fields[1], day_seconds), _STAMP.match(fields[1])
        zone_name = zone.group(7) if zone else None
    else:
        when, zone_name = day.date_of(day_seconds), None
    local = (datetime(when.year, when.month, when.day) + timedelta(seconds=day_seconds, milliseconds=milli)
             if when is not None else None)
    return FlatRow(line, fields[lead - 2], fields[lead - 1], local, zone_name, values, clock)


_STAMP = re.compile(r"^(\d\d)/(\d\d)/(\d{4})-(\d\d):(\d\d):(\d\d)-(\w+)$")
_TOD = re.compile(r"^(\d\d):(\d\d):(\d\d)\.(\d{3})$")


def _stamped(line: Line, stamp: str, day_seconds: int) -> date:
    """The row's date from `timestamp` (MM/DD/YYYY-HH:MM:SS-ZONE), for the time of day in `tod`.

    tod and timestamp come from one clock read; a stamp just before midnight with a tod just
    after can happen (rounding), so the date follows tod across that midnight."""
    s = _STAMP.match(stamp)
    if s is None:
        raise line.fail(f"unreadable timestamp {stamp!r}")
    stamp_seconds = int(s.group(4)) * 3600 + int(s.group(5)) * 60 + int(s.group(6))
    day_shift = -1 if day_seconds - stamp_seconds > DAY_S // 2 else 1 if stamp_seconds - day_seconds > DAY_S // 2 else 0
    return date(int(s.group(3)), int(s.group(1)), int(s.group(2))) + timedelta(days=day_shift)


class _Days:
    """Dates for rows without a timestamp (5.04.01): summary.html's creation date, one day later
    each time tod goes back by more than half a day (midnight passed; rows are in time order)."""

    def __init__(self, clock: Clock) -> None:
        created = clock.created
        self.day = created.date() if created else None
        self.last_s = created.hour * 3600 + created.minute * 60 + created.second if created else 0

    def date_of(self, day_seconds: int) -> date | None:
        if self.day is None:
            return None
        if self.last_s - day_seconds > DAY_S // 2:
            self.day += timedelta(days=1)
        self.last_s = day_seconds
        return self.day
