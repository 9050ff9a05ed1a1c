"""Synthetic per-second fio logs (iops, clat, clat_hist) for the scale benchmarks.

The text is what fio writes with log_avg_msec=1000, log_hist_msec=1000,
log_unix_epoch=1, log_hist_coarseness=0 (every one of the 1856 bins on each
line), so it goes through the same parser (iogate.engines.fio.parse.parse_logs)
as a real run's logs. Each host's figures differ a little (IOPS and the
histogram's centre move with the host number and the second), so merged
results are not copies of one host's.
"""

from __future__ import annotations

from iogate.metrics.histogram import PLAT_NR

READ = 0  # fio's ddir number in log lines
BLOCK_SIZE = 4096
# The occupied bins of one second's histogram: ten neighbours around a centre (fio bin 600 is ~70 us).
SPREAD = (1, 3, 8, 15, 22, 22, 15, 8, 4, 2)


def ios_at(host: int, second: int) -> int:
    """Reads completed by `host` in `second` (the exact sum of that second's histogram line)."""
    return sum(SPREAD) * (10 + (host + second) % 7)


def hist_line(t_ms: int, host: int, second: int) -> str:
    return "".join(_hist_pieces(t_ms, host, second))


def _hist_pieces(t_ms: int, host: int, second: int) -> list[str]:
    """One hist line as pieces whose long runs of zeros are shared strings (a host-hour's text is built
    once, not once as lines and again joined)."""
    centre = 600 + (host % 11) + (second % 5)
    scale = 10 + (host + second) % 7
    return [f"{t_ms}, {READ}, {BLOCK_SIZE}, ", _zeros(centre), ", ".join(str(w * scale) for w in SPREAD),
            _zeros(PLAT_NR - centre - len(SPREAD), leading=True)]


_ZERO_RUNS: dict[tuple[int, bool], str] = {}


def _zeros(count: int, leading: bool = False) -> str:
    """`0, 0, ..., 0, ` (count zeros before the occupied bins) or `, 0, ..., 0` (after them), shared."""
    key = (count, leading)
    if key not in _ZERO_RUNS:
        run = ", ".join(["0"] * count)
        _ZERO_RUNS[key] = "" if not count else f", {run}" if leading else f"{run}, "
    return _ZERO_RUNS[key]


def host_logs(job: str, host: int, start_ms: int, seconds: int) -> dict[str, str]:
    """{file name: text} of one host's one-job read logs over `seconds` 1 s intervals."""
    iops, clat, hist = [], [], []
    for second in range(1, seconds + 1):
        t_ms = start_ms + second * 1000
        ios = ios_at(host, second)
        iops.append(f"{t_ms}, {ios}, {READ}, {BLOCK_SIZE}, 0")
        clat.append(f"{t_ms}, {70_000 + 1000 * (host % 11)}, {READ}, {BLOCK_SIZE}, 0")
        hist += _hist_pieces(t_ms, host, second)
        hist.append("\n")
    return {f"{job}_iops.1.log": "\n".join(iops) + "\n", f"{job}_clat.1.log": "\n".join(clat) + "\n",
            f"{job}_clat_hist.1.log": "".join(hist)}
