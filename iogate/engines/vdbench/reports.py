"""Summary-format reports: summary.html and the per-SD / per-WD / per-host ones.

Each run point starts with a 'Starting RD=' header, then a two-line column
header and rows `tod interval rate MB/sec bytes/io read% resp read_resp
write_resp resp_max resp_std queue_depth cpu%sys+u cpu%sys` (block workloads,
14 fields, 5.04.01-5.04.06). 5.04.07 prints read max and write max instead of
resp max (15 fields), and on a host without CPU figures (macOS) no cpu columns
(13). Which layout a table has is read from its own column header (`max` twice,
`sys+u` present or not), never guessed from the field count.
File-system runs use another layout (`.Interval. .ReqstdOps...`); their
per-FSD/FWD reports are not split into jobs here (the flatfile totals are the
run point's one job), so those files are not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from iogate.engines.vdbench.flatfile import Stats
from iogate.engines.vdbench.source import Line, read_lines, run_label

_ROW = re.compile(r"^\d\d:\d\d:\d\d\.\d{3}\s+(\d+|avg_\d+-\d+)\s")
_FS_HEADER = re.compile(r"\.Interval\.+\s+\.ReqstdOps")  # 5.04.06 ".Interval.", 5.04.07 "..Interval.."
# The second line of a block table's column header: "rate  1024**2  i/o  pct  time  resp  resp  max ..."
_UNITS = re.compile(r"^\s*rate\s+1024\*\*2\s+i/o\s+pct\s+time\b")


@dataclass(frozen=True)
class BlockLayout:
    """A block report's columns after tod and interval, as its column header names them."""

    split_max: bool  # 5.04.07: read max and write max, no resp max
    cpu: bool  # cpu% sys+u and cpu% sys (absent where vdbench has no CPU figures, e.g. macOS)

    @property
    def fields(self) -> int:
        return 2 + 9 + (2 if self.split_max else 1) + (2 if self.cpu else 0)


OLD_LAYOUT = BlockLayout(split_max=False, cpu=True)  # 5.04.01-5.04.06: 14 fields
BLOCK_FIELDS = OLD_LAYOUT.fields


def block_layout(units_line: str) -> BlockLayout:
    """The layout a column header's units line names."""
    words = units_line.split()
    return BlockLayout(split_max=words.count("max") == 2, cpu="sys+u" in words)


@dataclass(frozen=True)
class ReportRow:
    line: Line
    interval: str
    stats: Stats


@dataclass
class ReportPoint:
    label: str
    rows: list[ReportRow] = field(default_factory=list)

    @property
    def intervals(self) -> list[ReportRow]:
        return [r for r in self.rows if r.interval.isdigit()]

    @property
    def avg(self) -> ReportRow | None:
        return next((r for r in self.rows if r.interval.startswith("avg_")), None)


def is_file_system(path: Path) -> bool:
    return any(_FS_HEADER.search(line.text) for line in read_lines(path))


def parse_report(path: Path) -> list[ReportPoint]:
    """Run points of a block-workload summary-format report, in file order."""
    points: list[ReportPoint] = []
    layout: BlockLayout | None = None
    for line in read_lines(path):
        label = run_label(line)
        if label is not None:
            points.append(ReportPoint(label))
            continue
        if _FS_HEADER.search(line.text):
            raise line.fail("file-system report layout where a block (SD/WD/host) report was expected")
        if _UNITS.match(line.text):
            layout = block_layout(line.text)
            continue
        match = _ROW.match(line.text)
        if match is None:
            continue
        if not points:
            raise line.fail("report row before any 'Starting RD=' line")
        if layout is None:
            raise line.fail("report row before its column header")
        points[-1].rows.append(ReportRow(line, match.group(1), block_stats(line, layout)))
    return points


def block_stats(line: Line, layout: BlockLayout = OLD_LAYOUT) -> Stats:
    fields = line.text.split()
    if len(fields) != layout.fields:
        raise line.fail(f"{len(fields)} fields where this report's column header names {layout.fields}")
    try:
        values = [float(f) for f in fields[2:]]
    except ValueError:
        raise line.fail("a report field is not a number") from None
    rate, mb, _bytes, read_pct, resp, read_resp, write_resp = values[:7]
    maxima = values[7:9] if layout.split_max else values[7:8]
    cpu_total, cpu_sys = values[-2:] if layout.cpu else (None, None)
    read_iops = rate * read_pct / 100
    return Stats(
        iops=rate, mb_per_s=mb, read_iops=read_iops, write_iops=rate - read_iops,
        resp_ms=resp, read_resp_ms=read_resp, write_resp_ms=write_resp, resp_max_ms=max(maxima),
        reqrate=None, cpu_user_pct=None if cpu_total is None or cpu_sys is None else cpu_total - cpu_sys,
        cpu_kernel_pct=cpu_sys, mb_read_per_s=None, mb_write_per_s=None,
    )
