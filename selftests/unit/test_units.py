"""The named unit conversions in iogate.units, against values worked by hand."""

from __future__ import annotations

import pytest

from iogate.units import (
    BYTES_PER_MB,
    BYTES_PER_MIB,
    NS_PER_MS,
    NS_PER_US,
    US_PER_S,
    bytes_per_s_to_mb_per_s,
    mib_per_s_to_bytes_per_s,
    ms_to_ns,
    ns_to_ms,
    ns_to_us,
    s_to_us,
)


def test_factors() -> None:
    assert NS_PER_US == 1_000
    assert NS_PER_MS == 1_000_000
    assert US_PER_S == 1_000_000
    assert BYTES_PER_MB == 1_000_000  # decimal: a report's MB/s
    assert BYTES_PER_MIB == 1_048_576  # binary: vdbench's MB/s, 1024 x 1024


@pytest.mark.parametrize(("ns", "us"), [(0, 0.0), (1500, 1.5), (250_000, 250.0), (999, 0.999)])
def test_ns_to_us(ns: float, us: float) -> None:
    assert ns_to_us(ns) == us


@pytest.mark.parametrize(("ns", "ms"), [(0, 0.0), (2_500_000, 2.5), (125_000, 0.125), (1_000_000_000, 1000.0)])
def test_ns_to_ms(ns: float, ms: float) -> None:
    assert ns_to_ms(ns) == ms


def test_ns_to_ms_keeps_the_sign() -> None:
    # a clock offset: the host's clock 3 ms behind ours
    assert ns_to_ms(-3_000_000) == -3.0


@pytest.mark.parametrize(("ms", "ns"), [(0, 0.0), (0.25, 250_000.0), (1.5, 1_500_000.0), (12, 12_000_000.0)])
def test_ms_to_ns(ms: float, ns: float) -> None:
    assert ms_to_ns(ms) == ns


def test_ms_and_ns_round_trip() -> None:
    assert ns_to_ms(ms_to_ns(7.0)) == 7.0


@pytest.mark.parametrize(("s", "us"), [(0, 0.0), (1, 1_000_000.0), (0.5, 500_000.0), (0.002, 2000.0)])
def test_s_to_us(s: float, us: float) -> None:
    assert s_to_us(s) == pytest.approx(us)


def test_s_to_us_is_host_cpu_per_io() -> None:
    # 50 % busy on 4 CPUs = 2 CPU-seconds per second; at 20 000 IOPS each I/O costs 100 us
    assert s_to_us(50 / 100.0 * 4) / 20_000 == pytest.approx(100.0)


@pytest.mark.parametrize(("bps", "mbps"), [(0, 0.0), (250_000_000, 250.0), (1_048_576, 1.048576), (1_500_000, 1.5)])
def test_bytes_per_s_to_mb_per_s_is_decimal(bps: float, mbps: float) -> None:
    assert bytes_per_s_to_mb_per_s(bps) == mbps


@pytest.mark.parametrize(("mibps", "bps"), [(0, 0.0), (1, 1_048_576.0), (1.5, 1_572_864.0), (100, 104_857_600.0)])
def test_mib_per_s_to_bytes_per_s_is_binary(mibps: float, bps: float) -> None:
    assert mib_per_s_to_bytes_per_s(mibps) == bps


def test_same_float_as_the_hand_written_forms() -> None:
    """The helpers replaced `x / 1e6`, `x * 1e6`, `x / 1000` and `x * 1024 * 1024`: bit for bit the same."""
    for x in (0.1, 1.0 / 3.0, 123_456.789, 98_765_432.1, 7e-5):
        assert ns_to_ms(x) == x / 1e6
        assert ms_to_ns(x) == x * 1e6
        assert ns_to_us(x) == x / 1000
        assert s_to_us(x) == x * 1e6
        assert bytes_per_s_to_mb_per_s(x) == x / 1e6
        assert mib_per_s_to_bytes_per_s(x) == x * 1024 * 1024
