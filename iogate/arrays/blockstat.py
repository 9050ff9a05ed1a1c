"""The kernel's own block-layer counters of a device as an array's per-interval samples (METRICS).

`/sys/block/<dev>/stat` (the kernel's Documentation/block/stat.rst) is one line of cumulative
counters since the device appeared: read I/Os, read merges, read sectors, read ticks (ms), write
I/Os, write merges, write sectors, write ticks (ms), in_flight, io_ticks, time_in_queue, then
discard and flush fields on newer kernels. The I/O counts are completed requests (after merges);
the ticks are the summed time from a request's start in the block layer to its completion. The
kernel sums them in nanoseconds and prints whole milliseconds (the printed value wraps at 2**32).

Since only cumulative counters exist, an array built on them (the local array) samples them
itself: a CounterSampler reads every watched device each interval into a bounded memory, and the
samples of a window are the differences of consecutive readings: IOPS = delta I/Os / delta time,
mean latency = delta ticks / delta I/Os. What the device saw: a cgroup throttle's wait happens
before a request reaches the device's queue, so it is in the host's latency and not in these.

The same counters would serve linux_target (LIO backstores over block devices or files); it does
not use them yet.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from iogate.arrays.base import ArraySample
from iogate.units import ms_to_ns, ns_to_us

TICKS_WRAP = 1 << 32  # the ticks fields are printed as unsigned int milliseconds


@dataclass(frozen=True)
class BlockStat:
    """The fields of one /sys/block/<dev>/stat reading that the samples use."""

    read_ios: int
    read_sectors: int
    read_ticks_ms: int
    write_ios: int
    write_sectors: int
    write_ticks_ms: int


def parse_stat(text: str) -> BlockStat:
    """One /sys/block/<dev>/stat line (11, 15 or 17 fields); ValueError for anything shorter."""
    fields = text.split()
    if len(fields) < 11:
        raise ValueError(f"block stat line has {len(fields)} field(s), not at least 11: {text.strip()!r}")
    values = [int(f) for f in fields[:8]]
    return BlockStat(read_ios=values[0], read_sectors=values[2], read_ticks_ms=values[3],
                     write_ios=values[4], write_sectors=values[6], write_ticks_ms=values[7])


def _side(ios: int, ticks_ms: int, interval_s: float) -> tuple[float, float | None, str]:
    """(IOPS, mean latency in us or None, note) of one direction's deltas."""
    if ios == 0:
        return 0.0, None, ""  # the device completed none: zero IOPS is a figure, latency is not
    if ticks_ms == 0:
        # Under a millisecond in all: the mean is below 1000/ios us, and no better known.
        return ios / interval_s, None, f"latency below the counters' resolution (< {1000 / ios:.3g} us per I/O)"
    return ios / interval_s, ns_to_us(ms_to_ns(ticks_ms)) / ios, ""


def interval_sample(before: BlockStat, after: BlockStat, interval_s: float, stamp: datetime, note: str = "") -> ArraySample | None:
    """The sample of the interval between two readings of one device, stamped at its end.

    None when the counts went backwards (the device was detached and attached anew: no interval to
    measure). Latency is None for a direction with no completed I/O, never 0.
    """
    if interval_s <= 0:
        raise ValueError(f"interval of {interval_s} s between two readings: the later reading must be later")
    read_ios = after.read_ios - before.read_ios
    write_ios = after.write_ios - before.write_ios
    if read_ios < 0 or write_ios < 0:
        return None
    read_iops, read_us, read_note = _side(read_ios, (after.read_ticks_ms - before.read_ticks_ms) % TICKS_WRAP, interval_s)
    write_iops, write_us, write_note = _side(write_ios, (after.write_ticks_ms - before.write_ticks_ms) % TICKS_WRAP, interval_s)
    notes = [note, *(f"{side} {text}" for side, text in (("read", read_note), ("write", write_note)) if text)]
    # The rates divide by the measured interval; the record says it to the millisecond (a report lists the
    # intervals it saw, and 1.0000153 s beside 0.9999944 s is noise, not two sampling rates).
    return ArraySample(time=stamp, interval_s=round(interval_s, 3), read_iops=read_iops, write_iops=write_iops,
                       read_latency_us=read_us, write_latency_us=write_us, note="; ".join(n for n in notes if n))


@dataclass(frozen=True)
class Reading:
    """One reading of a watched device: when (wall clock, UTC, and monotonic), which device, what."""

    wall: datetime
    mono_s: float
    device: str
    stat: BlockStat
    note: str = ""  # why readings before it are missing (a failed read), "" when none are


