"""fio histogram decoding and percentiles, checked against fio's own output and raw per-IO latencies."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from iogate.metrics.histogram import (
    PLAT_NR,
    Histogram,
    bin_bounds_ns,
    index_to_value_ns,
    parse_hist_log_line,
    read_hist_log,
    value_to_index,
)
from iogate.metrics.nodata import NoData

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
DIRS = {0: "read", 1: "write"}


def fio_doc(name: str) -> dict:
    text = (DATA / name).read_text()
    return json.loads(text[text.index("{"):])


def raw_clat_ns(*names: str) -> dict[str, list[int]]:
    """Every IO's completion latency from fio lat logs without averaging: `t, clat_ns, ddir, bs, ...`."""
    out: dict[str, list[int]] = {"read": [], "write": []}
    for name in names:
        for line in (DATA / name).read_text().splitlines():
            fields = [int(f) for f in line.split(",")]
            out[DIRS[fields[2]]].append(fields[1])
    return out


def exact_percentile(values: list[int], pct: float) -> int:
    """Nearest-rank percentile: the smallest value with at least pct % of the samples at or below it."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(pct / 100.0 * len(ordered))) - 1]


def test_bins_below_128_are_exact_and_above_are_midpoints() -> None:
    assert [index_to_value_ns(i) for i in (0, 1, 127)] == [0, 1, 127]
    assert value_to_index(127) == 127
    # Group 2 (error_bits 1): bin 128 holds 128..129, reported as 129.
    assert bin_bounds_ns(128) == (128, 130)
    assert index_to_value_ns(128) == 129
    assert value_to_index(128) == value_to_index(129) == 128
    assert value_to_index(130) == 129


def test_every_bin_midpoint_maps_back_to_its_bin_and_lies_inside_it() -> None:
    for index in range(PLAT_NR):
        low, high = bin_bounds_ns(index)
        mid = index_to_value_ns(index)
        assert low <= mid < high
        assert value_to_index(low) == value_to_index(high - 1) == value_to_index(mid) == index
        if index >= 128:
            assert (high - low) / low <= 1 / 64


def test_latencies_beyond_the_last_bin_land_in_it() -> None:
    assert value_to_index(10**15) == PLAT_NR - 1


@pytest.mark.parametrize("bad", [{"130": 1}, {"abc": 1}, {"129": -1}])
def test_json_bins_reject_keys_that_are_not_fio_midpoints_and_negative_counts(bad: dict) -> None:
    with pytest.raises(ValueError, match="json\\+ bin"):
        Histogram.from_json_bins(bad)


def test_counts_reject_out_of_range_bins() -> None:
    with pytest.raises(ValueError, match="out of range"):
        Histogram.from_counts({PLAT_NR: 1})


def test_percentile_follows_fio_rule_on_a_small_histogram() -> None:
    hist = Histogram.from_latencies_ns([100] * 90 + [1000] * 9 + [50_000])
    assert hist.total == 100
    assert hist.percentile_ns(50) == 100
    assert hist.percentile_ns(90) == 100
    assert hist.percentile_ns(91) == index_to_value_ns(value_to_index(1000))
    assert hist.percentile_ns(100) == index_to_value_ns(value_to_index(50_000))
    with pytest.raises(NoData, match="no latency samples: p99 of an empty histogram"):
        Histogram().percentile_ns(99)
    with pytest.raises(ValueError):
        hist.percentile_ns(0)


def test_json_plus_bins_hold_every_io_of_every_job() -> None:
    for job in fio_doc("randrw.json")["jobs"]:
        for direction in ("read", "write"):
            hist = Histogram.from_json_bins(job[direction]["clat_ns"]["bins"])
            assert hist.total == job[direction]["total_ios"] > 0
            assert hist.to_json_bins() == {int(k): v for k, v in job[direction]["clat_ns"]["bins"].items()}


def test_our_percentiles_equal_fios_own_per_job_percentiles() -> None:
    for job in fio_doc("randrw.json")["jobs"]:
        for direction in ("read", "write"):
            clat = job[direction]["clat_ns"]
            hist = Histogram.from_json_bins(clat["bins"])
            for key, fio_value in clat["percentile"].items():
                assert hist.percentile_ns(float(key)) == fio_value, (job["jobname"], direction, key)


def test_merged_json_plus_percentiles_within_1pct_of_exact_raw_latencies() -> None:
    """Two jobs' bins merged vs every IO's clat from the same run's raw latency logs."""
    jobs = fio_doc("randrw.json")["jobs"]
    raw = raw_clat_ns("randrw_clat.1.log", "randrw_clat.2.log")
    for direction in ("read", "write"):
        merged = Histogram.merged(Histogram.from_json_bins(j[direction]["clat_ns"]["bins"]) for j in jobs)
        assert merged.total == len(raw[direction]) > 1000
        for pct in (50, 90, 99, 99.9):
            exact = exact_percentile(raw[direction], pct)
            assert abs(merged.percentile_ns(pct) - exact) <= 0.01 * exact, (direction, pct)
        exact_mean = sum(raw[direction]) / len(raw[direction])
        assert abs(merged.mean_ns() - exact_mean) <= 0.01 * exact_mean


def test_binning_raw_latencies_reproduces_fios_json_bins() -> None:
    """Our value_to_index is fio's plat_val_to_idx: binning the raw log reproduces the json+ bins."""
    jobs = fio_doc("randrw.json")["jobs"]
    raw = raw_clat_ns("randrw_clat.1.log", "randrw_clat.2.log")
    for direction in ("read", "write"):
        merged = Histogram.merged(Histogram.from_json_bins(j[direction]["clat_ns"]["bins"]) for j in jobs)
        assert Histogram.from_latencies_ns(raw[direction]).counts == merged.counts


def test_hist_log_lines_decode_to_interval_histograms() -> None:
    lines = read_hist_log(DATA / "randrw_clat_hist.1.log")
    assert {line.direction for line in lines} == {"read", "write"}
    assert all(line.block_size_bytes == 4096 for line in lines)
    assert all(line.t_ms > 1_700_000_000_000 for line in lines)  # log_unix_epoch=1: epoch ms
    # fio logs each interval's own counts (delta since the previous line); the last partial
    # interval is not logged, so the lines add up to at most the job's json+ total.
    job = next(j for j in fio_doc("randrw.json")["jobs"] if j["jobname"] == "vm1")
    for direction in ("read", "write"):
        logged = Histogram.merged(line.histogram for line in lines if line.direction == direction)
        whole = Histogram.from_json_bins(job[direction]["clat_ns"]["bins"])
        assert 0.5 * whole.total <= logged.total <= whole.total
        assert all(count <= whole.counts.get(index, 0) for index, count in logged.counts.items())


def test_hist_log_errors_name_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad_clat_hist.1.log"
    good = (DATA / "randrw_clat_hist.1.log").read_text().splitlines()[0]
    bad.write_text(good + "\n" + "1000, 0, 4096, 1, 2, 3\n")
    with pytest.raises(ValueError, match=r"bad_clat_hist\.1\.log line 2: 6 fields"):
        read_hist_log(bad)
    with pytest.raises(ValueError, match="unknown data direction 7"):
        parse_hist_log_line("1000, 7, 4096, " + ", ".join(["0"] * PLAT_NR))
