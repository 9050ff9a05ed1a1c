"""The array's counters beside a run point's host figures (iogate.arrays.counters): the window asked
for, no samples reported as no data, a failed call shown by name and never raised."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from iogate.arrays.base import ArraySample, Capability, Volume
from iogate.arrays.clock import ArrayClock, not_read
from iogate.arrays.counters import NO_SAMPLES, plan_volumes, run_point_counters
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import ArrayError
from iogate.hosts.connectors.base import Connection
from iogate.lab import DeviceIdentity
from iogate.metrics.types import Dir, Direction, JobResult, RunResult, Series

T0 = datetime(2026, 11, 24, 2, 0, tzinfo=UTC)
START_MS = int(T0.timestamp() * 1000)


def volume(name: str) -> Volume:
    return Volume(name, 1 << 30, DeviceIdentity(backing_file=f"/pool/{name}.img"))


def plan(*names: str) -> RunPlan:
    workload = WorkloadSpec("w", read_pct=100, runtime_s=10)  # 4 KiB: the default block size
    jobs = [JobSpec(f"j{i}", workload, Connection("block", "h1", volume(name), f"/dev/{name}")) for i, name in enumerate(names)]
    return RunPlan("point", tuple(jobs))


def result(read_iops: float, write_iops: float) -> RunResult:
    job = JobResult(
        "j0",
        "h1",
        {
            Dir.READ: Direction(Dir.READ, ios=1, iops=read_iops),
            Dir.WRITE: Direction(Dir.WRITE, ios=1, iops=write_iops),
            Dir.TRIM: Direction(Dir.TRIM),
        },
    )
    return RunResult("point", (job,), Series(), START_MS, START_MS + 10_000)


def sample(second: int, read: float, write: float) -> ArraySample:
    return ArraySample(T0 + timedelta(seconds=second), 1.0, read, write, 200.0 if read else None, None)


UNREAD = not_read("fake: no clock call")
CLOCK_LINE = "array clock not read: fake: no clock call"


class FakeArray:
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.METRICS})

    def __init__(self, answers: dict[str, list[ArraySample] | Exception], clock: ArrayClock | Exception = UNREAD) -> None:
        self.answers = answers
        self.asked: list[tuple[str, datetime, datetime]] = []
        self.clock = clock

    def array_clock(self) -> ArrayClock:
        if isinstance(self.clock, Exception):
            raise self.clock
        return self.clock

    def volume_metrics(self, volume: Volume, start: datetime, end: datetime) -> list[ArraySample]:
        self.asked.append((volume.name, start, end))
        answer = self.answers[volume.name]
        if isinstance(answer, Exception):
            raise answer
        return answer


def counters(array: FakeArray, the_plan: RunPlan, the_result: RunResult) -> Any:
    return run_point_counters(array, "fake", the_plan, the_result)  # type: ignore[arg-type]


def test_an_array_without_metrics_gives_nothing() -> None:
    class NoMetrics(FakeArray):
        capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.SNAPSHOT})

    assert counters(NoMetrics({}), plan("v1"), result(100, 0)) is None


def test_each_volume_once_over_the_measured_window() -> None:
    the_plan = plan("v1", "v2", "v1")
    assert [v.name for v in plan_volumes(the_plan)] == ["v1", "v2"]
    array = FakeArray({"v1": [sample(2, 300.0, 0.0), sample(1, 100.0, 0.0)], "v2": [sample(1, 50.0, 10.0)]})
    got = counters(array, the_plan, result(440.0, 12.0))
    assert array.asked == [("v1", T0, T0 + timedelta(seconds=10)), ("v2", T0, T0 + timedelta(seconds=10))]
    assert [s.time for s in got.volumes[0].samples] == [T0 + timedelta(seconds=1), T0 + timedelta(seconds=2)]  # oldest first
    # v1 reads mean (100 + 300) / 2 = 200, v2 50: 250 read; writes 0 + 10 = 10; total 260.
    assert got.array_iops() == {"read": 250.0, "write": 10.0, "total": 260.0}
    # Two and one 1 s samples of a 10 s window: the rest of it is named as missing, and the clock as not read.
    assert got.summary_line() == (
        "array counters (fake): array-seen 260.0 IOPS (read 250.0, write 10.0) vs host-seen 452.0 IOPS (read 440.0, write 12.0)"
        "; v1: 2 of about 9 sample(s); missing 2026-11-24T02:00:02+00:00 .. 2026-11-24T02:00:10+00:00: about 7 sample(s) missing"
        "; v2: 1 of about 9 sample(s); missing 2026-11-24T02:00:01+00:00 .. 2026-11-24T02:00:10+00:00: about 8 sample(s) missing"
        f"; {CLOCK_LINE}"
    )
    csv_lines = got.csv().splitlines()
    assert csv_lines[0] == "volume,time,interval_s,read_iops,write_iops,read_latency_us,write_latency_us,note"
    assert csv_lines[1] == "v1,2026-11-24T02:00:01+00:00,1.0,100.0,0.0,200.0,,"  # no write latency: empty, not 0
    assert len(csv_lines) == 4


def test_no_samples_is_said_never_zeros() -> None:
    got = counters(FakeArray({"v1": []}), plan("v1"), result(400.0, 0.0))
    assert got.array_iops() is None
    assert got.summary_line() == (
        f"array counters (fake): {NO_SAMPLES}; host-seen 400.0 IOPS (read 400.0, write 0.0); v1: {NO_SAMPLES}; {CLOCK_LINE}"
    )
    assert got.csv() == f"# v1: {NO_SAMPLES}\n"
    document = json.loads(got.to_json())
    assert document["array_iops"] is None and document["volumes"][0]["evidence"] is None
    assert document["volumes"][0]["missing"] == ["the array reported no samples for this window: all of it is missing"]


def test_a_failed_call_is_evidence_not_an_exception() -> None:
    array = FakeArray({"v1": [sample(1, 100.0, 0.0)], "v2": ArrayError("GET /volumes/performance: 503")})
    got = counters(array, plan("v1", "v2"), result(150.0, 0.0))
    call = f"volume_metrics(v2, {T0.isoformat()}, {(T0 + timedelta(seconds=10)).isoformat()})"
    assert got.volumes[1].error == f"{call}: ArrayError: GET /volumes/performance: 503"
    line = got.summary_line()
    assert line.startswith("array counters (fake): array-seen 100.0 IOPS (read 100.0, write 0.0) from 1 of 2 volumes vs host-seen")
    assert f"; v2: error: {call}: ArrayError: GET /volumes/performance: 503;" in line
    assert json.loads(got.to_json())["volumes"][1]["error"].startswith("volume_metrics(v2, ")

    only_error = counters(FakeArray({"v2": RuntimeError("boom")}), plan("v2"), result(1.0, 0.0))
    assert only_error.array_iops() is None
    assert only_error.summary_line().startswith("array counters (fake): no figures; host-seen 1.0 IOPS")
    assert "RuntimeError: boom" in only_error.csv()


def test_a_side_some_volume_did_not_report_is_not_summed_as_zero() -> None:
    unreported = ArraySample(T0 + timedelta(seconds=1), 1.0, None, 20.0, None, 100.0)
    got = counters(FakeArray({"v1": [unreported], "v2": [sample(1, 100.0, 5.0)]}), plan("v1", "v2"), result(100.0, 25.0))
    assert got.array_iops() == {"read": None, "write": 25.0, "total": None}
    assert "array-seen IOPS (read not reported, write 25.0)" in got.summary_line()


def whole_window(read: float) -> list[ArraySample]:
    return [sample(second, read, 0.0) for second in range(1, 11)]


def test_a_window_the_samples_cover_names_nothing_missing() -> None:
    got = counters(FakeArray({"v1": whole_window(100.0)}), plan("v1"), result(100.0, 0.0))
    assert got.volumes[0].status == "10 sample(s)" and not got.volumes[0].partial
    assert json.loads(got.to_json())["volumes"][0]["missing"] == []


def test_a_gap_in_the_samples_is_named_with_how_many_are_missing_not_filled_with_zeros() -> None:
    samples = [s for s in whole_window(100.0) if s.time.second not in (4, 5, 6)]
    got = counters(FakeArray({"v1": samples}), plan("v1"), result(100.0, 0.0))
    gap = "2026-11-24T02:00:03+00:00 .. 2026-11-24T02:00:07+00:00: about 3 sample(s) missing"
    assert got.volumes[0].status == f"7 of about 10 sample(s); missing {gap}"
    assert json.loads(got.to_json())["volumes"][0]["missing"] == [gap]
    assert got.array_iops() == {"read": 100.0, "write": 0.0, "total": 100.0}  # the mean of the samples there are, not of zeros
    assert f"v1: 7 of about 10 sample(s); missing {gap}" in got.summary_line()


def test_the_arrays_clock_offset_is_stated_and_flagged_when_it_reaches_a_sample_interval() -> None:
    near = counters(FakeArray({"v1": whole_window(1.0)}, ArrayClock(0.2, 0.1, "GET /x date")), plan("v1"), result(1.0, 0.0))
    assert near.summary_line().endswith("; array clock - controller clock = +0.2 s (+/- 0.1 s; GET /x date)")
    assert json.loads(near.to_json())["clock"]["offset_s"] == 0.2
    far = counters(FakeArray({"v1": whole_window(1.0)}, ArrayClock(-1.5, 0.1, "GET /x date")), plan("v1"), result(1.0, 0.0))
    assert far.summary_line().endswith(
        "; array clock - controller clock = -1.5 s (+/- 0.1 s; GET /x date)"
        "; the clocks differ by a sample interval (1 s) or more: samples may belong to a neighbouring window"
    )


def test_a_failed_clock_read_is_said_and_the_counters_still_reported() -> None:
    got = counters(FakeArray({"v1": whole_window(1.0)}, ArrayError("GET /cluster/nodes: HTTP 503")), plan("v1"), result(1.0, 0.0))
    assert got.volumes[0].samples and got.clock.offset_s is None
    assert got.summary_line().endswith("; array clock not read: array_clock(): ArrayError: GET /cluster/nodes: HTTP 503")
