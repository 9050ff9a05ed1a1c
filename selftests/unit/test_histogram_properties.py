"""Properties of histogram merging and percentiles, for any latencies and any split of them.

fio's percentile rank is re-implemented here with integers only (fio_rank_reached), independently of
iogate.metrics.histogram: `sum >= (long double) p / 100.0 * nr` on x86-64, p a C double.
"""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from iogate.metrics.histogram import PLAT_NR, Histogram, bin_bounds_ns, index_to_value_ns, value_to_index
from iogate.metrics.nodata import NoData

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


LONG_DOUBLE_BITS = 64  # x87 extended precision mantissa


def round_half_even_64(num: int, den: int) -> tuple[int, int]:
    """num/den (> 0) rounded to a 64-bit mantissa, returned as (mantissa, power of two): value = m * 2**e."""
    exponent = 0
    while num >= den << LONG_DOUBLE_BITS:  # too big: halve until num/den < 2**64
        den <<= 1
        exponent += 1
    while num < den << (LONG_DOUBLE_BITS - 1):  # too small: double until num/den >= 2**63
        num <<= 1
        exponent -= 1
    mantissa, rest = divmod(num, den)
    if rest * 2 > den or (rest * 2 == den and mantissa % 2 == 1):
        mantissa += 1
    return mantissa, exponent


def fio_rank_reached(running: int, pct: float, nr: int) -> bool:
    """running >= (long double) pct / 100.0 * nr, in integers: pct's double is a/b exactly (b a power of two)."""
    a, b = pct.as_integer_ratio()
    q_m, q_e = round_half_even_64(a, 100 * b)  # (long double) pct / 100.0
    t_num, t_den = (q_m * nr << q_e, 1) if q_e >= 0 else (q_m * nr, 1 << -q_e)
    t_m, t_e = round_half_even_64(t_num, t_den)  # ... * nr
    return running << max(0, -t_e) >= t_m << max(0, t_e)


def fio_percentile_of_values(values: list[int], pct: float) -> int:
    """The raw value whose rank fio's threshold picks (bins aside)."""
    ordered = sorted(values)
    return next(v for rank, v in enumerate(ordered, start=1) if fio_rank_reached(rank, pct, len(ordered)))


@settings(max_examples=200)
@given(values=latencies, pct=pcts)
def test_percentile_agrees_with_exact_to_bin_resolution(values: list[int], pct: float) -> None:
    hist = Histogram.from_latencies_ns(values)
    exact = fio_percentile_of_values(values, pct)
    got = hist.percentile_ns(pct)
    # fio reports the bin midpoint: exact below 128 ns, else within half a bin (<= 1/128 of the value).
    assert abs(got - exact) <= exact / 128 + 1
    assert value_to_index(int(got)) == value_to_index(exact)


@given(values=latencies)
def test_mean_within_bin_resolution(values: list[int]) -> None:
    exact = sum(values) / len(values)
    assert abs(Histogram.from_latencies_ns(values).mean_ns() - exact) <= exact / 128 + 1


def test_mean_of_nothing_is_no_data() -> None:
    with pytest.raises(NoData, match="no latency samples"):
        Histogram().mean_ns()


FIO_DEFAULT_PCTS = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99)
# Bin sets: up to 40 bins anywhere in fio's range, counts up to 10**9 (so nr reaches long double's limits of exactness).
bin_sets = st.dictionaries(st.integers(min_value=0, max_value=PLAT_NR - 1), st.integers(min_value=1, max_value=10**9),
                           min_size=1, max_size=40)
decimal_pcts = st.one_of(st.sampled_from(FIO_DEFAULT_PCTS),
                         st.integers(min_value=1, max_value=100_000).map(lambda k: k / 1000))  # 0.001 .. 100, three decimals


@settings(max_examples=500)
@given(bins=bin_sets, pct=decimal_pcts)
def test_percentile_of_random_bins_is_fios_formula_exactly(bins: dict[int, int], pct: float) -> None:
    nr = sum(bins.values())
    running, expected = 0, None
    for index in sorted(bins):
        running += bins[index]
        if fio_rank_reached(running, pct, nr):
            expected = index
            break
    assert expected is not None
    assert Histogram.from_counts(bins).percentile_ns(pct) == index_to_value_ns(expected)
    assert Histogram.from_counts(bins).percentile_ns(f"{pct:f}") == index_to_value_ns(expected)  # fio's json key form


@settings(max_examples=300)
@given(nr=st.integers(min_value=1, max_value=PLAT_NR - 1), pct=st.sampled_from(FIO_DEFAULT_PCTS))
@example(nr=1000, pct=99.9)  # decimal rank 999; the double 99.9000000000000056... needs 1000
@example(nr=1000, pct=99.95)
def test_a_rank_landing_exactly_on_a_sample_follows_the_double_not_the_decimal(nr: int, pct: float) -> None:
    """One sample per bin: the percentile is the bin of the first rank fio's threshold reaches."""
    expected_rank = next(rank for rank in range(1, nr + 1) if fio_rank_reached(rank, pct, nr))
    hist = Histogram.from_counts(dict.fromkeys(range(nr), 1))
    assert hist.percentile_ns(pct) == index_to_value_ns(expected_rank - 1)


def test_the_issue_case_n_2000_p99_95_takes_the_last_sample() -> None:
    """99.95 as a double is 99.9500000000000028...: at nr = 2000 the threshold is just above 1999."""
    assert not fio_rank_reached(1999, 99.95, 2000) and fio_rank_reached(2000, 99.95, 2000)
    counts = {value_to_index(100_000): 1999, value_to_index(1_777_664): 1}
    assert Histogram.from_counts(counts).percentile_ns(99.95) == 1_777_664
