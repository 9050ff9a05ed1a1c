"""Properties of histogram merging and percentiles, for any latencies and any split of them."""

from __future__ import annotations

import math
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from iogate.metrics.histogram import PLAT_NR, Histogram, bin_bounds_ns, index_to_value_ns, value_to_index

# 0 ns .. ~17 s: covers cache hits to stalled I/O.
latencies = st.lists(st.integers(min_value=0, max_value=17 * 10**9), min_size=1, max_size=400)
pcts = st.floats(min_value=0.01, max_value=100.0, allow_nan=False)


@given(value=st.integers(min_value=0, max_value=2**40))
def test_value_to_index_round_trip_within_one_64th(value: int) -> None:
    index = value_to_index(value)
    assert 0 <= index < PLAT_NR
    low, high = bin_bounds_ns(index)
    if index < PLAT_NR - 1:
        assert low <= value < high
        mid = index_to_value_ns(index)
        assert value_to_index(mid) == index
        assert abs(mid - value) <= max(1, value) / 64


@given(values=latencies, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_merging_any_split_equals_the_whole(values: list[int], cuts: list[int]) -> None:
    edges = sorted({0, len(values), *[c % (len(values) + 1) for c in cuts]})
    parts = [Histogram.from_latencies_ns(values[a:b]) for a, b in pairwise(edges)]
    whole = Histogram.from_latencies_ns(values)
    merged = Histogram.merged(parts)
    assert merged.counts == whole.counts
    assert merged.total == len(values)
    # Through json+ form and back (what fio writes and what a hist log holds) nothing changes.
    assert Histogram.from_json_bins(merged.to_json_bins()).counts == whole.counts
    assert Histogram.from_counts(merged.counts).counts == whole.counts


@settings(max_examples=200)
@given(values=latencies, pct=pcts)
def test_percentile_agrees_with_exact_to_bin_resolution(values: list[int], pct: float) -> None:
    hist = Histogram.from_latencies_ns(values)
    ordered = sorted(values)
    exact = ordered[max(1, math.ceil(pct / 100.0 * len(ordered))) - 1]
    got = hist.percentile_ns(pct)
    # fio reports the bin midpoint: exact below 128 ns, else within half a bin (<= 1/128 of the value).
    assert abs(got - exact) <= exact / 128 + 1
    assert value_to_index(int(got)) == value_to_index(exact)


@given(values=latencies)
def test_mean_within_bin_resolution(values: list[int]) -> None:
    exact = sum(values) / len(values)
    assert abs(Histogram.from_latencies_ns(values).mean_ns() - exact) <= exact / 128 + 1
