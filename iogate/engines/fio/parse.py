"""Parse fio json+ output and per-second logs into the typed records.

Unknown or broken output raises EngineError naming the file; it never turns
into zeros that a criterion would then happily judge. Every json/json+ layout
since fio 3.0 is read (what each version writes: iogate.engines.fio.versions);
fio 2.x is refused naming its version. A whole file (json, json+,
client/server) is read by iogate.engines.fio.output.read_fio_output.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iogate.engines.fio.versions import require_readable
from iogate.errors import EngineError
from iogate.metrics.bincounts import BinCounts
from iogate.metrics.histogram import PLAT_NR
from iogate.metrics.latency import LatencyHistogram
from iogate.metrics.merge import merge_directions
from iogate.metrics.types import JITTER_FRACTION, Dir, Direction, HistSample, JobResult, JobSpan, LatencyStats, Sample

_DDIR = {0: Dir.READ, 1: Dir.WRITE, 2: Dir.TRIM}
# What fio's json+ bins count: fio resets its statistics after ramp_time, so the measured phase only.
FIO_COVERS = "fio json+ bins: every completion of the measured phase (after ramp_time)"
_LOG_NAME = re.compile(r"^(?P<job>.+)_(?P<kind>iops|clat|clat_hist)\.(?P<n>\d+)\.log$")


def load_json(text: str, source: str) -> dict[str, Any]:
    """The final fio report in text.

    fio may print warnings before the JSON, and with --status-interval the file
    holds one report per interval before the final one: the last report wins.
    """
    decoder = json.JSONDecoder()
    start = text.find("{")
    if start < 0:
        raise EngineError(f"{source}: no JSON in fio output: {text[:300]!r}")
    last: Any = None
    while start >= 0:
        try:
            last, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            if last is None:
                raise EngineError(f"{source}: fio output is not valid JSON: {exc}") from exc
            raise EngineError(f"{source}: fio output ends in a truncated report: {exc}") from exc
        start = text.find("{", end)
    if not isinstance(last, dict) or not ("jobs" in last or "client_stats" in last):
        raise EngineError(f"{source}: not fio json output (no 'jobs' or 'client_stats')")
    require_readable(last, source)
    return last


def latency_samples(raw: Mapping[str, Any] | None, total_ios: int) -> int:
    """How many samples a latency section holds, whatever the fio version (see versions.py).

    fio 3.18 on writes `N`. Up to 3.17 there is none: the json+ bins count every sample, and
    without bins every completed I/O of the direction (`total_ios`) was one, unless the section
    is fio's all-zero placeholder for no samples (latency disabled, or no I/O)."""
    if not raw:
        return 0
    if "N" in raw:
        return int(raw["N"])
    if raw.get("bins"):
        return sum(int(count) for count in raw["bins"].values())
    if not (float(raw.get("min", 0)) or float(raw.get("max", 0)) or float(raw.get("mean", 0))):
        return 0
    return total_ios


def _latency(raw: Mapping[str, Any] | None, total_ios: int) -> LatencyStats:
    samples = latency_samples(raw, total_ios)
    if not raw or not samples:
        return LatencyStats()
    return LatencyStats(
        min_ns=float(raw["min"]),
        max_ns=float(raw["max"]),
        mean_ns=float(raw["mean"]),
        stddev_ns=float(raw["stddev"]),
        samples=samples,
        histogram=_histogram(raw.get("bins")),
    )


