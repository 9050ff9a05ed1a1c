"""FioEngine: run a plan's jobs with fio on their initiators, parse into a RunResult.

Each host gets one job file with its jobs and runs one fio process (hosts run in
parallel threads). The guard checks every target first; fio is journalled in the
ledger (its job file path is the marker cleanup kills by, here or on the host:
iogate/hosts/processes.py). On a remote host the
job file, output and logs live in a working directory there (iogate/hosts/workdir.py),
journalled as that host's resource and removed once the results are fetched.
"""

from __future__ import annotations

import base64
import csv
import heapq
import io
import math
import re
import shlex
import tarfile
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from testinfra.backend.base import CommandResult

from iogate.engines.base import HostEngine, LoadControl, StatusObserver, job_target, with_targets
from iogate.engines.fio import jobfile, live_reduce, parse
from iogate.engines.fio.aborts import abort_message, unfinished
from iogate.engines.fio.live import StatusTail, planned_dirs
from iogate.engines.workload import JobSpec, RunPlan
from iogate.errors import EngineError, HostError
from iogate.hosts import processes
from iogate.hosts.cgroup import join_cgroup_shell
from iogate.hosts.guard import Guard, distinct
from iogate.hosts.initiator import Initiator
from iogate.hosts.workdir import RemoteWorkdir
from iogate.metrics.grid import JobGrid, job_grids
from iogate.metrics.types import HistSample, JobResult, JobSpan, RunResult, Sample, Series
from iogate.run import Run
from iogate.units import ns_to_us

# fio may take a while to lay out files or drain queues after its runtime.
GRACE_S = 120
# `timeout` sends KILL this long after its TERM.
KILL_AFTER_S = 10
# A fio stuck in uninterruptible I/O (a frozen or dead array) survives even KILL, and `timeout` waits
# for it: the engine waits this long after the KILL, then reports the hang instead of hanging too.
STUCK_S = 20
_SIGNAL = re.compile(r"got signal=\d+")
# `timeout` exits 124 when it stopped fio with TERM; 137 when KILL was needed, the same as a fio
# killed by anyone else, so that one counts only once the deadline has passed.
_TIMED_OUT, _TIMED_OUT_KILLED = 124, 137


class _Hung(EngineError):
    """fio outlived its deadline and every signal: its processes and files stay for cleanup."""


@dataclass
class HostOutcome:
    host: str
    jobs: list[JobResult]
    samples: list[Sample]
    hist: list[HistSample]
    spans: list[JobSpan]
    end_ms: int
    runtime_ms: int
    cpu_busy_pct: float
    artifacts: dict[str, str] = field(default_factory=dict)


