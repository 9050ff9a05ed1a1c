"""vdbench's response-time buckets reach the RunResult: latency criteria judge vdbench runs.

Expected percentiles are worked by hand from the sample files' histogram
tables (the sums are in the comments), never through the parser.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.engines.vdbench.outdir import parse_outdir, to_run_result
from iogate.judging import latency_bound
from iogate.judging.common import latency_ns_of
from iogate.metrics.latency import Buckets
from iogate.metrics.types import Dir

SAMPLES = Path(__file__).resolve().parents[2].parent.parent / "shared" / "samples" / "vdbench"
if not SAMPLES.is_dir():
    SAMPLES = Path("/work/shared/samples/vdbench")
pytestmark = pytest.mark.skipif(not (SAMPLES / "run1_block_dedup").is_dir(),
                                reason=f"vdbench sample outputs not found at {SAMPLES} (a fresh clone has no shared/)")


def test_p99_of_a_write_only_point_is_the_bucket_edge_read_from_histogram_html() -> None:
    # run1_block_dedup/histogram.html, first point (4k, rdpct=0, threads=1), "Only writes done":
    # counts 0, 23, 4419, 23287, 26160, 25972, 2599, 638, 363, 226 (0.8-1.0 ms), 429, 299, 72, 10, 7, 7, 1, then zeros.
    # N = 84512; p99 rank = ceil(0.99 * 84512) = ceil(83666.88) = 83667.
    # Running count 83461 after the 0.6-0.8 ms bucket, 83687 after 0.8-1.0 ms: p99 = 1.000 ms.
    output = parse_outdir(SAMPLES / "run1_block_dedup")
    point = output.points[0]
    assert point.label == "rd_ran xfersize=4k rdpct=0 threads=1"
    result = to_run_result(output, point, "localhost")
    write = result.total(Dir.WRITE).clat
    assert write.histogram is not None and write.histogram.total == 84512
    assert isinstance(write.histogram.scheme, Buckets) and write.histogram.scheme.open_ended
    assert latency_ns_of(result, "p99", "write") == 1_000_000.0
    assert latency_ns_of(result, "p99", "all") == 1_000_000.0  # no reads: the write buckets are all there is
    # The histogram counts every interval, the window only 2-12: the evidence says so.
    assert write.samples < write.histogram.total
    assert "intervals 1-12, warmup included (the judged window is intervals 2-12)" in write.histogram.covers
    assert result.total(Dir.READ).clat.histogram is None  # no read section: no read histogram
    assert latency_bound.evaluate(result, latency_bound.Params(max_latency="1ms", stat="p99", direction="write")).passed
    assert not latency_bound.evaluate(result, latency_bound.Params(max_latency="999999ns", stat="p99", direction="write")).passed


def test_each_workload_carries_its_own_buckets_and_they_sum_to_the_total() -> None:
    # run3_vm_tile/sql.histogram.html, first point, "Reads:": counts 100 (0.1-0.2 ms), 844, 135, 41, 27,
    # 41 (1-2 ms), 18 (2-4 ms), 5, 2, 2, 1. N = 1216; p99 rank = ceil(1203.84) = 1204;
    # running count 1188 after 1-2 ms, 1206 after 2-4 ms: p99 = 4.000 ms.
    output = parse_outdir(SAMPLES / "run3_vm_tile")
    point = output.points[0]
    result = to_run_result(output, point, "localhost")
    sql = result.total(Dir.READ, jobs=["sql"]).clat.histogram
    assert sql is not None and sql.total == 1216
    assert sql.percentile_ns(99) == 4_000_000.0
    assert "sql.histogram.html" in sql.covers
    # Bucket-wise sum of the two workloads' reads = histogram.html's "Reads:" table.
    merged = result.total(Dir.READ).clat.histogram
    assert merged is not None and merged.counts == point.histograms["read"].latency().counts


def test_a_file_system_run_has_no_per_direction_buckets_so_its_percentiles_are_no_data() -> None:
    output = parse_outdir(SAMPLES / "run4_filesystem")
    result = to_run_result(output, output.points[-1], "localhost")
    verdict = latency_bound.evaluate(result, latency_bound.Params(max_latency="1s", stat="p99", direction="read"))
    assert not verdict.passed and "no latency histogram bins" in verdict.detail