def bandwidth_bytes_per_s(raw: Mapping[str, Any]) -> float:
    """`bw_bytes`, or where fio did not write it yet (3.1) fio's own formula: io_bytes x 1000 / runtime_ms
    in integers (stat.c; 3.7 writes 32576098 for 488804352 bytes in 15005 ms)."""
    if "bw_bytes" in raw:
        return float(raw["bw_bytes"])
    runtime_ms = int(raw["runtime"])
    return float(int(raw["io_bytes"]) * 1000 // runtime_ms) if runtime_ms else 0.0


def _histogram(bins: Mapping[str, Any] | None) -> LatencyHistogram | None:
    """json+ bins as a FIO_BINS histogram (None without json+ bins: plain json, or lat_ns)."""
    if bins is None:
        return None
    try:
        return LatencyHistogram.from_fio_json_bins(bins, covers=FIO_COVERS)
    except ValueError as exc:
        raise EngineError(f"fio json+ bins: {exc}") from exc


def completed_ios(raw: Mapping[str, Any]) -> int:
    """The I/Os of a direction that completed in the measured phase.

    fio's `total_ios` counts I/Os when they are issued and restarts at the end of ramp_time, so the
    I/Os in flight at that moment complete inside the measured phase uncounted, and its json `iops`
    (total_ios x 1000 / runtime, stat.c) under-reads a deep queue by up to iodepth / runtime. Measured
    with fio 3.33 at iodepth 128 on a loop device capped at 500 read IOPS, ramp 1 s, runtime 1 s:
    total_ios 508 and iops 421.9, where 635 I/Os completed (clat samples, io_bytes / bs) in 1204 ms.
    A completion is one clat sample (else one lat sample); without either, total_ios is all there is."""
    issued = int(raw["total_ios"])
    for section in ("clat_ns", "lat_ns"):
        samples = latency_samples(raw.get(section), issued)
        if samples:
            return samples
    return issued


def parse_direction(direction: Dir, raw: Mapping[str, Any]) -> Direction:
    try:
        ios = completed_ios(raw)
        runtime_ms = int(raw["runtime"])
        return Direction(
            dir=direction,
            ios=ios,
            io_bytes=int(raw["io_bytes"]),
            runtime_ms=runtime_ms,
            iops=ios * 1000 / runtime_ms if runtime_ms else 0.0,
            bw_bytes_per_s=bandwidth_bytes_per_s(raw),
            clat=_latency(raw.get("clat_ns"), ios),
            lat=_latency(raw.get("lat_ns"), ios),
            short_ios=int(raw.get("short_ios", 0)),
            drop_ios=int(raw.get("drop_ios", 0)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise EngineError(f"fio json: {direction} section lacks {exc}") from exc


@dataclass(frozen=True)
class JobEntry:
    """One json job entry (one clone, or a job under group_reporting) reduced to its typed directions:
    what a host's json+ is kept as while the rest of a client/server document is still being read."""

    name: str
    directions: Mapping[Dir, Direction]
    error: int
    usr_cpu_pct: float
    sys_cpu_pct: float
    runtime_ms: int  # entry_runtime_ms


def parse_entry(raw: Mapping[str, Any]) -> JobEntry:
    """One json job entry, checked (a jobname, every direction section) and reduced to bins."""
    if "jobname" not in raw:
        raise EngineError("fio json: a job entry names no 'jobname'")
    name = raw["jobname"]
    _require_directions(name, raw)
    return JobEntry(name, {d: parse_direction(d, raw[d.value]) for d in Dir}, int(raw.get("error", 0)),
                    float(raw.get("usr_cpu", 0)), float(raw.get("sys_cpu", 0)), entry_runtime_ms(raw))


def jobs_of_entries(entries: Iterable[JobEntry], host: str) -> list[JobResult]:
    """JobResults of one host's entries (in the order jobs first appear); numjobs clones of a job merge into one."""
    grouped: dict[str, list[JobEntry]] = defaultdict(list)
    for entry in entries:
        grouped[entry.name].append(entry)
    return [
        JobResult(
            name=name,
            host=host,
            directions={d: merge_directions(d, [c.directions[d] for c in clones]) for d in Dir},
            error=sum(c.error for c in clones),
            usr_cpu_pct=sum(c.usr_cpu_pct for c in clones),
            sys_cpu_pct=sum(c.sys_cpu_pct for c in clones),
        )
        for name, clones in grouped.items()
    ]


def parse_jobs(data: Mapping[str, Any], host: str) -> list[JobResult]:
    """JobResults of one host's fio output; numjobs clones of a job merge into one."""
    raw_jobs = data.get("jobs")
    if raw_jobs is None:
        raise EngineError("fio json: no 'jobs' (client/server output goes through client_server parsing)")
    for raw in raw_jobs:
        if "jobname" not in raw:
            raise EngineError("fio json: a job entry names no 'jobname'")
    return jobs_of_entries((parse_entry(raw) for raw in raw_jobs), host)


def _require_directions(name: str, raw: Mapping[str, Any]) -> None:
    """Every job entry carries a read, write and trim section; unified_rw_reporting writes one
    "mixed" section instead, whose I/Os cannot be told apart by direction."""
    if "mixed" in raw:
        raise EngineError(f"fio json: job {name!r} was run with unified_rw_reporting (one 'mixed' section): "
                          "its reads and writes cannot be told apart, so it is not read")
    missing = [d.value for d in Dir if not isinstance(raw.get(d.value), Mapping)]
    if missing:
        raise EngineError(f"fio json: job {name!r} has no {', '.join(missing)} section")


def _log_rows(text: str, source: str) -> Iterable[list[str]]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 3:
            raise EngineError(f"{source} line {number}: not a fio log line: {line[:80]!r}")
        yield fields


_NONZERO = re.compile(r"[1-9][0-9]*")
_HIST_HEADER = 3  # t_ms, ddir, bs (fio 3.x log_hist_msec, log_hist_coarseness=0)
_FIO_CHARS = b"0123456789, "


def _fio_formatted(line: str) -> bool:
    """Whether a hist log line is exactly as fio writes it (decimal digits, ", " between fields),
    checked at C speed; such a line's fields are all integers."""
    try:
        data = line.encode("ascii")
    except UnicodeEncodeError:
        return False
    return (not data.translate(None, _FIO_CHARS) and data.count(b" ") == data.count(b", ")
            and b", ," not in data and b",," not in data
            and not data.startswith(b",") and not data.endswith(b",") and not data.endswith(b", "))


def _lines(text: str) -> Iterator[str]:
    """The lines of a text one at a time (splitlines would copy a host-hour's 20 MB at once)."""
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", start)
        if stop < 0:
            stop = end
        yield text[start:stop]
        start = stop + 1


def hist_log_lines(text: str, where: str) -> Iterator[tuple[int, int, BinCounts]]:
    """(t_ms, fio's ddir number, the non-zero bins) of each line of a clat_hist log. An hour of 1 s
    lines from 100 hosts is 360,000 lines of 1859 fields, ~10 of them non-zero: in a line as fio
    writes it (_fio_formatted) only those are converted, each one's bin the count of commas before
    it; any other line goes field by field. Either way every field must be an integer and a line
    must hold exactly PLAT_NR bins after its 3 header fields, else EngineError naming `where` and the line."""
    for number, line in enumerate(_lines(text), 1):
        if not line.strip():
            continue
        fields = line.count(",") + 1
        if fields != _HIST_HEADER + PLAT_NR:
            raise EngineError(f"{where}: histogram line has {fields - _HIST_HEADER} bins, expected {PLAT_NR} "
                              f"(log_hist_coarseness must be 0; line {number})")
        if not _fio_formatted(line):
            try:
                numbers = [int(field) for field in line.split(",")]
            except ValueError:
                raise EngineError(f"{where} line {number}: a field that is not an integer in {line[:60]!r}...") from None
            try:
                counts = BinCounts.from_dense(numbers[_HIST_HEADER:])
            except ValueError as exc:
                raise EngineError(f"{where} line {number}: {exc}") from None
            yield numbers[0], numbers[1], counts
            continue
        first = line.index(",")
        second = line.index(",", first + 1)
        start = line.index(",", second + 1) + 1
        indexes, counts_ = [], []
        index, last = 0, start
        for match in _NONZERO.finditer(line, start):
            at = match.start()
            index += line.count(",", last, at)
            last = at
            indexes.append(index)
            counts_.append(int(match.group()))
        yield int(line[:first]), int(line[first + 1:second]), BinCounts._trusted(indexes, counts_)


def _nearest(times: list[int], values: list[float], t_ms: int, within_ms: int) -> float | None:
    """Value logged closest to t_ms, if within the tolerance; None (unknown, never 0 ns) otherwise."""
    index = bisect.bisect_left(times, t_ms)
    best = min((i for i in (index - 1, index) if 0 <= i < len(times)), key=lambda i: abs(times[i] - t_ms), default=None)
    return values[best] if best is not None and abs(times[best] - t_ms) <= within_ms else None


def _overlap_ms(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def line_spans(points: list[tuple[int, float]], counts: list[tuple[int, int]], interval_ms: int) -> list[tuple[int, int]]:
    """The time each iops-log line's rate covers: (its stamp - interval_ms, its stamp], cut at the line before;
    or back to the line before where fio's helper thread ticked late.

    fio's helper logs rate = I/Os x 1000 / ms since its previous tick, and restarts that count at every
    tick, also one that found no I/O and logged nothing (stat.c __add_samples). So a gap of more than an
    interval between two lines is either a real stall (ticks found no I/O; the next line covers its last
    interval only) or one late tick (the line covers the whole gap: seen in TCG guests and loaded hosts,
    where a phase 600 ms late read a phantom 0 IOPS second). The iops log cannot tell the two apart;
    the clat_hist log can: its lines are written on the completion path, so they go on through a late
    tick and stop in a stall. A gap's uncovered part (the line before, the stamp - interval_ms] is
    credited to the line when hist lines were written all through it (no two more than two intervals
    apart: _completions_throughout) and counted more I/Os than the logged intervals they
    overlap can hold (each at its logged rate + 1, fio's truncation), and that surplus is at least one
    I/O and half of what the line's rate implies over the uncovered part. A stall leaves no surplus
    (the hist line spanning it counts only the I/Os of its edges, which the edge lines hold); a late
    tick leaves about all of it. No hist log: every gap stays a stall (never credited without proof).
    """
    late_ms = interval_ms * (1 + JITTER_FRACTION)
    nominal = [(max(t - interval_ms, points[i - 1][0] if i else t - interval_ms), t) for i, (t, _) in enumerate(points)]
    start = nominal[0][0] if points else 0
    hist = [(start, 0), *((t_ms, count) for t_ms, count in counts if t_ms > start)]
    hist_ends = [t_ms for t_ms, _ in hist]
    ends = [end for _, end in nominal]
    spans = []
    for i, ((begin, t_ms), (_, value)) in enumerate(zip(nominal, points, strict=True)):
        before = points[i - 1][0] if i else begin
        if t_ms - before > late_ms and len(hist) > 1 and _completions_throughout(hist_ends, (before, t_ms - interval_ms), interval_ms):
            gap = (before, t_ms - interval_ms)
            surplus = 0.0
            for k in range(max(bisect.bisect_right(hist_ends, gap[0]), 1), len(hist)):
                span = (hist[k - 1][0], hist[k][0])
                if span[0] >= gap[1]:
                    break
                held = 0.0
                for j in range(bisect.bisect_right(ends, span[0]), len(nominal)):
                    if nominal[j][0] >= span[1]:
                        break
                    held += (points[j][1] + 1) * _overlap_ms(nominal[j], span) / 1000
                surplus += max(hist[k][1] - held, 0.0)
            if surplus >= max(1.0, value * (gap[1] - gap[0]) / 1000 / 2):
                begin = before
        spans.append((begin, t_ms))
    return spans


def _completions_throughout(hist_ends: list[int], gap: tuple[int, int], interval_ms: int) -> bool:
    """Whether the hist log shows completions all through `gap`: its lines are written at the first
    completion an interval after the line before, so while I/O flows they come about an interval apart,
    and two lines more than two intervals apart mean a second without a completion. Stamps from the
    last line at or before the gap to the first after it are read (a SIGSTOPped fio, whose late line
    covers the stop at a low mean rate, shows one line before the stop and the next after it)."""
    first = max(bisect.bisect_right(hist_ends, gap[0]) - 1, 0)
    last = bisect.bisect_left(hist_ends, gap[1])
    if last >= len(hist_ends):
        return False  # the hist log ends inside the gap: nothing shows the I/O went on
    return all(b - a <= 2 * interval_ms for a, b in itertools.pairwise(hist_ends[first:last + 1]))


def exact_iops(points: list[tuple[int, float]], counts: list[tuple[int, int]], interval_ms: int,
               spans: list[tuple[int, int]] | None = None) -> list[float]:
    """The IOPS of each iops-log line (sorted by time), from the clat_hist log's exact counts where it has them.

    fio logs an interval's IOPS as an integer ((I/Os x 1000) // ms, stat.c
    __add_samples): 1 write in 1002 ms is logged 0, 8 reads as 7. Its hist log
    (log_hist_msec, same clock and epoch stamps) writes a line at the first
    completion after each hist_msec boundary, counting exactly every I/O since
    the line before: a line covers (the stamp before, its stamp]. The first line
    counts from the start of the measured phase (fio resets its histograms when
    the ramp ends; seen with fio 3.33), taken as the first iops-log interval's start.

    An iops-log line stands for its span (line_spans: one interval, cut at the
    line before it, or the whole gap after a late helper tick). Each hist line's count goes to the iops-log intervals
    its span overlaps, in proportion to overlap x (logged IOPS + 0.5): only
    intervals with an iops line, i.e. with a completion, so the I/Os done when
    a stalled fio resumes are not smeared back over the stall, and within the
    span the truncated log still says where the I/Os fell (+0.5: the true rate
    lies in [logged, logged + 1), and a '0' line had a completion). The part of
    a span outside the logged intervals (fio's unlogged last partial interval)
    takes its time's share of the count with it (a span overlapping no logged
    interval at all, never seen from fio, counts nowhere: an I/O is never put
    in an interval fio did not log). A line's IOPS is then its
    count over its real length, held within [logged, logged + 1]: the true
    rate lies there, and hist spans straddle iops intervals (at 800 IOPS a
    throttled burst on one side of a boundary would otherwise move tens of
    I/Os between intervals). The part of an interval outside the hist
    coverage (after the last hist line: fio does not flush its last partial
    hist interval), and every interval of a job, clone and direction with no
    hist log, keeps the iops log's (truncated) value.
    """
    spans = spans if spans is not None else line_spans(points, counts, interval_ms)
    counts = [(t_ms, count) for t_ms, count in counts if points and t_ms > spans[0][0]]
    if not counts:
        return [value for _, value in points]
    ends = [end for _, end in spans]
    logged = (spans[0][0], ends[-1])
    counts = [(spans[0][0], 0), *counts]
    shares = [0.0] * len(points)
    for (before_ms, _), (stamp_ms, count) in itertools.pairwise(counts):
        span = (before_ms, stamp_ms)
        if stamp_ms <= before_ms or not (inside_ms := _overlap_ms(span, logged)):
            continue
        weights: list[tuple[int, float]] = []
        for i in range(bisect.bisect_right(ends, before_ms), len(spans)):
            if spans[i][0] >= stamp_ms:
                break
            if (ms := _overlap_ms(spans[i], span)) > 0:
                weights.append((i, ms * (points[i][1] + 0.5)))
        total = sum(w for _, w in weights)
        for i, weight in weights:
            shares[i] += count * inside_ms / (stamp_ms - before_ms) * weight / total
    coverage = (counts[0][0], counts[-1][0])
    result: list[float] = []
    wanted_ios = held_ios = 0.0
    for (start, end), share, (_, value) in zip(spans, shares, points, strict=True):
        length_ms = end - start
        if length_ms <= 0:
            result.append(value)
            continue
        uncovered_ms = length_ms - _overlap_ms((start, end), coverage)
        ios = share + value * uncovered_ms / 1000
        from_counts = ios * 1000 / length_ms
        # fio truncated the true rate to `value`, so it lies in [value, value + 1]: the hist lines'
        # share (their spans straddle the iops intervals, and I/O is bursty at high rates) only
        # recovers the truncated fraction, never moves an interval by more than that.
        held = min(max(from_counts, value), value + 1)
        result.append(held)
        wanted_ios += ios
        held_ios += held * length_ms / 1000
    return _conserve(result, spans, points, wanted_ios - held_ios)


def _conserve(result: list[float], spans: list[tuple[int, int]], points: list[tuple[int, float]],
              missing_ios: float) -> list[float]:
    """Give back the I/Os the [logged, logged + 1] clamp took or added, where the clamp leaves room.

    The hist lines count every completion exactly; holding each interval in its truncation bounds
    must not change how many I/Os the run did. The difference goes to the intervals with room
    left in the direction needed, in proportion to that room, so no interval leaves its bounds and
    the total equals the counted I/Os whenever the bounds allow it.
    """
    if abs(missing_ios) < 1e-9:
        return result
    up = missing_ios > 0
    room = []
    for (start, end), held, (_, value) in zip(spans, result, points, strict=True):
        seconds = max(end - start, 0) / 1000
        room.append(((value + 1 - held) if up else (held - value)) * seconds)
    total_room = sum(room)
    if total_room <= 0:
        return result
    moved = min(abs(missing_ios), total_room) / total_room
    adjusted = []
    for (start, end), held, spare in zip(spans, result, room, strict=True):
        seconds = (end - start) / 1000
        step = spare * moved / seconds if seconds > 0 else 0.0
        adjusted.append(held + step if up else held - step)
    return adjusted


def _by_stamp(counts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Hist lines in time order, lines with one stamp merged (fio writes one per completion when it
    catches up after a stall, and two completions may share a millisecond)."""
    merged: dict[int, int] = defaultdict(int)
    for t_ms, count in counts:
        merged[t_ms] += count
    return sorted(merged.items())


def parse_logs(files: Mapping[str, str], host: str, interval_ms: int = 1000) -> tuple[list[Sample], list[HistSample]]:
    """Per-second samples from fio log files given as {file name: text}.

    A sample's IOPS comes from the clat_hist log's exact completion counts over
    the interval's real length wherever a hist line covers it, and from fio's
    IOPS log (which truncates to whole numbers) only where no hist log exists
    (see exact_iops). The grid (iogate.metrics.grid) still treats an interval
    with no line as 0 IOPS, unless the hist log proves fio's helper ticked
    late and the next line's rate covers it (line_spans, Sample.since_ms).
    IOPS and mean-clat logs pair up by (job, clone, direction) and nearest time:
    fio stamps the two logs up to a few hundred ms apart; an IOPS line with no
    clat line within half an interval gets clat_mean_ns None (unknown, not 0).
    numjobs clones stay separate samples of the same job (`clone` = the log
    file number), each on its own interval grid (iogate.metrics.grid).
    """
    iops: dict[tuple[str, str, Dir], list[tuple[int, float]]] = defaultdict(list)
    clat: dict[tuple[str, str, Dir], list[tuple[int, float]]] = defaultdict(list)
    hist_counts: dict[tuple[str, str, Dir], list[tuple[int, int]]] = defaultdict(list)
    hist: list[HistSample] = []
    for name, text in files.items():
        match = _LOG_NAME.match(Path(name).name)
        if not match:
            continue
        job, kind, clone = match["job"], match["kind"], match["n"]
        if kind == "clat_hist":
            for t_ms, code, counts in hist_log_lines(text, name):
                ddir = _DDIR.get(code)
                if ddir is not None:
                    hist.append(HistSample(t_ms, job, host, ddir, counts))
                    hist_counts[(job, clone, ddir)].append((t_ms, counts.total))
            continue
        for fields in _log_rows(text, name):
            t_ms, ddir = int(fields[0]), _DDIR.get(int(fields[2]))
            if ddir is None:
                continue
            else:
                (iops if kind == "iops" else clat)[(job, clone, ddir)].append((t_ms, float(fields[1])))
    samples = []
    for key, points in iops.items():
        points.sort(key=lambda p: p[0])
        counts = _by_stamp(hist_counts.get(key, []))
        spans = line_spans(points, counts, interval_ms)
        exact = exact_iops(points, counts, interval_ms, spans)
        rates = [(t_ms, value, begin if t_ms - begin > interval_ms else None)
                 for (t_ms, _), value, (begin, _) in zip(points, exact, spans, strict=True)]
        samples += _samples(key, host, rates, clat.get(key, []), interval_ms)
    for key, counts in hist_counts.items():
        if key not in iops:
            samples += _samples(key, host, _counted_only(_by_stamp(counts), interval_ms), clat.get(key, []), interval_ms)
    samples.sort(key=lambda s: (s.t_ms, s.job, s.clone, s.dir.value))
    return samples, hist


def _samples(key: tuple[str, str, Dir], host: str, rates: Iterable[tuple[int, float, int | None]],
             latency: list[tuple[int, float]], interval_ms: int) -> list[Sample]:
    """One Sample per (t_ms, IOPS, since_ms) of a (job, clone, direction), each with the mean clat logged
    nearest to it."""
    latency = sorted(latency)
    times, values = [t for t, _ in latency], [v for _, v in latency]
    return [Sample(t_ms=t_ms, job=key[0], host=host, dir=key[2], iops=iops,
                   clat_mean_ns=_nearest(times, values, t_ms, interval_ms // 2), clone=int(key[1]), since_ms=since_ms)
            for t_ms, iops, since_ms in rates]


def _counted_only(counts: list[tuple[int, int]], interval_ms: int) -> list[tuple[int, float, int | None]]:
    """The (t_ms, IOPS, since_ms) of a direction fio's hist log counts and its iops log leaves out: a verify
    job's read-backs (fio counts an I/O of its verify list, IO_U_F_VER_LIST, in no iops-log interval, but in
    the clat and hist logs and the json). Left out, a job that writes 64 blocks and then reads them back read
    as silent in every read-back second: a false stall (an emulated lab's TCG guest, 2 s). Each hist line
    counts the I/Os since the line before: a line at most two intervals after it covers that span (the log is
    written at the first completion an interval after the line before, so the I/O went on); one further away
    is placed in its own interval at its mean rate over the whole span, and the seconds between stay 0 (a
    stall is never credited)."""
    rates: list[tuple[int, float, int | None]] = []
    before = counts[0][0] - interval_ms if counts else 0
    for t_ms, count in counts:
        span = t_ms - before
        through = span <= 2 * interval_ms
        rates.append((t_ms, count * 1000 / max(span, 1), before if through and span > interval_ms else None))
        before = t_ms
    return rates


def entry_runtime_ms(raw: Mapping[str, Any]) -> int:
    """How long one json entry (a job, or a job's clones under group_reporting) measured, in ms.

    A direction's `runtime` is the longest clone's; `job_runtime` is not used where directions
    say it: group_reporting makes it the sum of the clones' runtimes (fio 3.36, numjobs=2: 240001
    for a 120 s run), and after a signal it overstates the run (fio 3.33: 288990 for 48170 ms).
    An entry with no direction section (a status report line, a hand-made one) falls back to it."""
    runtimes = [int(raw[d.value]["runtime"]) for d in Dir if isinstance(raw.get(d.value), Mapping) and "runtime" in raw[d.value]]
    if runtimes and max(runtimes) > 0:
        return max(runtimes)
    # No direction did I/O (fio leaves their runtime 0): a job that stalled throughout still ran
    # its job_runtime, and a too long span only adds intervals of 0 IOPS (fails closed).
    return int(raw["job_runtime"]) if "job_runtime" in raw or not runtimes else 0


def _report_start_ms(data: Mapping[str, Any], host: str) -> tuple[int, dict[str, int]]:
    """(the report's start: its timestamp_ms minus the longest runtime, never too early;
    each job's runtime: its longest clone's, entry_runtime_ms)."""
    try:
        report_ms = int(data["timestamp_ms"])
        runtimes: dict[str, int] = defaultdict(int)
        for raw in data["jobs"]:
            runtimes[raw["jobname"]] = max(runtimes[raw["jobname"]], entry_runtime_ms(raw))
    except (KeyError, TypeError, ValueError) as exc:
        raise EngineError(f"fio json of host {host}: cannot tell when the jobs ran (lacks {exc})") from exc
    return report_ms - max(runtimes.values(), default=0), runtimes


def measured_start_ms(data: Mapping[str, Any], samples: Iterable[Sample], host: str, interval_ms: int = 1000) -> int:
    """When one fio process' measured phase began, on the epoch clock.

    fio resets its clock when the ramp ends and every job of the process starts measuring then. The
    report's timestamp_ms minus the longest runtime is a start never too early, but late by the
    time fio took to end its jobs and write the report: 25 rate-limited jobs in the TCG lab VM took
    1.0-1.1 s, so the judged window began a second late (dropping the first measured second) and
    ended a second after fio's last logged one (an interval of zeros: every low-rate VM "missed" its
    last 5 s interval). A job's first log line ends its first measured interval, so where the lines
    show an earlier start they set it; a process whose first second logged nothing keeps the
    report's (a stall there stays inside the judged window)."""
    start_ms, _ = _report_start_ms(data, host)
    firsts = [sample.t_ms for sample in samples]
    return min(start_ms, min(firsts) - interval_ms) if firsts else start_ms


def job_spans(data: Mapping[str, Any], host: str, start_ms: int | None = None,
              samples: Iterable[Sample] = ()) -> list[JobSpan]:
    """Each job's measured phase on the epoch clock, from what one fio process logged.

    Every job of one process starts measuring at `start_ms` (measured_start_ms: its first log
    lines, never later than the report's timestamp_ms minus the longest runtime). A job's span
    ends at its last logged interval, or its runtime after the start where that is later: fio
    writes no line for an interval without completions, so a job that stalled at its end logged
    nothing there, and the stall must stay inside the span (the grid counts it as 0 IOPS).
    The runtime is the job's longest direction `runtime` (entry_runtime_ms), never job_runtime,
    which group_reporting sums over clones and a signal inflates: intervals fio never ran would
    otherwise count as 0 IOPS.
    """
    report_start_ms, runtimes = _report_start_ms(data, host)
    if start_ms is None:
        start_ms = report_start_ms
    last_ms: dict[str, int] = {}
    for sample in samples:
        if sample.host == host:
            last_ms[sample.job] = max(last_ms.get(sample.job, sample.t_ms), sample.t_ms)
    return [JobSpan(host, name, start_ms, max(start_ms + runtime, last_ms.get(name, start_ms)))
            for name, runtime in sorted(runtimes.items())]