class FioEngine(HostEngine):
    name = "fio"

    def __init__(self, run: Run, initiators: Mapping[str, Initiator], guard: Guard, observer: StatusObserver | None = None,
                 settings: jobfile.FioSettings = jobfile.DEFAULT_SETTINGS) -> None:
        super().__init__(initiators, guard)
        self.run = run
        self.observer = observer
        self.settings = settings

    def check_plan(self, plan: RunPlan) -> None:
        """Unsupported for what fio cannot express (jobfile.py): each job's options rendered, nothing run."""
        for job in plan.jobs:
            jobfile.job_options(job, job.name, self.settings)

    def run_plan(self, plan: RunPlan, control: LoadControl | None = None) -> RunResult:
        """Run all jobs of the plan at once (see module docstring)."""
        self.check_plan(plan)
        point = self._next_point(plan)
        by_host: dict[str, list[JobSpec]] = {}
        for job in plan.jobs:
            by_host.setdefault(job.target.host, []).append(job)
        for target in distinct(job.target for job in plan.jobs):
            self.guard.check(self._initiator(target.host), target)
        with ThreadPoolExecutor(max_workers=len(by_host)) as pool:
            futures = [pool.submit(self._run_host, point, self._initiator(h), jobs, control) for h, jobs in by_host.items()]
            outcomes = [f.result() for f in futures]
        return self._combine(plan, point, outcomes)

    def _run_host(self, point: str, initiator: Initiator, jobs: list[JobSpec], control: LoadControl | None = None) -> HostOutcome:
        local_dir = self.run.path("points", point, initiator.name, "job.fio").parent
        if initiator.is_local:
            return self._run_in(str(local_dir), local_dir, initiator, jobs, control)
        workdir = RemoteWorkdir(self.run, initiator, point)
        try:
            outcome = self._run_in(workdir.path, local_dir, initiator, jobs, control)
        except _Hung:
            raise  # fio still holds the directory: it stays journalled for cleanup
        except BaseException:
            workdir.remove(failing=True)
            raise
        workdir.remove()
        return outcome

    def _run_in(self, work: str, local_dir: Path, initiator: Initiator, jobs: list[JobSpec],
                control: LoadControl | None) -> HostOutcome:
        text = jobfile.render(jobs, f"{work}/logs", self.settings)
        (local_dir / "job.fio").write_text(text)
        job_path = f"{work}/job.fio"
        initiator.run("mkdir -p %s", f"{work}/logs")
        if not initiator.is_local:
            initiator.write_text(job_path, text)
        cgroups = {job.target.cgroup for job in jobs if job.target.cgroup}
        if len(cgroups) > 1:
            raise EngineError(f"host {initiator.name}: jobs of one fio process span cgroups {sorted(cgroups)}")
        join = f"{join_cgroup_shell(cgroups.pop())} && " if cgroups else ""
        limit_s = int(max(j.workload.runtime_s + j.workload.ramp_s for j in jobs)) + GRACE_S
        # Live status only where the output file can be watched as it grows (this machine).
        watch = self.observer is not None and initiator.is_local
        # A live judge reads fio's status reports (engines/fio/live.py): one each second, here or on the host.
        live = control is not None and control.wants_intervals
        command = (
            f"cd {shlex.quote(work)} && {join}exec timeout --kill-after={KILL_AFTER_S} {limit_s} "
            f"fio --output-format=json+ --output=out.json {'--status-interval=1 ' if watch or live else ''}{shlex.quote(job_path)}"
        )
        entry = processes.journal(self.run.ledger, initiator, f"fio on {initiator.name}", job_path)
        busy0, total0 = initiator.cpu_ticks()
        stop = threading.Event()
        watchers = []
        steer: _Steer | None = None
        if watch:
            watchers.append(threading.Thread(target=self._watch, args=(local_dir / "out.json", stop), daemon=True))
        if control is not None:
            ramp_s = max(j.workload.ramp_s for j in jobs)
            steer = _Steer(initiator, job_path, f"{work}/out.json", ramp_s, control, stop)
            watchers.append(threading.Thread(target=steer.run, daemon=True))
        if control is not None and live:
            tail = StatusTail(initiator.name, planned_dirs(jobs), math.ceil(max(j.workload.ramp_s for j in jobs)) + 1)
            watchers.append(threading.Thread(target=_feed_live, args=(initiator, f"{work}/out.json", tail, control, stop), daemon=True))
        for watcher in watchers:
            watcher.start()
        started_s = time.monotonic()
        hung = False
        done: CommandResult | None = None
        try:
            done = _bounded(initiator, command, limit_s + KILL_AFTER_S + STUCK_S)
            hung = done is None
        except HostError as exc:
            # The transport broke mid-run (the host crashed, was powered off, its VM killed): what was
            # lost is the load on these targets; the transport's own words follow.
            raise HostError(f"host {initiator.name} lost during the load: fio's I/O on {_targets(jobs)} ended without "
                            f"results ({exc})") from None
        finally:
            stop.set()
            for watcher in watchers:
                watcher.join()
            if not hung:
                processes.ended(self.run.ledger, entry, initiator, exited_cleanly=done is not None and done.rc == 0)
        if done is None:
            # The fio process is still there, journalled: the run's teardown (or the next session's start)
            # removes it once the array completes or fails its I/O; this test cannot wait for that.
            raise _Hung(f"host {initiator.name}: fio did not end within {limit_s} s (its runtime + {GRACE_S} s grace) "
                        f"and could not be stopped ({job_path}): I/O hung on {_targets(jobs)}; {KILL_AFTER_S + STUCK_S} s "
                        "after TERM and KILL fio is still in uninterruptible I/O, which ends only when the array "
                        "completes or fails it")
        if done.rc == _TIMED_OUT or (done.rc == _TIMED_OUT_KILLED and time.monotonic() - started_s >= limit_s):
            # fio answers timeout's SIGTERM with a json that reads like a short clean run.
            raise EngineError(f"host {initiator.name}: fio did not end within {limit_s} s (its runtime + {GRACE_S} s grace) "
                              f"and was stopped ({job_path}): I/O hung or far slower than planned on {_targets(jobs)}")
        busy1, total1 = initiator.cpu_ticks()
        output = initiator.run_unchecked("cat %s", f"{work}/out.json").stdout
        # fio reports a crash (e.g. SIGFPE in verify) only as text before its JSON; the JSON
        # would still say error 0, so a crashed job must not pass as a clean run.
        crashed = _SIGNAL.search(f"{done.stdout}\n{done.stderr}\n{output[:output.find('{')] if '{' in output else output}")
        if crashed:
            raise EngineError(f"host {initiator.name}: fio {crashed.group(0)} ({job_path}); its results are not trustworthy")
        aborted = abort_message(f"{done.stdout}\n{done.stderr}")
        if aborted:
            raise EngineError(f"host {initiator.name}: fio aborted ({job_path}): {aborted}")
        # fio writes "fio: terminating on signal N" into its output file, before the JSON (or between
        # status reports). Only the stop this engine asked for (_Steer's SIGINT), answered with fio's final
        # report, is a normal end; a fio killed by anyone else left status reports that read like a short
        # run (and no per-second logs): an engine error, so the point is lost and named, never "stopped".
        ended = unfinished(done.rc, f"{done.stdout}\n{done.stderr}\n{output}", stop_asked=steer is not None and steer.stopped,
                           threads=sum(j.workload.numjobs for j in jobs))
        if ended:
            raise EngineError(f"host {initiator.name}: {ended} ({job_path})")
        if not output.strip():
            raise EngineError(f"host {initiator.name}: fio exited {done.rc} without output: {(done.stderr or done.stdout).strip()[-1500:]}")
        data = parse.load_json(output, f"{initiator.name}:{work}/out.json")
        (local_dir / "out.json").write_text(output)
        artifacts = {f"{initiator.name} job file": str(local_dir / "job.fio"), f"{initiator.name} fio json+": str(local_dir / "out.json")}
        if "fio:" in done.stderr:
            # Where fio names what failed ("fio: io_u error on file /dev/loop7: Input/output error: write offset=...");
            # the job's json says only its errno. (Over SSH, stderr without "fio:" is ssh's own chatter.)
            (local_dir / "fio.stderr").write_text(done.stderr)
            artifacts[f"{initiator.name} fio stderr"] = str(local_dir / "fio.stderr")
        logs = self._fetch_logs(initiator, f"{work}/logs", local_dir / "logs")
        samples, hist = parse.parse_logs(logs, initiator.name)
        results = parse.parse_jobs(data, initiator.name)
        runtime_ms = max(parse.entry_runtime_ms(j) for j in data["jobs"])
        start_ms = parse.measured_start_ms(data, samples, initiator.name)
        return HostOutcome(
            host=initiator.name,
            jobs=results,
            samples=samples,
            hist=hist,
            spans=parse.job_spans(data, initiator.name, start_ms, samples),
            end_ms=start_ms + runtime_ms,
            runtime_ms=runtime_ms,
            cpu_busy_pct=100.0 * (busy1 - busy0) / max(total1 - total0, 1),
            artifacts=artifacts,
        )

    def _watch(self, path: Path, stop: threading.Event) -> None:
        """Feed fio's per-second status reports to the observer while fio writes them."""
        offset = 0
        while not stop.wait(0.5):
            try:
                with path.open() as handle:
                    handle.seek(offset)
                    chunk = handle.read()
            except OSError:
                continue
            offset += len(chunk.encode())
            if chunk and self.observer is not None:
                self.observer.feed_fio(chunk)

    def _fetch_logs(self, initiator: Initiator, remote_dir: str, local_dir: Path) -> dict[str, str]:
        if initiator.is_local:
            return {p.name: p.read_text() for p in sorted(local_dir.glob("*.log"))}
        # One round trip for all of them: 32 VMs write ~100 logs, and each SSH command costs a second on a slow host.
        packed = initiator.run("cd %s && find . -maxdepth 1 -name '*.log' -printf '%%P\\0' | tar -czf - --null -T - | base64 -w0",
                              remote_dir).stdout
        local_dir.mkdir(parents=True, exist_ok=True)
        files = {}
        with tarfile.open(fileobj=io.BytesIO(base64.b64decode(packed)), mode="r:gz") as archive:
            for member in archive.getmembers():
                handle = archive.extractfile(member)
                if member.isfile() and handle is not None and "/" not in member.name:
                    files[member.name] = handle.read().decode()
                    (local_dir / member.name).write_text(files[member.name])
        return files

    def _combine(self, plan: RunPlan, point: str, outcomes: list[HostOutcome]) -> RunResult:
        series = Series(
            samples=tuple(s for o in outcomes for s in o.samples),
            hist=tuple(h for o in outcomes for h in o.hist),
            spans=tuple(span for o in outcomes for span in o.spans),
        )
        end_ms = max(o.end_ms for o in outcomes)
        start_ms = min(o.end_ms - o.runtime_ms for o in outcomes)
        csv_path = self.run.path("points", point, "series.csv")
        csv_path.write_text(series_csv(series, start_ms))
        artifacts = {"per-second CSV": str(csv_path)}
        for outcome in outcomes:
            artifacts.update(outcome.artifacts)
        return RunResult(
            name=plan.name,
            jobs=with_targets(plan, (j for o in outcomes for j in o.jobs)),
            series=series,
            start_ms=start_ms,
            end_ms=end_ms,
            artifacts=artifacts,
            cpu_busy_pct={o.host: o.cpu_busy_pct for o in outcomes},
        )


