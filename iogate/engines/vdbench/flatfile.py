"""flatfile.html: one header line of column names, then one row per interval and per run average.

Rows of one run point are `Interval` 1..N followed by vdbench's own average row
`avg_X-Y`. `n/a` means "not available or conflicting" (e.g. xfersize of a run
with two workloads) and is kept as None; a number that a statistic needs but is
n/a is an error naming the line. Block (wd) and file system (fwd) runs write
different columns; `Stats` gives both the same shape.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from iogate.engines.vdbench.source import Line, read_lines
from iogate.errors import EngineError

_AVG = re.compile(r"^avg_(\d+)-(\d+)$")
_LEAD = ("tod", "timestamp", "Run", "Interval")


@dataclass(frozen=True)
class FlatRow:
    line: Line
    run: str
    interval: str  # "7" or "avg_3-12"
    t_ms: int  # when vdbench wrote the row (the interval's end), epoch ms
    values: Mapping[str, float | None]

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


def parse_flatfile(path: Path) -> list[FlatPoint]:
    lines = read_lines(path)
    header: list[str] | None = None
    points: list[FlatPoint] = []
    pending: list[FlatRow] = []
    last: Line | None = None
    for line in lines:
        text = line.text.strip()
        if not text or text.startswith("*") or (header is None and line.number == 1 and text.startswith("Vdbench")):
            continue
        fields = text.split()
        if header is None:
            if tuple(fields[:4]) != _LEAD:
                raise line.fail(f"expected the column header ({' '.join(_LEAD)} ...)")
            header = fields
            continue
        if len(fields) != len(header):
            raise line.fail(f"{len(fields)} fields where the header has {len(header)} columns")
        last = line
        row = _row(line, header, fields)
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
    if header is None:
        raise EngineError(f"{path}: no column header (tod timestamp Run Interval ...) in the flatfile")
    if pending and last is not None:
        raise last.fail(f"run {pending[0].run} ends without its avg_X-Y row (vdbench stopped mid-run)")
    return points


def parse_rows(text: str, path: Path = Path("flatfile.html")) -> list[FlatRow]:
    """The complete rows of a flatfile vdbench is still writing (a run in progress): no
    checks, a torn last line is left out. For live steering only; results use parse_flatfile."""
    header: list[str] | None = None
    rows = []
    lines = text.split("\n")[:-1]  # the part after the last newline may be torn
    for number, raw in enumerate(lines, start=1):
        fields = raw.split()
        if header is None:
            header = fields if tuple(fields[:4]) == _LEAD else None
            continue
        if len(fields) == len(header):
            try:
                rows.append(_row(Line(path, number, raw), header, fields))
            except EngineError:
                continue
    return rows


def _row(line: Line, header: list[str], fields: list[str]) -> FlatRow:
    values: dict[str, float | None] = {}
    for name, text in zip(header[4:], fields[4:], strict=True):
        if text == "n/a":
            values[name] = None
            continue
        try:
            values[name] = float(text)
        except ValueError:
            raise line.fail(f"column {name!r} holds {text!r}, not a number or n/a") from None
    return FlatRow(line, fields[2], fields[3], _epoch_ms(line, fields[0], fields[1]), values)


_STAMP = re.compile(r"^(\d\d)/(\d\d)/(\d{4})-(\d\d):(\d\d):(\d\d)-(\w+)$")
_TOD = re.compile(r"^(\d\d):(\d\d):(\d\d)\.(\d{3})$")


def _epoch_ms(line: Line, tod: str, stamp: str) -> int:
    """Date and zone from `timestamp` (MM/DD/YYYY-HH:MM:SS-ZONE), milliseconds from `tod`.

    vdbench prints the zone as an abbreviation: UTC/GMT, or this machine's own zone
    (parsing a foreign abbreviation would be a guess, so it is an error).
    """
    s, t = _STAMP.match(stamp), _TOD.match(tod)
    if s is None or t is None:
        raise line.fail(f"unreadable time {tod!r} {stamp!r}")
    month, day, year, zone = int(s.group(1)), int(s.group(2)), int(s.group(3)), s.group(7)
    hour, minute, second, milli = (int(g) for g in t.groups())
    day_seconds = hour * 3600 + minute * 60 + second
    stamp_seconds = int(s.group(4)) * 3600 + int(s.group(5)) * 60 + int(s.group(6))
    # tod and timestamp come from one clock read; tod past midnight while the stamp is not
    # cannot happen, but a stamp just before midnight with a tod just after can (rounding).
    day_shift = -1 if day_seconds - stamp_seconds > 43200 else 1 if stamp_seconds - day_seconds > 43200 else 0
    if zone in ("UTC", "GMT"):
        base = datetime(year, month, day, tzinfo=UTC).timestamp()
    elif zone in time.tzname:
        base = time.mktime((year, month, day, 0, 0, 0, 0, 0, -1))
    else:
        raise line.fail(f"time zone {zone!r} is neither UTC nor this machine's")
    return round((base + day_shift * 86400 + day_seconds) * 1000) + milli
