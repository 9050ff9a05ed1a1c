"""Read any fio output file (json, json+, client/server) into the shared records.

The one entry point for code that holds a fio output and no run: `iogate parse`,
reviewers' evidence, the self-tests over real outputs. It takes the file as fio
(or its client) wrote it, text before the JSON included (warnings, client
progress lines, "fio: terminating on signal 2"), and gives one JobResult per job
and host: numjobs clones of a job merge (IOPS and bandwidth add up, latency
pools by samples, json+ bins add up). Every fio 3.x layout is read
(versions.py); fio 2.x, an interrupted fio and a report that is not fio's raise
EngineError with one line naming the file and the version or reason.

fio's own printed clat percentiles come with the records
(`FioOutput.percentiles_ns`) for each job reported by one entry (one process, or
group_reporting): plain json has no bins to compute them from. For a job
merged from clones fio printed none that hold for the whole job, and none are
given; with json+ bins the merged histogram gives them exactly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iogate.engines.fio.aborts import interrupted_message
from iogate.engines.fio.parse import load_json, parse_jobs
from iogate.engines.fio.versions import version_text
from iogate.errors import EngineError
from iogate.metrics.types import Dir, JobResult

# fio's default percentile_list (HOWTO, percentile_list): what it prints when a job sets none.
FIO_DEFAULT_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99)
AGGREGATE_JOB = "All clients"  # client/server's sum over hosts (no bins): never read
PercentileKey = tuple[str, str, Dir]  # (host, job, direction)


@dataclass(frozen=True)
class FioOutput:
    """One fio output file as records.

    `jobs`: one JobResult per (host, job). `host` is the client's `hostname` for
    client/server output (`hostname,port` where two servers share a hostname), else the
    `host` the caller gave (default ""). `percentiles_ns`: fio's printed clat percentiles
    (percentile -> ns) per (host, job, direction) with samples, for jobs of one json entry.
    """

    source: str
    version: str  # as fio wrote it: "fio-3.19"
    client_server: bool
    jobs: tuple[JobResult, ...]
    percentiles_ns: Mapping[PercentileKey, Mapping[float, float]] = field(default_factory=dict)

    @property
    def hosts(self) -> list[str]:
        return sorted({job.host for job in self.jobs})

    def clat_percentiles_ns(self, job: JobResult, direction: Dir | str) -> dict[float, float]:
        """A job's completion-latency percentiles (percentile -> ns), {} when there are none to give.

        From the json+ bins where the job has them (fio's own rank rule: the figures fio prints), at
        the percentiles fio printed for it, else at fio's default list; without bins, fio's printed
        ones (jobs of one json entry only, see the module docstring)."""
        direction = Dir(direction)
        printed = self.percentiles_ns.get((job.host, job.name, direction), {})
        histogram = job[direction].clat.histogram
        if histogram is None or not histogram.total:
            return dict(printed)
        return {pct: histogram.percentile_ns(pct) for pct in (printed or FIO_DEFAULT_PERCENTILES)}


def read_fio_output(path: str | Path, host: str = "") -> FioOutput:
    """Parse a fio output file (json, json+, client/server json/json+) into records; EngineError
    (one line naming the file and the version or reason) for what cannot be read right."""
    source = str(path)
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as exc:
        raise EngineError(f"{source}: cannot read fio output: {exc.strerror or exc}") from exc
    return parse_fio_output(text, source, host)


def parse_fio_output(text: str, source: str, host: str = "") -> FioOutput:
    """read_fio_output on text already read (`source` names it in errors)."""
    data = load_json(text, source)
    # fio writes the line into its output, before the JSON (or between --status-interval reports); a
    # line of the JSON itself never starts with "fio:", so the whole text is searched.
    interrupted = interrupted_message(text)
    if interrupted:
        raise EngineError(f"{source}: {version_text(data)}: {interrupted}")
    if "client_stats" in data:
        by_host = _client_entries(data["client_stats"], source)
        client_server = True
    else:
        by_host = {host: list(data["jobs"])}
        client_server = False
    jobs: list[JobResult] = []
    percentiles: dict[PercentileKey, dict[float, float]] = {}
    for name, entries in by_host.items():
        try:
            jobs.extend(parse_jobs({"jobs": entries}, name))
        except EngineError as exc:
            raise EngineError(f"{source}: {version_text(data)}: {exc}") from exc
        percentiles.update(_printed_percentiles(entries, name, jobs))
    if not jobs:
        raise EngineError(f"{source}: {version_text(data)} output holds no jobs")
    return FioOutput(source, version_text(data), client_server, tuple(jobs), percentiles)


def _client_entries(entries: list[Mapping[str, Any]], source: str) -> dict[str, list[Mapping[str, Any]]]:
    """client_stats entries per server (the "All clients" aggregate dropped)."""
    servers: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for entry in entries:
        if entry.get("jobname") == AGGREGATE_JOB:
            continue
        if "hostname" not in entry:
            raise EngineError(f"{source}: client_stats entry {entry.get('jobname')!r} names no hostname")
        servers[(str(entry["hostname"]), str(entry.get("port", "")))].append(entry)
    names = [hostname for hostname, _ in servers]
    return {(hostname if names.count(hostname) == 1 else f"{hostname},{port}"): group
            for (hostname, port), group in servers.items()}


def _printed_percentiles(entries: list[Mapping[str, Any]], host: str, jobs: list[JobResult]
                         ) -> dict[PercentileKey, dict[float, float]]:
    """fio's printed clat percentiles of each job reported by one entry, per direction with samples."""
    counts: dict[str, int] = defaultdict(int)
    for entry in entries:
        counts[entry["jobname"]] += 1
    sampled = {(job.host, job.name, d) for job in jobs for d in Dir if job[d].clat.samples}
    printed: dict[PercentileKey, dict[float, float]] = {}
    for entry in entries:
        if counts[entry["jobname"]] != 1:
            continue
        for direction in Dir:
            section = entry.get(direction.value) or {}
            table = (section.get("clat_ns") or {}).get("percentile")
            key = (host, str(entry["jobname"]), direction)
            if table and key in sampled:
                printed[key] = {float(pct): float(value) for pct, value in table.items()}
    return printed