def _feed_live(initiator: Initiator, path: str, tail: StatusTail, control: LoadControl, done: threading.Event) -> None:
    """Read what fio appended to its output file each second; publish the whole intervals it completes."""
    offset = 0
    reduced = not initiator.is_local  # a remote host sends only the lines the feed reads (live_reduce)
    while not done.wait(1.0):
        if initiator.is_local:
            try:
                with open(path, "rb") as handle:
                    handle.seek(offset)
                    data = handle.read()
            except OSError:
                continue
            text, consumed = data.decode(errors="replace"), len(data)
        else:
            got = live_reduce.split_reply(initiator.run_unchecked(live_reduce.read_command(path, offset)).stdout) if reduced else None
            if got is None:
                # No GNU grep or awk there, or the read failed: from now on the whole bytes, as fio wrote them.
                reduced = False
                data = initiator.run_unchecked("tail -c +%s %s", str(offset + 1), path).stdout.encode()
                got = data.decode(errors="replace"), len(data)
            text, consumed = got
        offset += consumed
        samples = tail.feed(text)
        if samples and not control.stop_requested:
            control.publish(initiator.name, samples)
        if tail.failed and not control.stop_requested:
            control.publish_errors(initiator.name, tail.failed)


def _targets(jobs: list[JobSpec]) -> str:
    """The targets of one host's jobs, as the user knows them: device (or file) and volume."""
    return ", ".join(dict.fromkeys(job_target(j).describe() for j in jobs))


