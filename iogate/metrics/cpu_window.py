"""A host's CPU busy % over the window its engine measured, from per-second /proc/stat samples.

/proc/stat read before the engine starts and after it returns covers more than the
measurement: the engine's start (connections, every server's job set-up), the drain of
a capped queue after the run and the log transfer. At 100 netns hosts a 5 s smoke point
read 99.5 % busy that way, where the same 100 fio jobs behind the same caps held the
machine at 20.6 % while they measured (docs/labs.md). A generator queues its own I/O
behind its own work only while it measures: `busy_over` is the busy % between the first
and the last sample inside the measured window [start_ms, end_ms].

A sample line is `<epoch microseconds> cpu <fields...>` (iogate/hosts/cpu_sampler.py
writes one a second); busy and total come from the first eight fields, as everywhere
(iogate/metrics/hostcpu.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from iogate.metrics import hostcpu

# Two samples this far apart at least: one second of ticks (HZ 100-1000 per CPU) is the finest figure.
MIN_SPAN_MS = 1000


@dataclass(frozen=True)
class CpuSample:
    t_ms: float
    busy: int
    total: int


def parse_samples(text: str) -> list[CpuSample]:
    """The sampler's lines, in order; a line cut short by the stop (the last one) is skipped.

    >>> [s.busy for s in parse_samples("1795900479684123 cpu 10 0 5 80 5 0 0 0 0 0\\n1795900480")]
    [15]
    """
    samples = []
    for line in text.splitlines():
        stamp, _, stat = line.partition(" ")
        if not stamp.isdigit() or not stat.startswith("cpu "):
            continue
        try:
            busy, total = hostcpu.cpu_ticks(stat)
        except ValueError:
            continue
        samples.append(CpuSample(int(stamp) / 1000.0, busy, total))
    return samples


def busy_over(samples: list[CpuSample], start_ms: float, end_ms: float) -> float | None:
    """Busy % between the first and the last sample inside [start_ms, end_ms]; None when fewer than two
    samples MIN_SPAN_MS apart fall inside (the caller then has only the whole point's figure)."""
    inside = [s for s in samples if start_ms <= s.t_ms <= end_ms]
    if len(inside) < 2 or inside[-1].t_ms - inside[0].t_ms < MIN_SPAN_MS:
        return None
    total = inside[-1].total - inside[0].total
    if total <= 0:
        return None
    return 100.0 * (inside[-1].busy - inside[0].busy) / total
