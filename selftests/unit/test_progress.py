"""fio status parsing on captured fio 3.33 output, and the live progress line.

The fixtures in selftests/data/report/ are real `fio --status-interval=1
--output-format=json` stdout: a 70/30 randrw job (4 s), and two jobs (randread
and a randwrite with ramp_time=1, whose counters fio resets after the ramp),
which starts with the plain-text job line fio prints before the first report.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from iogate.report.progress import FioStatusParser, LiveStatus, Progress, progress_wanted

DATA = Path(__file__).resolve().parents[1] / "data" / "report"
RANDRW = (DATA / "fio_status_randrw_1job.json").read_text()
TWO_JOBS = (DATA / "fio_status_2jobs_ramp.json").read_text()


def parse_in_chunks(text: str, size: int) -> list[LiveStatus]:
    parser = FioStatusParser()
    statuses = []
    for offset in range(0, len(text), size):
        statuses += parser.feed(text[offset:offset + size])
    return statuses


def test_every_interval_report_is_parsed() -> None:
    statuses = FioStatusParser().feed(RANDRW)
    assert [s.elapsed_s for s in statuses] == [1, 2, 3, 4, 5]
    assert statuses[0].eta_s is None, "fio's INT_MAX eta means unknown"
    assert statuses[2].eta_s == 1


@pytest.mark.parametrize("size", [1, 7, 777, 4096])
def test_chunk_boundaries_do_not_change_the_result(size: int) -> None:
    assert parse_in_chunks(RANDRW, size) == FioStatusParser().feed(RANDRW)


def test_second_interval_rate_is_the_difference_of_cumulative_counters() -> None:
    second = FioStatusParser().feed(RANDRW)[1]
    # read total_ios 20140 -> 44346 while runtime 791 -> 1791 ms (values from the capture).
    assert second.iops["read"] == pytest.approx((44346 - 20140) / 1.0, rel=1e-6)
    # Sample-weighted difference of the cumulative means: (mean2*N2 - mean1*N1) / (N2 - N1).
    expected_ns = (35004.817526 * 44346 - 35124.548461 * 20140) / (44346 - 20140)
    assert second.clat_mean_ns["read"] == pytest.approx(expected_ns, rel=1e-6)
    assert 0.3 < second.iops["write"] / second.iops["read"] < 0.6, "70/30 mix"


def test_text_before_the_first_report_is_skipped_not_fatal() -> None:
    parser = FioStatusParser()
    statuses = parser.feed(TWO_JOBS)
    assert len(statuses) == 5
    assert parser.skipped_text and parser.skipped_text[0].startswith("a: (g=0): rw=randread")


def test_counter_reset_after_ramp_uses_the_since_reset_rate() -> None:
    statuses = FioStatusParser().feed(TWO_JOBS)
    # Job b's counters restart when its 1 s ramp ends; the delta (30254 ios in 106 ms) would claim 285k IOPS.
    assert statuses[1].iops["write"] == pytest.approx(199243.0, rel=0.01)
    assert statuses[2].iops["write"] == pytest.approx((365690 - 199044) / 1.0, rel=1e-6)


def test_finished_jobs_and_the_closing_report() -> None:
    statuses = FioStatusParser().feed(TWO_JOBS)
    assert statuses[-1].t_ms - statuses[-2].t_ms < 500
    # The closing report shows each job's overall result instead of a 14 ms sliver.
    assert statuses[-1].iops["read"] == pytest.approx(14375.0, rel=0.01)


def test_garbage_between_reports_is_skipped() -> None:
    parser = FioStatusParser()
    reports = RANDRW.split("\n}\n")
    noisy = reports[0] + "\n}\nfio: pid=123, err=5/file:io_u.c:1889, func=io_u error\n{ not json\n}\n" + reports[1] + "\n}\n"
    statuses = parser.feed(noisy)
    assert [s.elapsed_s for s in statuses] == [1, 2]
    assert any("io_u error" in text for text in parser.skipped_text)


def test_progress_is_quiet_under_ci_and_without_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    assert progress_wanted(Tty()) is True
    assert progress_wanted(io.StringIO()) is False
    monkeypatch.setenv("CI", "true")
    assert progress_wanted(Tty()) is False


def test_disabled_progress_writes_nothing() -> None:
    out = io.StringIO()
    with Progress(4, enabled=False, console=Console(file=out, force_terminal=True)) as progress:
        progress.start_point("test_sweep[4k]", 1)
        progress.feed_fio(RANDRW)
    assert out.getvalue() == ""


def test_live_line_shows_point_iops_latency_and_eta() -> None:
    out = io.StringIO()
    clock = iter(float(t) for t in range(0, 1000, 10))
    with Progress(3, enabled=True, console=Console(file=out, force_terminal=True, width=200),
                  clock=lambda: next(clock)) as progress:
        progress.start_point("test_sweep[4k-70]", planned_s=60)
        progress.start_point("test_sweep[8k-70]", planned_s=60)  # point 1 took 10 s of the fake clock
        statuses = progress.feed_fio(RANDRW.split("\n}\n")[0] + "\n}\n")
        line = progress.render().plain
    assert len(statuses) == 1
    assert line.startswith("[2/3] test_sweep[8k-70]")
    assert "read 25,461 IOPS @ 35 us" in line
    assert "write 10,823 IOPS" in line
    assert "ETA" in line and "--:--:--" not in line
    assert "test_sweep[8k-70]" in out.getvalue()


def test_eta_adds_remaining_points_at_the_mean_point_duration() -> None:
    now = [0.0]
    progress = Progress(5, enabled=False, clock=lambda: now[0])
    progress.start_point("p1", planned_s=100)
    now[0] = 120.0
    progress.start_point("p2", planned_s=100)  # p1 took 120 s
    now[0] = 150.0
    # p2 has 70 s of its plan left, then 3 points at 120 s each.
    assert progress.eta_s() == pytest.approx(70 + 3 * 120)
    progress.update(LiveStatus(t_ms=0, elapsed_s=30, eta_s=40, iops={"read": 1.0}))
    assert progress.eta_s() == pytest.approx(40 + 3 * 120), "fio's own eta wins over the plan"