def _bounded(initiator: Initiator, command: str, wait_s: float) -> CommandResult | None:
    """`sh -c command` on the host, waited for at most wait_s; None when it has not ended by then
    (it goes on in a daemon thread: a process in uninterruptible I/O cannot be ended from here)."""
    box: list[CommandResult | BaseException] = []
    ended = threading.Event()

    def run() -> None:
        try:
            box.append(initiator.run_unchecked("sh -c %s", command))
        except BaseException as exc:  # handed to the caller's thread
            box.append(exc)
        finally:
            ended.set()

    threading.Thread(target=run, name=f"fio on {initiator.name}", daemon=True).start()
    if not ended.wait(wait_s):
        return None
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


class _Steer:
    """The LoadControl's engine side for one host's fio: report the measurement start, stop on request.

    fio prints a status report (in its output format, to its output file) on
    SIGUSR1. A report taken after the ramp gives the measured phase's start
    exactly: its timestamp_ms minus the jobs' job_runtime (which fio resets
    when the ramp ends; `elapsed`, whole seconds since the job began, tells
    the reports after the ramp). Asked to stop, fio gets SIGINT: it ends its
    jobs and writes its results and logs as at a normal end.
    """

    def __init__(self, initiator: Initiator, job_path: str, output_path: str, ramp_s: float, control: LoadControl,
                 done: threading.Event) -> None:
        self.initiator = initiator
        self.pattern = f"^fio .*{re.escape(job_path)}"
        self.output_path = output_path
        self.first_elapsed_s = math.ceil(ramp_s) + 1
        self.control = control
        self.done = done
        self.stopped = False  # this steer sent fio its SIGINT (a stop asked for, not an interruption)

    def run(self) -> None:
        try:
            while not self.done.is_set() and self.control.wait_measuring(0) is None:
                self._signal(_SIGUSR1)
                if self.done.wait(1.0):
                    break
                since_ms = measurement_start_ms(self._report_lines(), self.first_elapsed_s)
                if since_ms is not None:
                    self.control.measuring(since_ms)
            while not self.done.is_set():
                if self.control.wait_stop(0.2):
                    self.stopped = True
                    while not self._signal(_SIGINT) and not self.done.wait(0.5):
                        pass
                    return
        finally:
            self.control.measuring()  # fio ended (or never ran): whatever waits must not hang

    def _signal(self, number: int) -> bool:
        """Signal fio's main process (the oldest; its job processes stay untouched), only once it
        catches that signal: a slow host runs fio's set-up for seconds, and an uncaught SIGUSR1 or
        SIGINT would kill it without a result. True when sent."""
        script = (
            'pid=$(pgrep -o -f "$1") || exit 3; '
            "mask=$(awk '/^SigCgt:/ {print $2}' /proc/$pid/status) || exit 3; "
            '[ $(( (0x$mask >> ($2 - 1)) & 1 )) -eq 1 ] || exit 4; kill -$2 $pid'
        )
        return self.initiator.run_unchecked("sh -c %s iogate-signal %s %s", script, self.pattern, str(number)).rc == 0

    def _report_lines(self) -> str:
        return self.initiator.run_unchecked("grep -E %s %s", '"(timestamp_ms|elapsed|job_runtime)"', self.output_path).stdout


