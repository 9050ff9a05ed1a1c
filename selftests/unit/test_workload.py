"""The engine-neutral WorkloadSpec: typed fields, the parse helpers catalogs use, and what it refuses.

Expected values are worked by hand (4k = 4096, 64k = 65536, 224m = 234881024 bytes).
"""

from __future__ import annotations

import pytest

from iogate.engines.workload import (
    Extent,
    ExtentUnit,
    RateProcess,
    SizeMix,
    Verify,
    WorkloadSpec,
    format_block_size,
    parse_block_size,
)


def test_a_single_size_parses_to_bytes() -> None:
    assert parse_block_size("4k") == 4096
    assert parse_block_size("256KiB") == 262144
    assert parse_block_size("1m") == 1048576


def test_a_mix_parses_to_sizes_and_shares() -> None:
    assert parse_block_size("4k/50:64k/50") == SizeMix(((4096, 50), (65536, 50)))
    assert parse_block_size("8k/70:64k/20:1m/10") == SizeMix(((8192, 70), (65536, 20), (1048576, 10)))


@pytest.mark.parametrize(("text", "message"), [
    ("4k/50:64k/40", "shares add up to 90 %, not 100"),
    ("4k/60:64k/60", "shares add up to 120 %, not 100"),
    ("0k/50:64k/50", "size 0 is not a positive number of bytes"),
    ("4k/0:64k/100", "size 4k has share 0 %, must be > 0"),
    ("4k/50:4k/50", "a size appears twice"),
    ("4k/50,64k/100", "one mix serves reads and writes"),
    ("4k:64k/100", "entry '4k' is not SIZE/PERCENT"),
    ("4k/half:64k/50", "entry '4k/half' is not SIZE/PERCENT"),
])
def test_bad_mixes_are_refused_saying_why(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_block_size(text)


def test_a_mix_built_directly_is_validated_too() -> None:
    with pytest.raises(ValueError, match="shares add up to 99 %"):
        SizeMix(((4096, 33), (8192, 33), (16384, 33)))
    with pytest.raises(ValueError, match="no sizes"):
        SizeMix(())


def test_the_report_shows_the_same_strings_as_before() -> None:
    assert WorkloadSpec("w", bs=4096).params()["bs"] == "4k"
    assert WorkloadSpec("w", bs=parse_block_size("4k/50:64k/50")).params()["bs"] == "4k/50:64k/50"
    assert format_block_size(1 << 20) == "1m"


def test_extents_are_bytes_or_a_share_of_the_target() -> None:
    assert Extent.parse("224m") == Extent(234881024, ExtentUnit.BYTES)
    assert Extent.parse("16MiB") == Extent(16777216, ExtentUnit.BYTES)
    assert Extent.parse("20%") == Extent(20, ExtentUnit.PERCENT)
    assert (str(Extent.parse("20%")), str(Extent.of_bytes(234881024))) == ("20%", "224m")
    with pytest.raises(ValueError, match="not a whole percentage"):
        Extent.parse("12.5%")
    with pytest.raises(ValueError, match="out of range"):
        Extent.percent(120)


def test_strings_in_typed_fields_are_refused_with_the_way_to_give_them() -> None:
    with pytest.raises(TypeError, match=r"workload w: bs='4k': give bytes or parse_block_size"):
        WorkloadSpec("w", bs="4k")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"workload w: size='20%': give Extent.parse"):
        WorkloadSpec("w", size="20%")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"workload w: verify='crc32c'"):
        WorkloadSpec("w", verify="crc32c")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"workload w: rate_process='linear'"):
        WorkloadSpec("w", rate_process="linear")  # type: ignore[arg-type]


def test_values_that_cover_nothing_are_refused() -> None:
    with pytest.raises(ValueError, match="bs=0 is not a positive number of bytes"):
        WorkloadSpec("w", bs=0)
    with pytest.raises(ValueError, match="size=0 covers nothing"):
        WorkloadSpec("w", size=Extent.of_bytes(0))
    with pytest.raises(ValueError, match="offset=100% leaves nothing"):
        WorkloadSpec("w", offset=Extent.percent(100))
    with pytest.raises(ValueError, match="verify backlog 0"):
        Verify(backlog=0)
    with pytest.raises(ValueError, match="rate_iops=0 must be >= 1"):
        WorkloadSpec("w", rate_iops=0)


def test_rate_process_reads_from_catalog_words() -> None:
    assert RateProcess("linear") is RateProcess.LINEAR and RateProcess("poisson") is RateProcess.POISSON
