"""An hour of 1 s intervals from 100 hosts (synthetic fio logs) through the whole controller path:
per-host log parsing (one host's text at a time, as the client/server engine does), the run's
Series, its per-second CSV (written row by row, as run_cluster writes it), the measure window and
a baseline/event window pair, two checks (latency_bound p99, throughput_min) on them, and the
timeline chart. Peak RSS is this process's (run it alone).

    python -m selftests.bench.hour_path [--hosts 100] [--seconds 3600]

Prints one figure line per stage and `1 h x 100 hosts RSS = N MB` (the scaled label says what ran).
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time

from iogate.bench.synthetic import host_logs, ios_at
from iogate.engines.fio.parse import parse_logs
from iogate.engines.fio.runner import write_series_csv
from iogate.judging import latency_bound, throughput_min
from iogate.metrics.types import Dir, HistSample, JobSpan, Sample, Series
from iogate.metrics.windows import event_windows, measure_window, window_stats
from iogate.report import charts

START_MS = 1_700_000_000_000


def rss_mb() -> float:
    """This process's peak RSS: VmHWM (ru_maxrss would carry a forking parent's peak across exec)."""
    for line in open("/proc/self/status").read().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--seconds", type=int, default=3600)
    args = parser.parse_args()
    hosts, seconds = args.hosts, args.seconds
    stages: list[tuple[str, float]] = []
    peaks: list[str] = [f"imports {rss_mb():.0f}"]

    started = time.monotonic()
    generate_s = 0.0
    samples: list[Sample] = []
    hist: list[HistSample] = []
    spans = []
    for n in range(1, hosts + 1):
        made = time.monotonic()
        logs = host_logs(f"load-h{n}", n, START_MS, seconds)
        generate_s += time.monotonic() - made
        host_samples, host_hist = parse_logs(logs, f"h{n}")
        del logs
        samples += host_samples
        hist += host_hist
        spans.append(JobSpan(f"h{n}", f"load-h{n}", START_MS, START_MS + seconds * 1000))
    series = Series(tuple(samples), tuple(hist), spans=tuple(spans))
    del samples, hist
    peaks.append(f"parse logs {rss_mb():.0f}")
    stages.append(("parse logs", time.monotonic() - started - generate_s))

    mark = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch, open(f"{scratch}/series.csv", "w", newline="") as out:
        write_series_csv(series, START_MS, out)  # the per-second CSV artifact run_cluster writes
        csv_mb = out.tell() / 1e6
    peaks.append(f"per-second CSV {rss_mb():.0f}")
    stages.append((f"per-second CSV ({csv_mb:.0f} MB)", time.monotonic() - mark))

    mark = time.monotonic()
    end_ms = START_MS + seconds * 1000
    third_ms = seconds * 1000 // 3
    measure = window_stats(series, measure_window(START_MS, end_ms), block_size_bytes=4096)
    baseline_w, event_w, _ = event_windows(START_MS, end_ms, START_MS + third_ms, START_MS + 2 * third_ms)
    baseline = window_stats(series, baseline_w, block_size_bytes=4096)
    event = window_stats(series, event_w, block_size_bytes=4096)
    peaks.append(f"windows {rss_mb():.0f}")
    stages.append(("windows", time.monotonic() - mark))

    mark = time.monotonic()
    verdicts = [latency_bound.evaluate(w, latency_bound.Params(max_latency="5ms")) for w in (measure, baseline, event)]
    verdicts.append(throughput_min.evaluate(measure, throughput_min.Params(minimum=1)))
    peaks.append(f"judge {rss_mb():.0f}")
    stages.append(("judge", time.monotonic() - mark))

    mark = time.monotonic()
    png = charts.timeline_png(series, [("event", START_MS + third_ms, START_MS + 2 * third_ms)], start_ms=START_MS)
    peaks.append(f"timeline chart {rss_mb():.0f}")
    stages.append(("timeline chart", time.monotonic() - mark))

    # Worked from the generator's formula, not from the path under test: every read of every host and second.
    expected_ios = sum(ios_at(n, s) for n in range(1, hosts + 1) for s in range(1, seconds + 1))
    merged_ios = measure.of(Dir.READ).histogram.total
    label = f"{seconds / 3600:g} h x {hosts} hosts" if seconds % 3600 == 0 else f"{seconds / 60:g} min x {hosts} hosts"
    for stage, took_s in stages:
        print(f"{label}: {stage} = {took_s:.1f} s")
    print(f"{label}: synthetic log text generated in {generate_s:.1f} s (not part of the path)")
    print(f"{label}: {len(series.samples)} samples, {len(series.hist)} histogram lines; merged reads {merged_ios} "
          f"(expected {expected_ios}); verdicts {[v.passed for v in verdicts]}; chart {len(png) / 1e3:.0f} kB")
    print(f"{label}: peak RSS after each stage (MB): {', '.join(peaks)}")
    print(f"{label} RSS = {rss_mb():.0f} MB")
    return 0 if merged_ios == expected_ios and all(v.passed for v in verdicts) and png.startswith(b"\x89PNG") else 1


if __name__ == "__main__":
    raise SystemExit(main())