_SIGINT, _SIGUSR1 = 2, 10  # Linux numbers, as /proc/PID/status SigCgt counts them
_REPORT_KEY = re.compile(r'"(timestamp_ms|elapsed|job_runtime)"\s*:\s*(\d+)')


def measurement_start_ms(report_lines: str, first_elapsed_s: int) -> int | None:
    """The measured phase's start from fio status reports (each: timestamp_ms, then per job `elapsed`
    and `job_runtime`), from the first report whose jobs are all past the ramp; None before there
    is one. The latest job start counts: events must not fire before every job measures."""
    reports: list[tuple[int, list[tuple[int, int]]]] = []
    elapsed_s = 0
    for key, text in _REPORT_KEY.findall(report_lines):
        if key == "timestamp_ms":
            reports.append((int(text), []))
        elif key == "elapsed":
            elapsed_s = int(text)
        elif reports:
            reports[-1][1].append((elapsed_s, int(text)))
    for timestamp_ms, jobs in reports:
        if jobs and all(elapsed >= first_elapsed_s and runtime_ms > 0 for elapsed, runtime_ms in jobs):
            return max(timestamp_ms - runtime_ms for _, runtime_ms in jobs)
    return None


def series_csv(series: Series, start_ms: int) -> str:
    """Every job's expected intervals as CSV text (write_series_csv)."""
    out = io.StringIO()
    write_series_csv(series, start_ms, out)
    return out.getvalue()


def write_series_csv(series: Series, start_ms: int, out: IO[str]) -> None:
    """Every job's expected intervals as CSV (t_s from measurement start), for the report and spreadsheets.

    One row per job, clone, direction and interval of its grid: an interval fio
    logged no line for is a row of 0 IOPS with an empty latency (unknown). Rows in
    time order, then host, job, clone, direction; merged from the grids as written
    (an hour of 100 hosts is 360,000 rows: never held as a list).
    """
    writer = csv.writer(out)
    writer.writerow(["t_s", "t_epoch_ms", "host", "job", "clone", "dir", "iops", "clat_mean_us"])

    def rows(grid: JobGrid) -> Iterator[tuple[int, str, str, int, str, float, float | None]]:
        for t_ms, iops, latency in grid.intervals:
            yield t_ms, grid.host, grid.job, grid.clone, grid.dir.value, iops, latency

    for t_ms, host, job, clone, direction, iops, latency in heapq.merge(*(rows(g) for g in job_grids(series)),
                                                                         key=lambda r: r[:5]):
        writer.writerow([f"{(t_ms - start_ms) / 1000:.1f}", t_ms, host, job, clone, direction, f"{iops:.1f}",
                         "" if latency is None else f"{ns_to_us(latency):.1f}"])