Reader = Callable[[], tuple[str, BlockStat]]  # (the device it read, its counters); raises when it cannot


class CounterSampler:
    """Reads each watched key's counters every `interval_s` in a daemon thread, keeping the last `keep`.

    `watch(key, read)` takes a first reading at once and starts the thread if it is not running;
    `forget(key)` drops a key (the thread ends with the last one); `stop()` ends it. A reading that
    fails is skipped, and the next one says so in its note; a reading of another device than the
    key's previous one (re-attached) starts a new series rather than an interval across two devices.
    """

    def __init__(self, interval_s: float = 1.0, keep: int = 21_600, *, name: str = "iogate-counters", min_gap_s: float | None = None,
                 wall: Callable[[], datetime] = lambda: datetime.now(UTC), mono: Callable[[], float] = time.monotonic) -> None:
        if interval_s <= 0 or keep < 2:
            raise ValueError(f"counter sampler: interval {interval_s} s and keep {keep}: want interval > 0, keep >= 2")
        self.interval_s = interval_s
        # A reading closer than this to the key's previous one is dropped (the thread's beat right after
        # watch's first reading): a rate over a few microseconds is noise, not a sample.
        self.min_gap_s = interval_s / 2 if min_gap_s is None else min_gap_s
        self.keep = keep
        self.name = name
        self._wall = wall
        self._mono = mono
        self._lock = threading.Lock()
        self._readers: dict[str, Reader] = {}
        self._readings: dict[str, deque[Reading]] = {}
        self._failures: dict[str, tuple[int, str]] = {}  # key -> (failed reads since its last reading, the last error)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, key: str, read: Reader) -> None:
        with self._lock:
            self._readers[key] = read
            self._readings.setdefault(key, deque(maxlen=self.keep))
            self._failures.setdefault(key, (0, ""))
        self._read(key, read)
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
            self._thread.start()

    def forget(self, key: str) -> None:
        with self._lock:
            self._readers.pop(key, None)
            self._readings.pop(key, None)
            self._failures.pop(key, None)
            empty = not self._readers
        if empty:
            self.stop()

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10 * self.interval_s + 5)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def sample_now(self) -> None:
        """One round: read every watched key (the thread's body; tests call it directly)."""
        with self._lock:
            readers = list(self._readers.items())
        for key, read in readers:
            self._read(key, read)

    def _loop(self) -> None:
        deadline = self._mono() + self.interval_s
        while not self._stop.wait(max(0.0, deadline - self._mono())):
            self.sample_now()
            deadline += self.interval_s
            now = self._mono()
            if deadline <= now:  # a round overran (a stalled machine): skip the missed beats, keep the cadence
                deadline = now + self.interval_s - (now - deadline) % self.interval_s

    def _read(self, key: str, read: Reader) -> None:
        try:
            device, stat = read()
        except Exception as exc:  # any failure is a gap in the samples, noted on the next reading
            with self._lock:
                if key in self._failures:
                    self._failures[key] = (self._failures[key][0] + 1, f"{type(exc).__name__}: {exc}")
            return
        mono, wall = self._mono(), self._wall()
        with self._lock:
            readings = self._readings.get(key)
            if readings is None:
                return  # forgotten meanwhile
            if readings and mono - readings[-1].mono_s < self.min_gap_s:
                return
            failed, last = self._failures.get(key, (0, ""))
            note = f"{failed} reading(s) before this one failed (last: {last})" if failed else ""
            readings.append(Reading(wall=wall, mono_s=mono, device=device, stat=stat, note=note))
            self._failures[key] = (0, "")

    def failing(self, key: str) -> str | None:
        """Why the key's latest reads failed ("N read(s) failed since the last reading: ..."); None when the last one succeeded."""
        with self._lock:
            failed, last = self._failures.get(key, (0, ""))
        return f"{failed} read(s) failed since the last reading (last: {last})" if failed else None

    def readings(self, key: str) -> list[Reading]:
        with self._lock:
            return list(self._readings.get(key, ()))

    def samples(self, key: str, start: datetime, end: datetime) -> list[ArraySample]:
        """The key's interval samples stamped (at their end) within [start, end], oldest first."""
        found: list[ArraySample] = []
        readings = self.readings(key)
        for before, after in itertools.pairwise(readings):
            if not start <= after.wall <= end or before.device != after.device:
                continue
            sample = interval_sample(before.stat, after.stat, after.mono_s - before.mono_s, after.wall, after.note)
            if sample is not None:
                found.append(sample)
        return found
