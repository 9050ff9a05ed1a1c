"""The client/server live feed from block counters (iogate/metrics/device_feed.py, the sampler's device lines).

Expected values are worked by hand from the counter lines written here: a cumulative count read at
t0 and t1 is interpolated linearly to a grid point t in between, an interval's IOPS is the
difference over its second, its mean latency the ticks' difference over the I/Os'.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from iogate.hosts.cpu_sampler import SCRIPT
from iogate.metrics.cpu_window import parse_samples
from iogate.metrics.device_feed import DeviceTail, alone_on_device
from iogate.metrics.types import Dir


def stat(read_ios: int, read_ticks: int, write_ios: int = 0, write_ticks: int = 0) -> str:
    """A /sys/block/<dev>/stat line (17 fields, as kernel 5.5+ prints) with the four fields the feed reads."""
    return f"{read_ios} 0 {read_ios * 8} {read_ticks} {write_ios} 0 {write_ios * 8} {write_ticks} 0 0 0 0 0 0 0 0 0"


def line(t_ms: int, index: int, fields: str) -> str:
    return f"{t_ms * 1000} dev {index} {fields}\n"


def test_counts_between_readings_are_interpolated_onto_the_measured_grid() -> None:
    """Readings at 0.5, 1.5 and 2.5 s: 0, 100 and 300 reads, 0, 200 and 700 ms of ticks. On the grid from 1 s: at 1 s
    50 reads and 100 ms, at 2 s 200 reads and 450 ms, so the interval (1 s, 2 s] holds 150 reads, 150 IOPS, at
    350 ms / 150 = 2.333 ms each; the next interval needs a reading at or after 3 s, so it waits."""
    tail = DeviceTail("h1", {0: ("j", (Dir.READ,))}, start_ms=1_000, end_ms=60_000)
    samples = tail.feed(line(500, 0, stat(0, 0)) + line(1_500, 0, stat(100, 200)) + line(2_500, 0, stat(300, 700)))
    assert [(s.t_ms, s.job, s.host, s.dir, s.iops) for s in samples] == [(2_000, "j", "h1", Dir.READ, 150.0)]
    assert samples[0].clat_mean_ns == pytest.approx(350 / 150 * 1e6)
    # (2 s, 3 s]: at 3 s, halfway from (300, 700 ms) at 2.5 s to (400, 900 ms) at 3.5 s: 350 reads, 800 ms.
    samples = tail.feed(line(3_500, 0, stat(400, 900)))
    assert [(s.t_ms, s.iops) for s in samples] == [(3_000, 150.0)]
    assert samples[0].clat_mean_ns == pytest.approx(350 / 150 * 1e6)


def test_a_second_without_a_completed_io_is_published_at_0_iops_with_unknown_latency() -> None:
    """A stall is what the live judge must see: 0 IOPS, never a skipped interval; no I/O has no latency (None, never 0)."""
    tail = DeviceTail("h1", {0: ("j", (Dir.READ,))}, start_ms=1_000, end_ms=60_000)
    samples = tail.feed("".join(line(t, 0, stat(500, 1000)) for t in (1_000, 2_000, 3_000)))
    assert [(s.t_ms, s.iops, s.clat_mean_ns) for s in samples] == [(2_000, 0.0, None), (3_000, 0.0, None)]


def test_reads_and_writes_apart_and_only_the_directions_the_job_does() -> None:
    """A 70/30 job's device: 70 reads at 1 ms and 30 writes at 4 ms in one second; a read-only job on another
    device whose writes (a filesystem's, say) are not its own: its write direction is not published."""
    tail = DeviceTail("h1", {0: ("mix", (Dir.READ, Dir.WRITE)), 1: ("ro", (Dir.READ,))}, start_ms=0, end_ms=60_000)
    text = (line(0, 0, stat(0, 0, 0, 0)) + line(0, 1, stat(0, 0, 0, 0))
            + line(1_000, 0, stat(70, 70, 30, 120)) + line(1_000, 1, stat(10, 5, 99, 99)))
    got = {(s.job, s.dir): (s.iops, s.clat_mean_ns) for s in tail.feed(text)}
    assert got == {("mix", Dir.READ): (70.0, 1e6), ("mix", Dir.WRITE): (30.0, 4e6), ("ro", Dir.READ): (10.0, 0.5e6)}


def test_nothing_is_published_past_the_planned_runtime() -> None:
    """After the runtime the device is idle because the load ended: those seconds are not a stall."""
    tail = DeviceTail("h1", {0: ("j", (Dir.READ,))}, start_ms=0, end_ms=2_000)
    samples = tail.feed("".join(line(t, 0, stat(min(t, 2_000) // 10, 0)) for t in range(0, 6_000, 1_000)))
    assert [(s.t_ms, s.iops) for s in samples] == [(1_000, 100.0), (2_000, 100.0)]


def test_ticks_that_wrap_at_32_bits_still_count_forward() -> None:
    """read ticks printed as 2**32 - 10 then 5: 15 ms passed over 10 I/Os, 1.5 ms each, not minus 4 billion."""
    tail = DeviceTail("h1", {0: ("j", (Dir.READ,))}, start_ms=0, end_ms=60_000)
    samples = tail.feed(line(0, 0, stat(0, 2**32 - 10)) + line(1_000, 0, stat(10, 5)))
    assert [(s.iops, s.clat_mean_ns) for s in samples] == [(10.0, 1.5e6)]


def test_a_line_cut_short_waits_for_its_end_and_other_lines_are_ignored() -> None:
    tail = DeviceTail("h1", {0: ("j", (Dir.READ,))}, start_ms=0, end_ms=60_000)
    first = line(0, 0, stat(0, 0)) + "1000000 cpu 1 2 3 4 5 6 7 8\n" + line(1_000, 0, stat(40, 40))
    assert tail.feed(first[:-20]) == []
    assert [s.iops for s in tail.feed(first[-20:])] == [40.0]


def test_no_interval_before_every_device_was_read_or_when_sampling_began_late() -> None:
    two = DeviceTail("h1", {0: ("a", (Dir.READ,)), 1: ("b", (Dir.READ,))}, start_ms=0, end_ms=60_000)
    assert two.feed(line(0, 0, stat(0, 0)) + line(1_000, 0, stat(5, 5))) == []  # device 1 never read: missing, not 0
    late = DeviceTail("h1", {0: ("a", (Dir.READ,))}, start_ms=0, end_ms=60_000)
    assert late.feed(line(500, 0, stat(0, 0)) + line(3_000, 0, stat(9, 9))) == []  # the first interval cannot be cut


def test_only_a_job_alone_on_its_device_gets_the_devices_counters() -> None:
    paths = {"vm1": "/sys/class/block/loop3/stat", "vm2": "/sys/class/block/loop3/stat", "solo": "/sys/class/block/nvme0n1/stat",
             "nfs": None}
    assert alone_on_device(paths) == {"solo": "/sys/class/block/nvme0n1/stat"}


def test_the_sampler_writes_a_device_line_per_stat_file_with_the_cpu_lines_clock(tmp_path: Path) -> None:
    """The real sampler script under bash, two samples, a stat file of its own: each cpu line is followed by one
    dev line per readable file, same timestamp, numbered in argument order; an unreadable one is skipped."""
    fake = tmp_path / "stat"
    fake.write_text(stat(7, 3) + "\n")
    out = tmp_path / "samples"
    subprocess.run(["bash", "-c", SCRIPT, "iogate-cpu-sampler", str(out), "2", str(tmp_path / "missing"), str(fake)],
                   stdout=out.open("w"), stderr=subprocess.DEVNULL, timeout=20, check=True)
    lines = out.read_text().splitlines()
    assert [ln.split()[1] for ln in lines] == ["cpu", "dev", "cpu", "dev"]
    assert [ln.split()[2] for ln in lines if ln.split()[1] == "dev"] == ["1", "1"]
    assert lines[0].split()[0] == lines[1].split()[0]
    assert len(parse_samples(out.read_text())) == 2  # the CPU reader skips the device lines
    tail = DeviceTail("h", {1: ("j", (Dir.READ,))}, start_ms=0, end_ms=1)
    tail.feed(out.read_text())
    assert tail.points[(1, Dir.READ)][0][1:] == (7.0, 3.0)
