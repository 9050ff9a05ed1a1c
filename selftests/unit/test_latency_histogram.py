"""LatencyHistogram: one percentile and merge path for fio's 1856 bins and vdbench's buckets.

Every expected value is worked by hand in the comments: bucket percentiles are
the upper edge of the bucket reaching the nearest rank ceil(p/100 * N).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iogate.engines.fio.parse import load_json, parse_jobs
from iogate.judging import latency_bound
from iogate.judging.common import latency_ns_of
from iogate.metrics.histogram import Histogram
from iogate.metrics.latency import FIO_BINS, Buckets, HistogramSchemeMismatch, LatencyHistogram
from iogate.metrics.nodata import NoData
from iogate.metrics.types import Dir, Direction, JobResult, LatencyStats, RunResult, Series

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
INF = math.inf
# 0-100 us, 100-200 us, 200-500 us, 500 us - open.
EDGES = (0, 100_000, 200_000, 500_000, INF)


def buckets(*counts: int) -> LatencyHistogram:
    return LatencyHistogram.of_buckets(EDGES, counts, origin="vdbench histogram buckets")


def run_of(*histograms: LatencyHistogram | None, ios: int = 100) -> RunResult:
    """One job per histogram, reads only, `ios` I/Os each."""
    jobs = []
    for k, hist in enumerate(histograms):
        read = Direction(Dir.READ, ios=ios, iops=float(ios), clat=LatencyStats(mean_ns=1e5, samples=ios, histogram=hist))
        jobs.append(JobResult(f"j{k}", "h", {Dir.READ: read, Dir.WRITE: Direction(Dir.WRITE)}))
    return RunResult("r", tuple(jobs), Series(), 0, 0)


# -- bucket percentiles ---------------------------------------------------------------------------

def test_bucket_percentile_is_the_upper_edge_of_the_nearest_rank_bucket() -> None:
    h = buckets(60, 30, 9, 1)  # N = 100; running counts 60, 90, 99, 100
    assert h.total == 100
    assert h.percentile_ns(50) == 100_000  # rank 50 <= 60: first bucket, upper edge 100 us
    assert h.percentile_ns(60) == 100_000  # rank 60 is the first bucket's last I/O
    assert h.percentile_ns(61) == 200_000  # rank 61 is in the second bucket
    assert h.percentile_ns(90) == 200_000
    assert h.percentile_ns(99) == 500_000  # rank 99 = running count of the third bucket
    assert h.percentile_ns(99.5) == INF  # rank ceil(99.5) = 100: the open top bucket
    assert h.percentile_ns(100) == INF


def test_bucket_rank_is_exact_on_the_decimal_percentile() -> None:
    # In doubles 7 / 100 * 100 = 7.000000000000001, whose ceil (8) would move p7 into the next bucket.
    h = buckets(7, 93, 0, 0)
    assert h.percentile_ns(7) == 100_000  # rank 7: the first bucket's last I/O
    assert h.percentile_ns(8) == 200_000
    # 99.9 % of 1000 is rank 999, not the 1000 the double 99.900000000000006 gives.
    assert buckets(999, 1, 0, 0).percentile_ns(99.9) == 100_000


def test_open_ended_top_bucket_fails_any_latency_bound() -> None:
    run = run_of(buckets(90, 5, 3, 2))  # N = 100: rank 99 lies in the open bucket (running 98 -> 100)
    verdict = latency_bound.evaluate(run, latency_bound.Params(max_latency="1000000s", stat="p99", direction="read"))
    assert not verdict.passed and verdict.measured == INF, verdict.line()
    assert latency_bound.evaluate(run, latency_bound.Params(max_latency="200us", stat="p95", direction="read")).passed  # rank 95: 200 us


def test_bound_at_the_upper_edge_passes_and_below_it_fails() -> None:
    run = run_of(buckets(60, 30, 9, 1))  # p99 = 500 us (upper edge): never an interpolated 350 us
    assert latency_bound.evaluate(run, latency_bound.Params(max_latency="500us", stat="p99", direction="read")).passed
    assert not latency_bound.evaluate(run, latency_bound.Params(max_latency="499999ns", stat="p99", direction="read")).passed


def test_zero_ios_is_no_data() -> None:
    with pytest.raises(NoData, match="no latency samples"):
        buckets(0, 0, 0, 0).percentile_ns(99)
    verdict = latency_bound.evaluate(run_of(buckets(0, 0, 0, 0)), latency_bound.Params(max_latency="1s", stat="p99", direction="read"))
    assert not verdict.passed and math.isnan(verdict.measured)
    assert "no data: no latency histogram bins in run r (read)" in verdict.detail
    missing = latency_bound.evaluate(run_of(None), latency_bound.Params(max_latency="1s", stat="p99", direction="read"))
    assert not missing.passed and "no data: no latency histogram bins" in missing.detail


def test_bad_percentiles_and_schemes_are_refused() -> None:
    with pytest.raises(ValueError, match="out of range"):
        buckets(1, 0, 0, 0).percentile_ns(0)
    with pytest.raises(ValueError, match="strictly ascend"):
        Buckets((0, 10, 10, INF))
    with pytest.raises(ValueError, match="3 counts for 4 buckets"):
        LatencyHistogram.of_buckets(EDGES, (1, 2, 3))
    with pytest.raises(ValueError, match="out of range"):
        LatencyHistogram(FIO_BINS, {1856: 1})


# -- merging --------------------------------------------------------------------------------------

def test_merging_same_edges_is_a_bucket_wise_sum() -> None:
    merged = buckets(60, 30, 9, 1).merge(buckets(40, 10, 1, 0))
    assert merged == buckets(100, 40, 10, 1)
    # N = 151, p99 rank = ceil(149.49) = 150 = running count of the third bucket (100, 140, 150).
    assert merged.percentile_ns(99) == 500_000
    # Through a RunResult: two jobs' histograms merge in RunResult.total, the criterion reads the sum.
    assert latency_ns_of(run_of(buckets(60, 30, 9, 1), buckets(40, 10, 1, 0)), "p99", "read") == 500_000


def test_merging_fio_with_vdbench_is_refused_naming_both() -> None:
    fio = LatencyHistogram.from_fio(Histogram.from_latencies_ns([150_000] * 100))
    with pytest.raises(HistogramSchemeMismatch, match=r"different bucket schemes.*fio json\+ bins.*vdbench histogram buckets"):
        fio.merge(buckets(60, 30, 9, 1))
    p99_read = latency_bound.Params(max_latency="1s", stat="p99", direction="read")
    verdict = latency_bound.evaluate(run_of(fio, buckets(60, 30, 9, 1)), p99_read)
    assert not verdict.passed
    assert "fio json+ bins" in verdict.detail and "vdbench histogram buckets" in verdict.detail, verdict.detail


def test_merging_different_edges_is_refused() -> None:
    other = LatencyHistogram.of_buckets((0, 50_000, INF), (1, 1), origin="other buckets")
    with pytest.raises(HistogramSchemeMismatch, match="different bucket edges.*vdbench histogram buckets.*other buckets"):
        buckets(1, 0, 0, 0).merge(other)


def test_fio_bins_keep_fios_exact_rule() -> None:
    data = load_json((DATA / "randrw.json").read_text(), "randrw.json")
    pcts = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99)
    for job in data["jobs"]:
        for direction in ("read", "write"):
            bins = job[direction]["clat_ns"]["bins"]
            reference = Histogram.from_json_bins(bins)
            hist = LatencyHistogram.from_fio_json_bins(bins)
            assert hist.scheme == FIO_BINS and hist.total == reference.total
            assert [hist.percentile_ns(p) for p in pcts] == [reference.percentile_ns(p) for p in pcts]
    # The parser fills a FIO_BINS histogram; the json+ view of it is the file's bins.
    parsed = parse_jobs(data, "localhost")[0][Dir.READ].clat
    assert parsed.histogram is not None and parsed.histogram.scheme == FIO_BINS
    assert parsed.bins == {int(k): v for k, v in data["jobs"][0]["read"]["clat_ns"]["bins"].items() if v}


def test_fio_json_bins_of_a_bucket_histogram_are_refused() -> None:
    stats = LatencyStats(samples=100, histogram=buckets(60, 30, 9, 1))
    with pytest.raises(HistogramSchemeMismatch, match="fio bins asked of vdbench histogram buckets"):
        _ = stats.bins


# -- properties: the bucket rule against a brute-force sort -----------------------------------

@settings(max_examples=150, deadline=None)
@given(latencies=st.lists(st.integers(min_value=0, max_value=900_000), min_size=1, max_size=200),
       hundredths=st.integers(min_value=1, max_value=10_000), split=st.integers(min_value=0, max_value=200))
def test_bucket_percentile_is_the_upper_edge_of_the_nearest_rank_samples_bucket(
        latencies: list[int], hundredths: int, split: int) -> None:
    """p = hundredths / 100 (1 -> p0.01 ... 10000 -> p100); rank = ceil(hundredths * N / 10000) in integers."""

    def hist(values: list[int]) -> LatencyHistogram:
        return buckets(*(sum(1 for v in values if EDGES[i] <= v < EDGES[i + 1]) for i in range(4)))

    whole = hist(latencies)
    rank = -(-hundredths * len(latencies) // 10_000)
    sample = sorted(latencies)[rank - 1]
    upper = next(EDGES[i + 1] for i in range(4) if EDGES[i] <= sample < EDGES[i + 1])
    assert whole.percentile_ns(hundredths / 100) == upper >= sample  # a bound the true value does not exceed
    cut = split % (len(latencies) + 1)
    assert LatencyHistogram.merged([hist(latencies[:cut]), hist(latencies[cut:])]) == whole
