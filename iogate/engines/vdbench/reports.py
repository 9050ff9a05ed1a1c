"""Summary-format reports: summary.html and the per-SD / per-WD / per-host ones.

Each run point starts with a 'Starting RD=' header, then a two-line column
header and rows `tod interval rate MB/sec bytes/io read% resp read_resp
write_resp resp_max resp_std queue_depth cpu%sys+u cpu%sys` (block workloads).
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
_BLOCK_HEADER = re.compile(r"interval\s+i/o\s+MB/sec\s+bytes\s+read\s+resp")
_FS_HEADER = re.compile(r"\.Interval\.\s+\.ReqstdOps")
BLOCK_FIELDS = 14


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
    for line in read_lines(path):
        label = run_label(line)
        if label is not None:
            points.append(ReportPoint(label))
            continue
        if _FS_HEADER.search(line.text):
            raise line.fail("file-system report layout where a block (SD/WD/host) report was expected")
        match = _ROW.match(line.text)
        if match is None:
            continue
        if not points:
            raise line.fail("report row before any 'Starting RD=' line")
        points[-1].rows.append(ReportRow(line, match.group(1), _block_stats(line)))
    return points


def _block_stats(line: Line) -> Stats:
    fields = line.text.split()
    if len(fields) != BLOCK_FIELDS:
        raise line.fail(f"{len(fields)} fields where a block report row has {BLOCK_FIELDS}")
    try:
        rate, mb, _bytes, read_pct, resp, read_resp, write_resp, resp_max, _std, _qd, cpu_total, cpu_sys = (
            float(f) for f in fields[2:])
    except ValueError:
        raise line.fail("a report field is not a number") from None
    read_iops = rate * read_pct / 100
    return Stats(
        iops=rate, mb_per_s=mb, read_iops=read_iops, write_iops=rate - read_iops,
        resp_ms=resp, read_resp_ms=read_resp, write_resp_ms=write_resp, resp_max_ms=resp_max,
        reqrate=None, cpu_user_pct=cpu_total - cpu_sys, cpu_kernel_pct=cpu_sys,
        mb_read_per_s=None, mb_write_per_s=None,
    )
