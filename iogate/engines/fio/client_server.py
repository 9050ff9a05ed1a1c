"""fio client/server: the controller drives every host's `fio --server` at once.

`fio --client=<addr1> <jobfile1> --client=<addr2> <jobfile2> ...` sends each
host its own job file and starts them together (fio's synchronized start). The
json+ output holds one "client_stats" entry per job and host plus an "All
clients" aggregate, which has no latency bins and is never used: cluster
latency comes from summing the hosts' histogram bins (iogate.metrics.histogram).

Which host an entry belongs to is decided by the address the controller gave
`--client` (fio's "hostname" field echoes it); the server's own hostname is
useless here (every namespace of the netns lab says the same). Per-second logs
come back through the connection and the client writes them on the controller
as <log prefix>_<kind>.<n>.log.<client address>; they are renamed to the plain
fio names in a directory per host and parsed per host.

At many hosts: fio's host-list file (`--client=FILE`) sends one job file to every
host, so per-host job files (each host its own devices and log paths) take the
`--client=HOST JOBFILE` pairs on the command line (100 hosts: ~20 KB of argv,
far below ARG_MAX). The client's json+ is streamed from its output file one
client_stats entry at a time (stream_client_entries), each entry reduced to
typed results and fio's bins (BinCounts) as it is read (stream_host_jobs) and
the JSON text copied to client.json on the way; each host's per-second logs are
then read, parsed and dropped one host at a time, so only the results and
samples stay (selftests/bench/test_bench_scale.py times 1,000 hosts).

Live series: fio's client keeps its servers' status reports (--status-interval) to the
end, as more client_stats entries (status_reports_named refuses them), so the live judge is
fed from outside fio: each host's sampler also reads the block counters of the jobs' devices
each second (cs_live, iogate/metrics/device_feed.py; jobs alone on a block device only), and a
stop asked for ends every host's jobs (_ClusterSteer). The verdicts still come from fio's logs.

Failures: a host whose fio server disconnects (or cannot be reached), or whose
transport stops answering the watchdog, ends the run: the client is interrupted
(fio then tells every other server to stop its jobs), leftover job processes on
the remaining hosts are killed, and HostError names the host.

The watchdog (the lab's `host_liveness`, iogate.lab.HostLiveness) probes each
host every interval_s, one bounded probe at a time per host (at most
PROBES_AT_ONCE over all hosts, the first ones spread over one interval, so
100 hosts do not start 100 ssh handshakes together), and declares a
host lost once it answered no probe in the last deadline_s: detection comes
within deadline_s (+ a 1 s check) of the loss however the loss looks
(refused, silence, a hung sshd). A lost host's fio server cannot answer the
client's stop: the client is given LOSS_STOP_S to pass the stop to the
others, then killed (it would otherwise wait out its own ~38 s of unanswered
status requests, and its output is discarded anyway).
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

from iogate.engines.base import HostEngine, LoadControl, with_targets
from iogate.engines.fio import cs_live, jobfile, parse
from iogate.engines.fio.aborts import abort_message, interrupted_message
from iogate.engines.fio.versions import require_readable
from iogate.engines.workload import JobSpec, RunPlan
from iogate.errors import EngineError, HostError
from iogate.hosts import processes
from iogate.hosts.cpu_sampler import CpuSampler
from iogate.hosts.guard import Guard, distinct
from iogate.hosts.initiator import Initiator
from iogate.hosts.preflight import fio_server_address
from iogate.hosts.workdir import RemoteWorkdir
from iogate.lab import DEFAULT_LIVENESS, HostLiveness
from iogate.metrics.cpu_window import CpuSample, busy_over
from iogate.metrics.hostcpu import cpu_pct_per_kiops
from iogate.metrics.merge import merge_directions
from iogate.metrics.nodata import NoData
from iogate.metrics.types import Dir, Direction, JobResult, JobSpan, RunResult, Series
from iogate.run import Run
from iogate.run.resources import release

FIO_SERVER_PORT = 8765
# After a host is lost: how long the interrupted client gets to tell the live servers to stop.
LOSS_STOP_S = 5.0
# Liveness probes (ssh handshakes) in flight at once, whatever the host count. At 8, one probe of
# ~0.5 s each answers 16 hosts a second, so 100 hosts are each answered within ~6 s, far inside
# the 20 s deadline; 64 probes at once starved a 2-core controller past the 10 s probe timeout.
PROBES_AT_ONCE = 8
# How often the watchdog compares each host's last answer with the deadline.
_CHECK_S = 1.0
AGGREGATE_JOB = "All clients"
GRACE_S = 120  # layout, queue drain and log transfer after the runtime
_HOST_FAILURE = re.compile(
    r"client: host=(?P<disconnected>\S+) disconnected"
    r"|fio: failed to connect to (?P<connect>\S+?)(?::\d+)?$"
    r"|client:? (?:host=)?(?P<timeout>\S+) timed out"
)

T = TypeVar("T")


@dataclass(frozen=True)
class HostResult:
    """One host's share of a client/server run."""

    host: str  # the lab's name for it
    client: str  # what `fio --client=` was given
    jobs: tuple[JobResult, ...]
    series: Series
    start_ms: int
    end_ms: int
    cpu_busy_pct: float  # the host's CPU utilisation over the run (/proc/stat)
    artifacts: Mapping[str, str] = field(default_factory=dict)

    def total(self, direction: Dir | str) -> Direction:
        return merge_directions(Dir(direction), [job[direction] for job in self.jobs])

    @property
    def iops(self) -> float:
        return sum(self.total(d).iops for d in Dir)

    @property
    def cpu_pct_per_kiops(self) -> float | None:
        """Host CPU per IO as the methodology defines it: CPU % / IOPS (per 1000 IOPS)."""
        return cpu_pct_per_kiops(self.cpu_busy_pct, self.iops)


