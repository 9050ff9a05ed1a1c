"""A verify job's read-backs count in its seconds: fio's iops log leaves them out, its hist log does not.

The events tests run a verifier beside the load (iogate.events.load.verify_region): checked writes, each
VERIFY_BACKLOG of them read back. fio counts an I/O of its verify list in no iops-log interval (io_u
IO_U_F_VER_LIST: this_io_blocks is not advanced) but in its clat and hist logs and its json. Read from
the iops log alone, the verifier is silent in every read-back phase: on an emulated lab's TCG guest
(phases of 1.5-3 s) the stall rule failed snapshot-read on "labvm/verify: no I/O completed 11.044-13.044 s"
while its hist log showed completions every second (emulated VAST, 2026-12-06).

The logs below are written by fio's rules from completion times: the iops log at each helper tick with
the writes since the tick before, the hist log per direction at the first completion an interval after
that direction's line before. What each second truly held is known by hand.
"""

from __future__ import annotations

from iogate.engines.fio.parse import parse_logs
from iogate.judging.no_stall import Params, stalls
from iogate.metrics.grid import per_vm
from iogate.metrics.histogram import PLAT_NR
from iogate.metrics.types import Dir, JobSpan, RunResult, Series

END_MS = 12_000
READ, WRITE = 0, 1


def _hist_line(t_ms: int, ddir: int, count: int) -> str:
    bins = [0] * PLAT_NR
    bins[700] = count
    return f"{t_ms}, {ddir}, 4096, " + ", ".join(map(str, bins))


def verifier(phase_ms: int, *, silent: tuple[int, int] = (0, 0)) -> list[tuple[int, int]]:
    """(time, direction) of each completion: 64 IOPS of writes for phase_ms, then their read-back for phase_ms,
    and so on; nothing completes inside `silent`."""
    out = []
    for t in range(5, END_MS, 1000 // 64):
        if not silent[0] < t <= silent[1]:
            out.append((t, WRITE if (t // phase_ms) % 2 == 0 else READ))
    return out


def fio_logs(completions: list[tuple[int, int]]) -> dict[str, str]:
    iops, before = [], 0
    for tick in range(1000, END_MS + 1, 1000):
        writes = sum(before < t <= tick and d == WRITE for t, d in completions)  # read-backs are not counted
        if writes:
            iops.append(f"{tick}, {writes * 1000 // (tick - before)}, {WRITE}, 4096, 0")
        before = tick
    hist, last, count = [], {READ: 0, WRITE: 0}, {READ: 0, WRITE: 0}
    for t, d in completions:
        count[d] += 1
        if t - last[d] >= 1000:
            hist.append(_hist_line(t, d, count[d]))
            last[d], count[d] = t, 0
    return {"verify_iops.2.log": "\n".join(iops) + "\n", "verify_clat_hist.2.log": "\n".join(hist) + "\n"}


def series_of(files: dict[str, str]) -> Series:
    samples, hist = parse_logs(files, "h")
    return Series(tuple(samples), tuple(hist), 1000, (JobSpan("h", "verify", 0, END_MS),))


def silent_spans_s(files: dict[str, str]) -> list[float]:
    found, _, _ = stalls(RunResult("p", (), series_of(files), 0, END_MS), Params(min_interval="1s"))
    return [s.silent_ms / 1000 for s in found]


def test_the_read_backs_are_the_jobs_io_too() -> None:
    """2.5 s of writes, then 2.5 s of read-backs: the write-only iops log is silent for two whole seconds in
    each read-back phase; with the read-backs every second holds I/O (64 IOPS, give or take the seconds a
    hist line straddles)."""
    files = fio_logs(verifier(2500))
    (seconds,) = per_vm(series_of(files)).values()
    assert all(iops > 0 for _, iops, _ in seconds), seconds
    assert silent_spans_s(files) == []


def test_read_backs_come_from_the_hist_log_as_reads() -> None:
    """The read seconds hold the read-backs the hist log counted, never more: a line more than two intervals
    after the line before (the first of a read-back phase) is placed at its mean rate over that span in its
    own second, which leaves out the part of its count the seconds before held (they stay as logged)."""
    files = fio_logs(verifier(2500))
    counted = sum(sum(map(int, line.split(",")[3:])) for line in files["verify_clat_hist.2.log"].splitlines()
                  if line.split(",")[1].strip() == str(READ))
    samples, _ = parse_logs(files, "h")
    reads = [s for s in samples if s.dir == Dir.READ]
    assert counted > 250 and reads
    placed = sum(s.iops * ((s.t_ms - s.since_ms) if s.since_ms else 1000) / 1000 for s in reads)
    assert 0.9 * counted <= placed <= counted, (placed, counted)


def test_a_verifier_that_stops_completing_still_stalls() -> None:
    """Nothing completes in (3000, 7000]: neither its writes nor its read-backs cover those seconds."""
    files = fio_logs(verifier(2500, silent=(3000, 7000)))
    assert any(span >= 3 for span in silent_spans_s(files)), silent_spans_s(files)
