"""The local array's METRICS: per-interval samples from the kernel's cumulative block counters
(iogate.arrays.blockstat); expected values worked out by hand from the stat lines."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from iogate.arrays.blockstat import BlockStat, CounterSampler, interval_sample, parse_stat

T0 = datetime(2026, 11, 24, 2, 0, tzinfo=UTC)

# /sys/block/loop3/stat, 17 fields: read I/Os, read merges, read sectors, read ticks (ms), write I/Os, write merges,
# write sectors, write ticks (ms), in_flight, io_ticks, time_in_queue, discard x4, flush I/Os, flush ticks.
BEFORE = (
    "    1000        5     8000      500     2000       10    16000     3000        0     4000     3500 "
    "       0        0        0        0        0        0\n"
)
# 2 s later: 800 more reads (6400 sectors = 800 x 4 KiB) with 400 ms more read time; writes unchanged.
AFTER = (
    "    1800        5    14400      900     2000       10    16000     3000        1     4800     3900 "
    "       0        0        0        0        0        0\n"
)
# 0.5 s after AFTER: 250 more writes with 1000 ms more write time; 3 reads in under 1 ms all told.
LATER = (
    "    1803        5    14424      900     2250       10    18000     4000        0     5300     4900 "
    "       0        0        0        0        0        0\n"
)


def test_parse_takes_the_documented_fields() -> None:
    assert parse_stat(BEFORE) == BlockStat(read_ios=1000, read_sectors=8000, read_ticks_ms=500,
                                           write_ios=2000, write_sectors=16000, write_ticks_ms=3000)
    eleven = "1 2 3 4 5 6 7 8 9 10 11"  # kernels before 4.18 print 11 fields
    assert parse_stat(eleven) == BlockStat(1, 3, 4, 5, 7, 8)
    with pytest.raises(ValueError, match="3 field"):
        parse_stat("1 2 3")


def test_rates_and_mean_latency_from_two_readings() -> None:
    sample = interval_sample(parse_stat(BEFORE), parse_stat(AFTER), 2.0, T0)
    assert sample is not None
    assert sample.time == T0 and sample.interval_s == 2.0
    assert sample.read_iops == 400.0  # 800 reads / 2 s
    assert sample.read_latency_us == 500.0  # 400 ms / 800 reads = 0.5 ms
    assert sample.write_iops == 0.0  # the device completed no write: zero IOPS is a figure...
    assert sample.write_latency_us is None  # ...but no write has no latency, never 0
    assert sample.note == ""


def test_under_a_millisecond_of_summed_time_is_no_latency_figure_not_zero() -> None:
    sample = interval_sample(parse_stat(AFTER), parse_stat(LATER), 0.5, T0)
    assert sample is not None
    assert sample.write_iops == 500.0  # 250 writes / 0.5 s
    assert sample.write_latency_us == 4000.0  # 1000 ms / 250 writes = 4 ms
    assert sample.read_iops == 6.0  # 3 reads / 0.5 s
    assert sample.read_latency_us is None  # 0 ms of read ticks for 3 reads: under 333 us each, not 0
    assert sample.note == "read latency below the counters' resolution (< 333 us per I/O)"


def test_a_counter_that_went_back_is_no_interval() -> None:
    assert interval_sample(parse_stat(AFTER), parse_stat(BEFORE), 1.0, T0) is None  # device re-attached: counts restart


def test_the_ticks_wrap_at_32_bits() -> None:
    before = BlockStat(read_ios=10, read_sectors=0, read_ticks_ms=(1 << 32) - 100, write_ios=0, write_sectors=0, write_ticks_ms=0)
    after = BlockStat(read_ios=110, read_sectors=0, read_ticks_ms=200, write_ios=0, write_sectors=0, write_ticks_ms=0)
    sample = interval_sample(before, after, 1.0, T0)
    assert sample is not None and sample.read_latency_us == 3000.0  # (100 + 200) ms / 100 reads


class Clock:
    """A hand-driven clock: `tick(s)` moves both the wall and the monotonic clock."""

    def __init__(self) -> None:
        self.mono = 100.0
        self.wall = T0

    def tick(self, seconds: float) -> None:
        self.mono += seconds
        self.wall += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def sampler(clock: Clock) -> Iterator[CounterSampler]:
    # An interval the thread never reaches in a test: the test takes every reading with sample_now.
    made = CounterSampler(3600, keep=4, min_gap_s=0.1, wall=lambda: clock.wall, mono=lambda: clock.mono)
    yield made
    made.stop()
    assert not made.running


def test_the_sampler_keeps_readings_and_gives_the_samples_of_a_window(sampler: CounterSampler, clock: Clock) -> None:
    lines = iter([BEFORE, AFTER, LATER])
    device = ["loop3"]
    failing: list[str] = []

    def read() -> tuple[str, BlockStat]:
        if failing:
            raise OSError(failing.pop())
        return device[0], parse_stat(next(lines))

    sampler.watch("vol", read)  # first reading at T0
    assert sampler.running
    assert sampler.samples("vol", T0 - timedelta(hours=1), T0 + timedelta(hours=1)) == []  # one reading: no interval yet
    clock.tick(2.0)
    sampler.sample_now()  # AFTER at T0 + 2 s
    failing.append("No such device")
    clock.tick(0.25)
    sampler.sample_now()  # fails: a gap
    assert sampler.failing("vol") == "1 read(s) failed since the last reading (last: OSError: No such device)"
    clock.tick(0.25)
    sampler.sample_now()  # LATER at T0 + 2.5 s: its interval spans the failed reading
    assert sampler.failing("vol") is None

    both = sampler.samples("vol", T0, T0 + timedelta(seconds=3))
    assert [(s.time, s.interval_s, s.read_iops, s.write_iops) for s in both] == [
        (T0 + timedelta(seconds=2), 2.0, 400.0, 0.0),
        (T0 + timedelta(seconds=2.5), 0.5, 6.0, 500.0),
    ]
    assert both[1].note.startswith("1 reading(s) before this one failed (last: OSError: No such device); read latency below")
    # Stamped at the interval's end: a window ending before T0 + 2 s has none, one from T0 + 2.1 s only the second.
    assert sampler.samples("vol", T0 - timedelta(seconds=10), T0 + timedelta(seconds=1)) == []
    assert [s.time for s in sampler.samples("vol", T0 + timedelta(seconds=2.1), T0 + timedelta(seconds=9))] == [
        T0 + timedelta(seconds=2.5)]


def test_a_reading_right_after_the_last_is_dropped(sampler: CounterSampler, clock: Clock) -> None:
    count = [0]

    def read() -> tuple[str, BlockStat]:
        count[0] += 10
        return "loop3", BlockStat(count[0], 0, count[0], 0, 0, 0)

    sampler.watch("vol", read)
    clock.tick(0.05)  # under min_gap_s: a 10 I/O step over 50 ms would read as 200 IOPS of noise
    sampler.sample_now()
    clock.tick(1.0)
    sampler.sample_now()
    assert len(sampler.readings("vol")) == 2
    assert [s.interval_s for s in sampler.samples("vol", T0, T0 + timedelta(seconds=5))] == [pytest.approx(1.05)]


def test_a_reading_of_another_device_starts_a_new_series(sampler: CounterSampler, clock: Clock) -> None:
    readings = iter([("loop3", BEFORE), ("loop7", "5 0 40 2 0 0 0 0 0 0 0"), ("loop7", "105 0 840 52 0 0 0 0 0 0 0")])

    def read() -> tuple[str, BlockStat]:
        name, line = next(readings)
        return name, parse_stat(line)

    sampler.watch("vol", read)
    for _ in range(2):
        clock.tick(1.0)
        sampler.sample_now()
    samples = sampler.samples("vol", T0, T0 + timedelta(seconds=5))
    assert [(s.read_iops, s.read_latency_us) for s in samples] == [(100.0, 500.0)]  # loop7 alone: 100 reads, 50 ms


def test_memory_is_bounded_and_a_forgotten_key_has_no_samples(sampler: CounterSampler, clock: Clock) -> None:
    count = [0]

    def read() -> tuple[str, BlockStat]:
        count[0] += 10
        return "loop3", BlockStat(count[0], 0, count[0], 0, 0, 0)

    sampler.watch("vol", read)
    for _ in range(9):
        clock.tick(1.0)
        sampler.sample_now()
    assert len(sampler.readings("vol")) == 4  # keep=4: the oldest are dropped
    assert len(sampler.samples("vol", T0, T0 + timedelta(seconds=60))) == 3
    sampler.forget("vol")
    assert not sampler.running  # the last key gone, the thread ends
    assert sampler.samples("vol", T0, T0 + timedelta(seconds=60)) == []


def test_the_thread_samples_on_its_own() -> None:
    count = [0]

    def read() -> tuple[str, BlockStat]:
        count[0] += 1
        return "loop3", BlockStat(count[0], 0, count[0], 0, 0, 0)

    real = CounterSampler(0.05, keep=100)
    real.watch("vol", read)
    try:
        deadline = time.monotonic() + 5
        while len(real.readings("vol")) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(real.readings("vol")) >= 4
    finally:
        real.stop()
    assert not real.running
