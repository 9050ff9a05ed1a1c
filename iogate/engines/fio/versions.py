"""Which fio wrote a json/json+ report, and what that version writes.

What each fio version puts in its json (fio's stat.c, show_thread_status_json /
add_ddir_status_json / add_ddir_lat_json, and HOWTO "json+"), checked against
the real outputs in shared/data/real-outputs/fio (SOURCES.md names them):

- fio 3.0 (commit d6bb626ef37d "nanosecond: update completion latency recording
  and normal, json output to use nanoseconds", made after 2.20; fio-plot's
  benchmark script demands "Fio version 3+ ... nanosecond precision"):
  latency sections are `slat_ns`/`clat_ns`/`lat_ns` in ns, json+ `bins` are
  keyed by the bin's value in ns over FIO_IO_U_PLAT_NR = 1856 bins, `io_bytes`
  is in bytes (with `io_kbytes` beside it). fio 2.x wrote `slat`/`clat`/`lat`
  in usec, `io_bytes` in KiB (2.18: 4392 I/Os of 4 KiB = io_bytes 17568) and
  usec bins of another layout; 2.1.4 writes no `total_ios` at all. IOGate does
  not read 2.x: it is refused naming the version.
- `bw_bytes` (bytes/s): absent from fio 3.1's json (both 3.1 files), present
  from 3.6 (a 3.6 report at pastebin.com/XUnhRK24) and in 3.7 on. fio computes
  it as io_bytes x 1000 / runtime_ms in integers (3.7: 488804352 x 1000 //
  15005 = 32576098, as written), so a direction without it gets that, not a
  refusal.
- `N` (sample count) in each latency section: absent from every report of
  3.16 and older seen (3.1, 3.7, 3.13, 3.16), written by 3.19 on (stat.c
  add_ddir_lat_json: `json_object_add_value_int(lat_object, "N",
  lat_stat->samples)`; issue 28 dates it to 3.18). Without it a direction's
  clat samples are the sum of its json+ bins where there are bins (fio adds
  every clat sample to both), else the direction's `total_ios`; a section with
  min = max = mean = 0 and no `N` recorded nothing (latency disabled, or no
  I/O: calc_lat leaves the figures 0 when there are no samples).
- `percentile` (fio's printed clat percentiles, keys "%f" of the percentile,
  values in ns): every 3.x; older ones print it for a direction without
  samples too (all 0), stat.c now only `if (percentiles && lat_stat->samples)`.
- `job_runtime` (per job, ms): absent from 3.1 and 3.7, present in 3.13 and
  3.16 on. With group_reporting it is the SUM of the clones' runtimes (3.36,
  numjobs=2: 240001 for a 120 s run), and after a signal it overstates the run
  (3.33: 288990 for a 48170 ms run); a direction's `runtime` (ms) is the
  longest clone's in both cases and is what IOGate reads.
- client/server (`client_stats`): `hostname` and `port` per entry in every 3.x
  seen (3.7, 3.19), plus an "All clients" aggregate (no bins); no top-level
  `timestamp_ms` (3.7, 3.19).

The reader goes by what each section holds (`N`, `bw_bytes` present or not),
not by the version number, so a build between the versions seen reads right
whichever side of a change it falls. It reads every layout from 3.0
(MIN_READ). Running fio on a lab host needs more: the engine finds the
measured phase's start live from the `job_runtime` of fio's status reports
(runner._Steer), which 3.7 does not write; the session's preflight refuses a
host whose fio is older than MIN_RUN, 3.16 (the oldest with a real report
here that carries everything the engine reads, and Ubuntu 20.04's fio).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iogate.errors import EngineError

_VERSION = re.compile(r"fio-(?P<major>\d+)\.(?P<minor>\d+)")


@dataclass(frozen=True, order=True)
class FioVersion:
    major: int
    minor: int

    def __str__(self) -> str:
        return f"fio-{self.major}.{self.minor}"


MIN_READ = FioVersion(3, 0)  # the oldest json/json+ layout the reader reads
MIN_RUN = FioVersion(3, 16)  # the oldest fio the engine runs (preflight enforces it on every host)
FIRST_WITH_N = FioVersion(3, 18)


def parse_version(text: str | None) -> FioVersion | None:
    """`fio-3.16`, `fio-2.18-59-g618e`, `fio-3.28-4-gdeadbeef` ... as (major, minor); None if unreadable."""
    match = _VERSION.search(text or "")
    return FioVersion(int(match["major"]), int(match["minor"])) if match else None


def version_text(data: Mapping[str, Any]) -> str:
    """The version as fio wrote it ("fio-3.19"), or "an unnamed fio" when the report has none."""
    return str(data.get("fio version") or "an unnamed fio")


def refusal(data: Mapping[str, Any], source: str) -> str | None:
    """Why a report cannot be read (one line naming the version), or None when it can."""
    written = version_text(data)
    version = parse_version(data.get("fio version"))
    if version is not None and version < MIN_READ:
        return (f"{source}: {written} output is not read: fio 2.x writes latency in usec and sizes in KiB "
                f"(IOGate reads fio {MIN_READ.major}.{MIN_READ.minor} and later)")
    if version is None:
        # No version to go by: the layout tells (2.x `clat` in usec, 3.x `clat_ns`).
        for entry in data.get("jobs") or data.get("client_stats") or []:
            for direction in ("read", "write", "trim"):
                section = entry.get(direction) if isinstance(entry, Mapping) else None
                if isinstance(section, Mapping) and "clat" in section and "clat_ns" not in section:
                    return (f"{source}: {written} output has fio 2.x latency sections (`clat` in usec) and is not read "
                            f"(IOGate reads fio {MIN_READ.major}.{MIN_READ.minor} and later)")
    return None


def require_readable(data: Mapping[str, Any], source: str) -> None:
    reason = refusal(data, source)
    if reason:
        raise EngineError(reason)


def run_problem(host: str, version_output: str) -> str | None:
    """Why a host's `fio --version` cannot run IOGate's engine (naming host and version), or None."""
    version = parse_version(version_output)
    if version is None:
        return f"host {host}: cannot tell the fio version from {version_output.strip()[:80]!r}"
    if version < MIN_RUN:
        return (f"host {host}: {version_output.strip()} is older than the oldest fio IOGate runs, "
                f"fio-{MIN_RUN.major}.{MIN_RUN.minor}: upgrade fio on this host")
    return None