@dataclass(frozen=True)
class ClusterResult:
    """Every host's result, plus the cluster as one RunResult (jobs tagged with host names)."""

    hosts: Mapping[str, HostResult]
    result: RunResult

    def total(self, direction: Dir | str) -> Direction:
        """All hosts' jobs merged: IOPS add up, latency bins are summed."""
        return self.result.total(direction)

    def percentile_ns(self, direction: Dir | str, pct: float) -> float:
        """Cluster completion-latency percentile from the merged bins (never averaged percentiles)."""
        histogram = self.total(direction).clat.histogram
        if histogram is None:
            raise NoData(f"no latency histogram for {direction}: p{pct:g} of the cluster")
        return histogram.percentile_ns(pct)


# -- json+ -> per-host records (pure; what the 64-host benchmark times) ------------------------
def load_client_json(text: str, source: str) -> dict[str, Any]:
    """The client prints progress lines ("<host> Starting 1 process") before the JSON."""
    start = 0 if text.startswith("{") else text.find("\n{\n") + 1
    if start == 0 and not text.startswith("{"):
        raise EngineError(f"{source}: no JSON in fio client output: {text[:300]!r}")
    try:
        data = json.loads(text[start:])
    except json.JSONDecodeError as exc:
        raise EngineError(f"{source}: fio client output is not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or "client_stats" not in data:
        raise EngineError(f"{source}: not fio client/server output (no 'client_stats')")
    require_readable(data, source)
    return data


class _JsonStream:
    """A JSON text read from a file a chunk at a time, one value at a time (json's raw_decode on a
    window of the text): only the value being decoded and one chunk are in memory."""

    CHUNK = 1 << 20

    def __init__(self, handle: IO[str], first: str, source: str, copy: IO[str] | None) -> None:
        self.handle, self.source, self.copy = handle, source, copy
        self.text, self.pos, self.eof = "", 0, False
        self.decoder = json.JSONDecoder()
        self._take_text(first)

    def _take_text(self, data: str) -> None:
        self.text = self.text[self.pos:] + data
        self.pos = 0
        if self.copy is not None:
            self.copy.write(data)

    def _more(self, size: int) -> bool:
        data = self.handle.read(size)
        if not data:
            self.eof = True
            return False
        self._take_text(data)
        return True

    def peek(self) -> str:
        """The next non-blank character ('' at the end of the file)."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.text) or not self._more(self.CHUNK):
                return self.text[self.pos] if self.pos < len(self.text) else ""

    def take(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise EngineError(f"{self.source}: fio client output is not valid JSON: expected {char!r}, "
                              f"found {found or 'the end of the file'!r}")
        self.pos += 1

    def value(self) -> Any:
        """The next JSON value, whole (a number is taken only once a character follows it)."""
        self.peek()
        size = self.CHUNK
        while True:
            try:
                value, end = self.decoder.raw_decode(self.text, self.pos)
                if end < len(self.text) or self.eof:
                    self.pos = end
                    return value
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise EngineError(f"{self.source}: fio client output is not valid JSON: {exc}") from exc
            self._more(size)
            size *= 2  # a value longer than a chunk: fewer re-reads of its start


def stream_client_entries(path: Path, source: str | None = None, copy_to: Path | None = None) -> Iterator[dict[str, Any]]:
    """The client_stats entries of a fio client output file, one at a time, never the whole document.

    The text before the JSON (the client's "<host> Starting 1 process" lines) is skipped as
    load_client_json skips it; the version is checked as load_client_json checks it (fio writes
    "fio version" before "client_stats"; an entry's layout is checked where the version is not known).
    `copy_to` receives the JSON text as it is read (the point's client.json). The aggregate entry
    ("All clients") is yielded like the others."""
    source = source or str(path)
    with path.open() as handle, (copy_to.open("w") if copy_to else contextlib.nullcontext()) as copy:
        line = handle.readline()
        if not line.startswith("{"):
            while line and line != "{\n":
                line = handle.readline()
            if not line:
                raise EngineError(f"{source}: no JSON in fio client output ({path})")
        stream = _JsonStream(handle, line, source, copy)
        stream.take("{")
        header: dict[str, Any] = {}
        seen_stats = False
        while stream.peek() != "}":
            key = stream.value()
            if not isinstance(key, str):
                raise EngineError(f"{source}: fio client output is not valid JSON: a key that is not a string")
            stream.take(":")
            if key == "client_stats":
                seen_stats = True
                require_readable({**header, "client_stats": []}, source)
                stream.take("[")
                while stream.peek() != "]":
                    entry = stream.value()
                    if header.get("fio version") is None:
                        require_readable({"client_stats": [entry]}, source)
                    yield entry
                    if stream.peek() != "]":
                        stream.take(",")
                stream.take("]")
            else:
                header[key] = stream.value()
            if stream.peek() != "}":
                stream.take(",")
        stream.take("}")
        if stream.peek():
            raise EngineError(f"{source}: fio client output is not valid JSON: text after the document")
    if not seen_stats:
        raise EngineError(f"{source}: not fio client/server output (no 'client_stats')")


@dataclass(frozen=True)
class HostJobs:
    """One host's share of a client/server json+: its jobs (bins merged per job) and longest runtime."""

    host: str
    jobs: list[JobResult]
    runtime_ms: int


def stream_host_jobs(entries: Iterable[Mapping[str, Any]], host_by_client: Mapping[str, str],
                     source: str = "fio client output", numjobs: Mapping[tuple[str, str], int] | None = None) -> Iterator[HostJobs]:
    """Per lab host, its JobResults and runtime, each entry reduced to typed directions and bins as it
    is read (parse.parse_entry): the raw json+ of one entry at a time is all that is held. Hosts come
    in host_by_client's order once every entry is read; an entry of an unknown client, or a host
    without results, is an EngineError naming it (as split_by_host). With `numjobs` ((host, job) ->
    the plan's clones), a job with more entries than clones is an EngineError (status_reports_named)."""
    per_host = _group_by_host(entries, host_by_client, source, parse.parse_entry)
    for host in list(per_host):
        parsed = per_host.pop(host)
        if numjobs is not None:
            status_reports_named(host, [p.name for p in parsed], numjobs, source)
        yield HostJobs(host, parse.jobs_of_entries(parsed, host), max(p.runtime_ms for p in parsed))


def status_reports_named(host: str, names: Iterable[str], numjobs: Mapping[tuple[str, str], int], source: str) -> None:
    """Refuse a host whose jobs have more client_stats entries than the plan has clones.

    A fio server that sends status reports (one started with --status-interval, or given it per
    --client) has fio 3.33's client keep every report as one more client_stats entry, printed only at
    the end (selftests/unit/test_client_status_reports.py): read as numjobs clones, the reports would
    be summed into the job's I/Os. Nothing tells a report from a clone but the count.
    """
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    extra = {name: n for name, n in counts.items() if n > numjobs.get((host, name), n)}
    if extra:
        jobs = ", ".join(f"{name} ({n} entries, {numjobs[(host, name)]} planned)" for name, n in sorted(extra.items()))
        raise EngineError(f"{source}: host {host}: more client_stats entries than the plan's clones for {jobs}: its fio server "
                          "sends status reports (started with --status-interval?), which fio's client keeps as entries; "
                          "the run's results cannot be told from them. Restart that server without --status-interval")


def split_by_host(data: Mapping[str, Any], host_by_client: Mapping[str, str], source: str = "fio client output") -> dict[str, list[dict]]:
    """client_stats entries per lab host (the "All clients" aggregate dropped)."""
    return _group_by_host(data["client_stats"], host_by_client, source, lambda entry: entry)  # type: ignore[return-value]


def _group_by_host(entries: Iterable[Mapping[str, Any]], host_by_client: Mapping[str, str], source: str,
                   reduce: Callable[[Mapping[str, Any]], T]) -> dict[str, list[T]]:
    """Each client entry reduced as it is read and grouped by lab host, in host_by_client's order (the "All
    clients" aggregate dropped); an entry of an unknown client, or a host without results, is an EngineError."""
    by_server = {_server_of(client): host for client, host in host_by_client.items()}
    per_host: dict[str, list[T]] = {host: [] for host in host_by_client.values()}
    for entry in entries:
        if entry.get("jobname") == AGGREGATE_JOB:
            continue
        host = _host_of(entry, by_server)
        if host is None:
            client = f"{entry.get('hostname', '')},{entry.get('port', '?')}"
            raise EngineError(f"{source}: job {entry.get('jobname')!r} from unknown client {client!r} (known: {sorted(host_by_client)})")
        per_host[host].append(reduce(entry))
    missing = [host for host, grouped in per_host.items() if not grouped]
    if missing:
        raise EngineError(f"{source}: no results for host(s) {', '.join(sorted(missing))}")
    return per_host


def _server_of(client: str) -> tuple[str, int]:
    """A --client argument ("addr" or "addr,port") as the (hostname, port) fio writes in client_stats."""
    address, _, port = client.partition(",")
    return address, int(port) if port else FIO_SERVER_PORT


def _host_of(entry: Mapping[str, Any], by_server: Mapping[tuple[str, int], str]) -> str | None:
    # fio's client writes the server's address and port in each entry (client.c); an entry without a
    # port (older fio) is matched by address alone, and only when one server has that address.
    name = str(entry.get("hostname", ""))
    if entry.get("port") is not None:
        return by_server.get((name, int(entry["port"])))
    hosts = [host for (address, _), host in by_server.items() if address == name]
    return hosts[0] if len(hosts) == 1 else None


def host_jobs(data: Mapping[str, Any], host_by_client: Mapping[str, str], source: str = "fio client output") -> dict[str, list[JobResult]]:
    """JobResults per lab host from client/server json+."""
    return {host: parse.parse_jobs({"jobs": entries}, host) for host, entries in split_by_host(data, host_by_client, source).items()}


def host_runtimes_ms(data: Mapping[str, Any], host_by_client: Mapping[str, str]) -> dict[str, int]:
    """Each host's longest job runtime (ms), in one pass over the client_stats entries."""
    by_server = {_server_of(client): host for client, host in host_by_client.items()}
    runtimes: dict[str, int] = {}
    for entry in data["client_stats"]:
        if entry.get("jobname") == AGGREGATE_JOB:
            continue
        host = _host_of(entry, by_server)
        if host is not None:
            runtimes[host] = max(runtimes.get(host, 0), parse.entry_runtime_ms(entry))
    return runtimes


def cluster_directions(jobs_by_host: Mapping[str, Iterable[JobResult]]) -> dict[Dir, Direction]:
    """Cluster totals per direction: sums, pooled means, summed bins."""
    every = [job for jobs in jobs_by_host.values() for job in jobs]
    return {d: merge_directions(d, [job[d] for job in every]) for d in Dir}


# -- the engine ---------------------------------------------------------------------------------
class _Watch:
    """Host failures seen so far (from the client's output or the SSH watchdog), thread-safe."""

    def __init__(self, host_by_client: Mapping[str, str]) -> None:
        # fio's messages name "addr" or "addr:port" while --client may have been "addr,port".
        self.host_by_client = {**{c.split(",")[0]: h for c, h in host_by_client.items()}, **host_by_client}
        self.failures: dict[str, str] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def fail(self, host: str, reason: str) -> None:
        with self.lock:
            self.failures.setdefault(host, reason)

    def scan(self, line: str) -> None:
        match = _HOST_FAILURE.search(line.strip())
        if not match:
            return
        client = next(value for value in match.groupdict().values() if value)
        host = self.host_by_client.get(client)
        if host is not None:
            self.fail(host, f"fio server: {line.strip()}")


def _pump(stream: IO[str], sink: Path, watch: _Watch, scan_json: bool) -> None:
    """Copy a client stream to a file, scanning non-JSON lines for host failures."""
    with sink.open("w") as out:
        for line in stream:
            out.write(line)
            if scan_json or not line.startswith((" ", "{", "}", "\t")):
                watch.scan(line)


def _parallel(items: Iterable[T], action: Callable[[T], Any]) -> list[Any]:
    items = list(items)
    if not items:
        return []
    with ThreadPoolExecutor(max_workers=min(32, len(items))) as pool:
        return list(pool.map(action, items))


class ClientServerEngine(HostEngine):
    """Run a plan on many hosts through fio client/server (see module docstring).

    >>> engine = ClientServerEngine(run, initiators, guard)
    >>> cluster = engine.run_cluster(plan)
    >>> cluster.percentile_ns("read", 99), cluster.hosts["h1"].cpu_pct_per_kiops
    """

    name = "fio-client-server"

    def __init__(
        self,
        run: Run,
        initiators: Mapping[str, Initiator],
        guard: Guard,
        *,
        port: int = FIO_SERVER_PORT,
        liveness: HostLiveness = DEFAULT_LIVENESS,
        stop_timeout_s: float = 20.0,
        grace_s: float = GRACE_S,
        settings: jobfile.FioSettings = jobfile.DEFAULT_SETTINGS,
    ) -> None:
        super().__init__(initiators, guard)
        self.current_run = run
        self.settings = settings
        self.port = port
        self.liveness = liveness
        self.stop_timeout_s = stop_timeout_s
        self.grace_s = grace_s

    def run(self, plan: RunPlan, control: LoadControl | None = None) -> RunResult:
        """The Engine protocol: the cluster as one RunResult (run_cluster keeps the per-host view)."""
        return self.run_cluster(plan, control).result

    run_plan = run

    def check_plan(self, plan: RunPlan) -> None:
        """Unsupported for what fio cannot express (jobfile.py): each job's options rendered, nothing run."""
        for job in plan.jobs:
            jobfile.job_options(job, job.name, self.settings)

    def _client_arg(self, address: str) -> str:
        return address if self.port == FIO_SERVER_PORT else f"{address},{self.port}"

    def run_cluster(self, plan: RunPlan, control: LoadControl | None = None) -> ClusterResult:
        self.check_plan(plan)
        point = self._next_point(plan)
        by_host: dict[str, list[JobSpec]] = {}
        for job in plan.jobs:
            by_host.setdefault(job.target.host, []).append(job)
        initiators = {host: self._initiator(host) for host in by_host}
        host_by_client: dict[str, str] = {}
        for host, initiator in initiators.items():
            client = self._client_arg(fio_server_address(initiator.config))
            if client in host_by_client:
                raise HostError(f"hosts {host_by_client[client]} and {host} share fio server {client}: results could not be told apart")
            host_by_client[client] = host
        client_by_host = {host: client for client, host in host_by_client.items()}
        _parallel([(initiators[t.host], t) for t in distinct(j.target for j in plan.jobs)], lambda pair: self.guard.check(*pair))

        point_dir = self.current_run.path("points", point, "client.json").parent
        argv = ["fio", "--output-format=json+"]
        for host, jobs in by_host.items():
            logs = point_dir / host / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            job_path = point_dir / host / "job.fio"
            job_path.write_text(jobfile.render(jobs, str(logs), self.settings))
            argv += [f"--client={client_by_host[host]}", str(job_path)]

        ledger = self.current_run.ledger
        live = control is not None and control.wants_intervals
        # A live judge reads each host's block counters (cs_live): the sampler reads the jobs' devices too.
        feeds = dict(zip(initiators, _parallel(initiators.items(), lambda item: cs_live.plan_feed(item[1], by_host[item[0]])),
                         strict=True)) if live else {}
        before = dict(zip(initiators, _parallel(initiators.values(), Initiator.cpu_ticks), strict=True))
        samplers = dict(zip(initiators, _parallel(initiators.items(), lambda item: _Sampling.start(
            self.current_run, point, point_dir / item[0], item[1], plan.duration_s + self.grace_s,
            feeds[item[0]][0] if live else ())), strict=True))
        started_ms = int(time.time() * 1000)
        entry = ledger.intend("process", name="fio client", marker=str(point_dir), hosts=sorted(by_host))
        watch = _Watch(host_by_client)
        feeder = None
        if control is not None and live:
            hosts_fed = {host: cs_live.HostFeed(initiators[host], samplers[host].sampler.path, samplers[host].workdir is None,
                                                feeds[host][1]) for host in initiators if feeds[host][1]}
            feeder = threading.Thread(target=cs_live.feed_live, args=(hosts_fed, max(j.workload.runtime_s for j in plan.jobs),
                                                                       control, watch.stop), name="live feed", daemon=True)
            feeder.start()
        try:
            output = self._drive(argv, point_dir, host_by_client, initiators, plan.duration_s + self.grace_s,
                                 control and _ClusterSteer(initiators, max(j.workload.ramp_s for j in plan.jobs), control),
                                 watch=watch)
        finally:
            if feeder is not None:
                feeder.join(timeout=10)
            release(ledger, [entry])
            # A lost host is not asked again (a command over a dead link hangs until TCP gives up): its
            # sampler ends by itself after max_s and stays journalled for the teardown's clean-up.
            cpu_samples = dict(zip(initiators, _parallel(
                samplers.items(), lambda item: item[1].abandon() if item[0] in watch.failures else item[1].finish()), strict=True))
        ended_ms = int(time.time() * 1000)
        after = dict(zip(initiators, _parallel(initiators.values(), Initiator.cpu_ticks), strict=True))

        # Streamed: each entry of the client's json+ is reduced to typed results and bins as it is read
        # (the JSON text copied to client.json on the way), then each host's logs are read, parsed and
        # dropped one host at a time: no host's raw json+ or log text outlives its own turn.
        source = str(point_dir / "client.out")
        entries = stream_client_entries(output, source, copy_to=point_dir / "client.json")
        hosts: dict[str, HostResult] = {}
        clones = {(job.target.host, job.name): job.workload.numjobs for job in plan.jobs}
        for share in stream_host_jobs(entries, host_by_client, source, numjobs=clones):
            host, jobs, runtime_ms = share.host, share.jobs, share.runtime_ms
            samples, hist = parse.parse_logs(_host_logs(point_dir / host / "logs", client_by_host[host]), host)
            end_ms = max((s.t_ms for s in samples), default=ended_ms)
            busy = after[host][0] - before[host][0]
            total = after[host][1] - before[host][1]
            start_ms = max(end_ms - runtime_ms, started_ms)
            # Busy while the host measured; the whole point's figure (set-up and drain included) only
            # where the sampler has fewer than two samples inside that window.
            measured_busy = busy_over(cpu_samples[host], start_ms, end_ms)
            hosts[host] = HostResult(
                host=host,
                client=client_by_host[host],
                jobs=with_targets(plan, jobs),
                # Upper bounds of the start (fio's runtime counted back from when the client returned) and
                # the exact runtime: the grid finds the true start on the jobs' own phase (metrics.grid).
                series=Series(tuple(samples), tuple(hist), spans=tuple(
                    JobSpan(host, name, ended_ms - runtime_ms, ended_ms) for name in sorted({j.name for j in jobs}))),
                start_ms=start_ms,
                end_ms=end_ms,
                cpu_busy_pct=measured_busy if measured_busy is not None else 100.0 * busy / max(total, 1),
                artifacts={f"{host} job file": str(point_dir / host / "job.fio")},
            )
        return ClusterResult(hosts=hosts, result=self._combine(plan, point_dir, hosts))

    def _combine(self, plan: RunPlan, point_dir: Path, hosts: Mapping[str, HostResult]) -> RunResult:
        from iogate.engines.fio.runner import write_series_csv

        # Each host's jobs span its own measured phase (the grid expects an interval for every second of it).
        series = Series(
            samples=tuple(s for h in hosts.values() for s in h.series.samples),
            hist=tuple(s for h in hosts.values() for s in h.series.hist),
            spans=tuple(span for h in hosts.values() for span in h.series.spans),
        )
        start_ms = min(h.start_ms for h in hosts.values())
        csv_path = point_dir / "series.csv"
        with csv_path.open("w", newline="") as out:
            write_series_csv(series, start_ms, out)  # row by row: an hour of 100 hosts is 360,000 rows
        artifacts = {"fio client json+": str(point_dir / "client.json"), "fio client output": str(point_dir / "client.out"),
                     "per-second CSV": str(csv_path)}
        for host in hosts.values():
            artifacts.update(host.artifacts)
        return RunResult(
            name=plan.name,
            jobs=tuple(job for h in hosts.values() for job in h.jobs),
            series=series,
            start_ms=start_ms,
            end_ms=max(h.end_ms for h in hosts.values()),
            artifacts=artifacts,
            cpu_busy_pct={h.host: h.cpu_busy_pct for h in hosts.values()},
        )

    # -- running the client ----------------------------------------------------------------
    def _drive(self, argv: list[str], point_dir: Path, host_by_client: Mapping[str, str],
               initiators: Mapping[str, Initiator], limit_s: float, steer: _ClusterSteer | None = None,
               watch: _Watch | None = None) -> Path:
        """Run the client to its end (or, asked through `steer`, end it early keeping the results),
        or stop everything when a host fails; returns the file holding its stdout (client.out). `watch`
        collects the hosts lost on the way (the caller's, to leave them alone afterwards)."""
        watch = watch if watch is not None else _Watch(host_by_client)
        proc = subprocess.Popen(argv, cwd=point_dir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        assert proc.stdout is not None and proc.stderr is not None
        pumps = [
            threading.Thread(target=_pump, args=(proc.stdout, point_dir / "client.out", watch, False), daemon=True),
            threading.Thread(target=_pump, args=(proc.stderr, point_dir / "client.err", watch, True), daemon=True),
            threading.Thread(target=self._watchdog, args=(initiators, watch), daemon=True),
        ]
        if steer is not None:
            pumps.append(threading.Thread(target=steer.run, args=(watch.stop,), daemon=True))
        for thread in pumps:
            thread.start()
        deadline = time.monotonic() + limit_s
        timed_out = False
        try:
            while proc.poll() is None and not watch.failures:
                if time.monotonic() > deadline:
                    timed_out = True
                    break
                time.sleep(0.1)
        finally:
            watch.stop.set()
            if proc.poll() is None:
                self._interrupt(proc, LOSS_STOP_S if watch.failures else self.stop_timeout_s)
            for thread in pumps[:3]:  # the streams, and the watchdog with its probes
                thread.join(timeout=10)
        if watch.failures or timed_out:
            healthy = [h for h in initiators if h not in watch.failures]
            _parallel([initiators[h] for h in healthy], lambda i: stop_server_jobs(i, fio_server_address(i.config)))
            if timed_out and not watch.failures:
                raise EngineError(f"fio client: no result after {limit_s:.0f} s; stopped the run on {', '.join(healthy)}")
            failed = "; ".join(f"host {host}: {reason}" for host, reason in sorted(watch.failures.items()))
            raise HostError(f"{failed} (run stopped on the remaining hosts: {', '.join(healthy) or 'none'})")
        output = point_dir / "client.out"
        head, text, has_stats = _client_text(output)
        err = (point_dir / "client.err").read_text()
        aborted = abort_message(f"{err}\n{head}")
        if aborted:
            raise EngineError(f"fio client: a server aborted: {aborted} (see {output})")
        interrupted = interrupted_message(f"{err}\n{text}")
        if interrupted and not (steer is not None and steer.stopped):
            raise EngineError(f"fio client: {interrupted} (see {output})")
        if proc.returncode != 0 and not has_stats:
            raise EngineError(f"fio client exited {proc.returncode}: {err.strip()[-1500:] or text[-1500:]}")
        return output

    def _interrupt(self, proc: subprocess.Popen[str], wait_s: float) -> None:
        """SIGINT makes the client tell every server to stop its jobs; kill if it does not end in wait_s."""
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def _watchdog(self, initiators: Mapping[str, Initiator], watch: _Watch) -> None:
        """Declare lost each host that answered no probe in the last deadline_s."""
        live = self.liveness
        last = {host: _Answers(time.monotonic()) for host in initiators}

        gate = threading.BoundedSemaphore(PROBES_AT_ONCE)
        hosts = list(initiators)

        def prober(host: str) -> None:
            answers = last[host]
            # First probes spread over one interval: 64 ssh handshakes started together did not finish
            # within a 10 s probe timeout on the 2-core reference machine, and every host was lost.
            watch.stop.wait(live.interval_s * hosts.index(host) / len(hosts))
            while not watch.stop.is_set():
                while not gate.acquire(timeout=0.2):  # waiting for a slot is not a probe: its timeout has not begun
                    if watch.stop.is_set():
                        return
                try:
                    answers.probing()
                    answers.record(initiators[host].probe(live.probe_timeout_s, cancel=watch.stop))
                finally:
                    gate.release()
                watch.stop.wait(live.interval_s)

        probers = [threading.Thread(target=prober, args=(host,), name=f"liveness {host}", daemon=True) for host in hosts]
        for thread in probers:
            thread.start()
        while not watch.stop.wait(_CHECK_S):
            now = time.monotonic()
            for host, answers in last.items():
                silent_s = now - answers.since
                if silent_s >= live.deadline_s and not watch.stop.is_set():
                    watch.fail(host, f"stopped answering: no probe answered over its transport for {silent_s:.0f} s "
                                     f"(host_liveness deadline {live.deadline_s:g} s; last probe: {answers.said})")
        for thread in probers:  # an ssh probe ends at once on the stop: none outlives the run
            thread.join(timeout=live.probe_timeout_s)


class _Answers:
    """One host's liveness: when it last answered a probe (the moment the answer came), and what
    the last probe said. Counting from the answer, a healthy host whose every probe takes up to
    probe_timeout_s answers again within interval_s + probe_timeout_s <= deadline_s."""

    def __init__(self, since: float) -> None:
        self.since = since
        self.said = "still waiting for an answer"
        self._lock = threading.Lock()

    def probing(self) -> None:
        """A probe starts: until it ends, the last probe is the one that still waits."""
        with self._lock:
            self.said = "still waiting for an answer"

    def record(self, said: str | None) -> None:
        with self._lock:
            if said is None:
                self.since = time.monotonic()
                self.said = "answered"
            else:
                self.said = said


@dataclass
class _Sampling:
    """One host's CPU sampler over a point (iogate/hosts/cpu_sampler.py): its file in the point's own
    directory where the host shares this machine's files (local, netns), else in a journalled working
    directory on the host."""

    run: Run
    sampler: CpuSampler
    workdir: RemoteWorkdir | None

    @classmethod
    def start(cls, run: Run, point: str, local_dir: Path, initiator: Initiator, max_s: float,
              devices: Sequence[str] = ()) -> _Sampling:
        workdir = None
        if processes.shares_processes(initiator):
            local_dir.mkdir(parents=True, exist_ok=True)
            folder = str(local_dir)
        else:
            workdir = RemoteWorkdir(run, initiator, point)
            folder = workdir.path
        return cls(run, CpuSampler.start(run.ledger, initiator, f"{folder}/cpu.samples", max_s, devices), workdir)

    def finish(self) -> list[CpuSample]:
        samples = self.sampler.finish(self.run.ledger)
        if self.workdir is not None:
            self.workdir.remove(failing=not samples)
        return samples

    def abandon(self) -> list[CpuSample]:
        """The host was lost: nothing is asked of it (its sampler and directory stay journalled)."""
        self.sampler.abandon(self.run.ledger)
        return []


class _ClusterSteer:
    """The LoadControl's engine side for a cluster run.

    fio's client prints no status report of its servers while they run (it keeps
    them to the end: status_reports_named), so the measured phase is taken to begin
    one ramp after every host runs its job processes (their set-up on a LAN host is
    short; the RunResult's start, from each host's job_runtime, stays exact). Asked to stop, each host's job processes get
    SIGINT: they end as at their runtime and the servers still send results and
    logs (SIGINT to the client instead would drop them).
    """

    def __init__(self, initiators: Mapping[str, Initiator], ramp_s: float, control: LoadControl) -> None:
        self.servers = [(initiator, fio_server_address(initiator.config)) for initiator in initiators.values()]
        self.ramp_ms = int(ramp_s * 1000)
        self.control = control
        self.stopped = False  # this steer interrupted the jobs (a stop asked for, not an interruption)

    def run(self, done: threading.Event) -> None:
        try:
            while not done.is_set() and not all(server_job_pids(i, a) for i, a in self.servers):
                done.wait(0.2)
            self.control.measuring(int(time.time() * 1000) + self.ramp_ms)
            while not done.is_set():
                if self.control.wait_stop(0.2):
                    self.stopped = True
                    _parallel(self.servers, lambda pair: interrupt_server_jobs(*pair))
                    return
        finally:
            self.control.measuring()


def _client_text(path: Path) -> tuple[str, str, bool]:
    """From the client's stdout file, read a line at a time: (the text before its JSON, every line
    outside the JSON, whether the JSON has client_stats). The JSON itself is never held whole."""
    head: list[str] = []
    text: list[str] = []
    in_json = has_stats = False
    with path.open() as handle:
        for line in handle:
            if not in_json and line.startswith("{"):
                in_json = True
            if in_json and line.startswith(("{", "}", " ", "\t")):
                has_stats = has_stats or '"client_stats"' in line
                continue
            (text if in_json else head).append(line)
    return "".join(head), "".join(head + text), has_stats


def _host_logs(log_dir: Path, client: str) -> dict[str, str]:
    """Rename <name>.log.<client> (as the client writes them) to <name>.log; return {name: text}."""
    suffix = f".{client}"
    for path in log_dir.glob(f"*.log{suffix}"):
        path.rename(path.with_name(path.name[: -len(suffix)]))
    return {path.name: path.read_text() for path in sorted(log_dir.glob("*.log"))}


def server_job_pids(initiator: Initiator, address: str) -> list[int]:
    """The processes running a host's fio jobs now."""
    return job_pids_in(initiator.run_unchecked("ps -eo pid=,ppid=,args=").stdout, address)


def job_pids_in(listing: str, address: str) -> list[int]:
    """From `ps -eo pid=,ppid=,args=`: the fio server's job processes, three generations below its listener.

    A fio server forks a connection handler per client (1 generation below the listener); a job file
    received makes the handler fork the run's backend (2), which sets the jobs up and forks one process
    per job (3; IOGate's job files never ask for thread=1). Counting every descendant as a job, the
    measured phase began at the client's connect, before any job, and a stop 3 s later could find jobs
    with under a second measured, or reach only the handler and backend (signalled in their set-up, the
    client then waited for results until its limit). SIGINT to a job process ends every job of the run as
    at its runtime, results kept. On a machine where several servers run (the netns lab shares one
    process table), only the processes whose command line carries this host's address count.
    """
    rows = []
    for line in listing.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[2].startswith("fio ") and "--server" in parts[2]:
            rows.append((int(parts[0]), int(parts[1]), parts[2]))
    own = [r for r in rows if address in r[2]] or rows
    parent = {pid: ppid for pid, ppid, _ in own}

    def depth(pid: int) -> int:
        steps = 0
        while parent.get(pid) in parent and steps <= len(parent):
            pid, steps = parent[pid], steps + 1
        return steps

    return [pid for pid, _, _ in own if depth(pid) >= 3]


def interrupt_server_jobs(initiator: Initiator, address: str) -> list[int]:
    """End a host's running jobs gracefully (SIGINT): the server still sends their results and logs."""
    jobs = server_job_pids(initiator, address)
    if jobs:
        initiator.run_unchecked(f"kill -INT {' '.join(map(str, jobs))}")
    return jobs


def stop_server_jobs(initiator: Initiator, address: str, timeout_s: float = 10.0) -> list[int]:
    """Wait for a host's fio server jobs to end; kill them (-9) after timeout_s, leaving the listening server."""
    deadline = time.monotonic() + timeout_s
    while True:
        jobs = server_job_pids(initiator, address)
        if not jobs:
            return []
        if time.monotonic() > deadline:
            initiator.run_unchecked(f"kill -9 {' '.join(map(str, jobs))}")
            return jobs
        time.sleep(0.5)
