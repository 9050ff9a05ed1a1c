"""Charts render real PNGs whose content follows the data (checked on the pixels, not on matplotlib internals)."""

from __future__ import annotations

import io
import struct

import pytest
from matplotlib.image import imread

from iogate.metrics.types import Dir, Sample, Series
from iogate.report import charts

START_MS = 1_700_000_000_000
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE, "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def pixels(data: bytes):
    return imread(io.BytesIO(data), format="png")


def orange_fraction(data: bytes) -> float:
    """Share of pixels tinted like the first event span (light orange)."""
    image = pixels(data)[..., :3]
    red, green, blue = image[..., 0], image[..., 1], image[..., 2]
    tinted = (red > 0.95) & (green > 0.85) & (green < 0.95) & (blue > 0.75) & (blue < 0.9)
    return float(tinted.mean())


def series(seconds: int = 60) -> Series:
    samples = []
    for i in range(1, seconds + 1):
        samples.append(Sample(START_MS + i * 1000, "vm1", "h1", Dir.READ, 8000.0, 400_000.0))
        samples.append(Sample(START_MS + i * 1000 + 4, "vm1", "h1", Dir.WRITE, 2000.0, 1_500_000.0))
    return Series(tuple(samples))


def test_timeline_is_a_png_of_the_documented_size() -> None:
    assert png_size(charts.timeline_png(series(), start_ms=START_MS)) == (1000, 600)


def test_timeline_shades_event_spans_and_only_them() -> None:
    plain = charts.timeline_png(series(), start_ms=START_MS)
    with_event = charts.timeline_png(series(), [("snapshot", START_MS + 10_000, START_MS + 40_000)], start_ms=START_MS)
    assert orange_fraction(plain) < 0.001
    # 30 of 60 s shaded on both axes: a large share of the picture turns orange.
    assert orange_fraction(with_event) > 0.15


def test_longer_event_shades_more() -> None:
    short = charts.timeline_png(series(), [("dedupe", START_MS + 10_000, START_MS + 15_000)], start_ms=START_MS)
    long = charts.timeline_png(series(), [("dedupe", START_MS + 10_000, START_MS + 50_000)], start_ms=START_MS)
    assert orange_fraction(long) > 4 * orange_fraction(short)


def test_timeline_of_an_empty_series_still_renders() -> None:
    assert png_size(charts.timeline_png(Series())) == (1000, 600)


@pytest.mark.parametrize(("max_ns", "unit"), [(900.0, "ns"), (350_000.0, "us"), (3_200_000.0, "ms")])
def test_latency_axis_unit_follows_the_data(max_ns: float, unit: str) -> None:
    assert charts.LatencyScale.for_max_ns(max_ns).unit == unit

