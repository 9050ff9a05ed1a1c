"""BinCounts (iogate.metrics.bincounts): the compact bin counts merge by exact addition.

Expected values are worked with plain dicts of Python ints here, never with BinCounts itself.
"""

from __future__ import annotations

import pickle
from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from iogate.metrics.bincounts import BinCounts
from iogate.metrics.histogram import PLAT_NR, Histogram, json_bin_counts
from iogate.metrics.latency import FIO_BINS, LatencyHistogram

bins = st.dictionaries(st.integers(min_value=0, max_value=PLAT_NR - 1), st.integers(min_value=0, max_value=2**58), max_size=60)


def test_reads_like_the_dict_it_was_made_of_without_its_zeros() -> None:
    counts = BinCounts.from_mapping({601: 9, 600: 3, 7: 0})
    assert dict(counts.items()) == {600: 3, 601: 9}
    assert counts == {600: 3, 601: 9} and counts != {600: 3, 601: 8}
    assert counts[601] == 9 and 7 not in counts and 602 not in counts
    assert list(counts) == [600, 601] and len(counts) == 2 and counts.total == 12
    assert pickle.loads(pickle.dumps(counts)) == counts


def test_bad_bins_are_refused() -> None:
    with pytest.raises(ValueError, match="out of range"):
        BinCounts.from_mapping({PLAT_NR: 1}, PLAT_NR)
    with pytest.raises(ValueError, match="negative count"):
        BinCounts.from_mapping({3: -1})
    with pytest.raises(ValueError, match="negative count"):
        BinCounts.from_dense([0, 2, -1])
    with pytest.raises(ValueError, match="given twice"):
        BinCounts.from_mapping({1: 2, "1": 3})


def test_a_count_above_2_to_the_53_stays_exact() -> None:
    big = 2**60 + 1  # a float would round it
    summed = BinCounts.summed([BinCounts.from_mapping({5: big}), BinCounts.from_mapping({5: 1})], PLAT_NR)
    assert summed[5] == 2**60 + 2
    with pytest.raises(ValueError, match="2\\*\\*64"):
        BinCounts.summed([BinCounts.from_mapping({5: 2**63}), BinCounts.from_mapping({5: 2**63})], PLAT_NR)


@given(parts=st.lists(bins, max_size=8))
@example(parts=[])
@example(parts=[{0: 1}, {PLAT_NR - 1: 2**62}, {0: 2**62}, {0: 2**62}, {0: 2**62 - 2}])
def test_a_sum_is_the_dicts_sum_bin_by_bin(parts: list[dict[int, int]]) -> None:
    expected: Counter[int] = Counter()
    for part in parts:
        expected.update(part)
    summed = BinCounts.summed([BinCounts.from_mapping(p) for p in parts], PLAT_NR)
    assert dict(summed.items()) == {i: c for i, c in expected.items() if c}
    assert list(summed) == sorted(summed)


@given(parts=st.lists(bins, min_size=1, max_size=6), pct=st.sampled_from([1.0, 50.0, 90.0, 99.0, 99.9, 99.95, 99.99, 100.0]))
def test_merged_latency_histograms_give_the_percentile_of_the_summed_dicts(parts: list[dict[int, int]], pct: float) -> None:
    expected: Counter[int] = Counter()
    for part in parts:
        expected.update(part)
    whole = Histogram({i: c for i, c in expected.items() if c})
    merged = LatencyHistogram.merged(LatencyHistogram(FIO_BINS, p) for p in parts)
    assert merged is not None
    assert merged.total == whole.total
    if whole.total:
        assert merged.percentile_ns(pct) == whole.percentile_ns(pct)


def test_json_bins_out_of_order_or_zero_or_odd_keys_read_as_fio_meant_them() -> None:
    # fio writes ascending midpoints without zeros; anything else takes the checked path to the same counts.
    assert dict(json_bin_counts({"1004": 2, "70": 3}).items()) == {70: 3, 317: 2}  # 1004 ns: bin 317 (worked by hand)
    assert dict(json_bin_counts({"70": 0, "71": 4}).items()) == {71: 4}
    assert dict(json_bin_counts({70: 1, "70": 2}).items()) == {70: 3}
    with pytest.raises(ValueError, match="not a fio bin midpoint"):
        json_bin_counts({"1001": 1})
    with pytest.raises(ValueError, match="negative count"):
        json_bin_counts({"70": -1})


def test_a_per_second_line_packs_far_smaller_than_its_dict() -> None:
    line = {600 + i: 100 + 30 * i for i in range(10)}  # a hist log second: ten occupied bins
    packed = BinCounts.from_mapping(line)
    assert len(pickle.dumps(packed)) < 200
    assert all(a < b for a, b in pairwise(packed))
