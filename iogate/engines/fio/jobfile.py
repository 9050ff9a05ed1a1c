"""Render a RunPlan's jobs (those of one host) as a fio job file, from the workload's typed fields.

Refused with Unsupported naming the workload and the field: RateProcess.UNIFORM (fio 3.33 has
rate_process=linear|poisson only), and rate_iops with a block size mix: fio turns rate_iops into a
byte rate at the mix's smallest size, so 200 IOPS of 4k/50:64k/50 ran at 200 x 4 KiB a second =
27 IOPS (measured: selftests/integration/test_fio_typed_workload.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iogate.engines.workload import Extent, JobSpec, RateProcess, SizeMix, Unsupported, WorkloadSpec, rate_split
from iogate.units import format_size


@dataclass(frozen=True)
class FioSettings:
    """fio's own settings: how fio issues and logs the I/O, never what the I/O looks like (WorkloadSpec).

    ioengine: a connection that needs another (nbd) names it in its fio_options, which win.
    log_avg_msec: 1000 = one averaged log line per second (every run); 0 = one line per I/O
    (self-tests that check percentiles against raw latencies).
    """

    ioengine: str = "libaio"
    log_avg_msec: int = 1000


DEFAULT_SETTINGS = FioSettings()

# Every run logs per-second IOPS, latency and latency histograms on the epoch
# clock so series line up with events, hosts and each other.
GLOBAL_OPTIONS = {
    "direct": "1",
    "log_avg_msec": "1000",
    "log_hist_msec": "1000",
    "log_unix_epoch": "1",
    "per_job_logs": "1",
    "group_reporting": "0",
    # Verdicts judge completion latency (clat); submission and total latency would cost
    # two more clock reads per I/O and three more log files for nothing.
    "disable_slat": "1",
    "disable_lat": "1",
}


def _rw(workload: WorkloadSpec) -> dict[str, str]:
    if workload.read_pct == 100:
        mode = "read"
    elif workload.read_pct == 0:
        mode = "write"
    else:
        mode = "rw"
    options = {"rw": ("rand" + mode) if workload.random_pct > 0 else mode}
    if mode == "rw":
        options["rwmixread"] = str(workload.read_pct)
    if 0 < workload.random_pct < 100:
        options["percentage_random"] = str(workload.random_pct)
    return options


# RateProcess -> fio rate_process (fio 3.33 knows linear and poisson).
RATE_PROCESSES = {RateProcess.LINEAR: "linear", RateProcess.POISSON: "poisson"}


def _rate(workload: WorkloadSpec) -> dict[str, str]:
    if not workload.rate_iops:
        return {}
    process = RATE_PROCESSES.get(workload.rate_process)
    if process is None:
        raise Unsupported(f"fio: workload {workload.name}: rate_process={workload.rate_process}: fio spaces a rate's "
                          f"I/Os only {' or '.join(RATE_PROCESSES.values())}")
    if isinstance(workload.bs, SizeMix):
        smallest = min(size for size, _ in workload.bs.parts)
        mean = sum(size * pct for size, pct in workload.bs.parts) / 100
        raise Unsupported(f"fio: workload {workload.name}: rate_iops={workload.rate_iops} with block size mix {workload.bs}: fio "
                          f"caps a mix at rate_iops x its smallest size ({format_size(smallest)}) in bytes a second, "
                          f"{mean / smallest:.1f}x fewer I/Os than asked")
    split = rate_split(workload.rate_iops, workload.read_pct, verify_reads=workload.verify is not None)
    return {"rate_iops": split, "rate_process": process}


def block_size_options(workload: WorkloadSpec) -> dict[str, str]:
    """bs=4k, or bssplit=4k/50:64k/50 for a mix (one mix for reads and writes)."""
    if isinstance(workload.bs, SizeMix):
        return {"bssplit": ":".join(f"{format_size(size)}/{pct}" for size, pct in workload.bs.parts)}
    return {"bs": format_size(workload.bs)}


def _extent(extent: Extent) -> str:
    """fio's spelling: "20%" or an exact binary size ("16m", "1536")."""
    return f"{extent.value}%" if extent.is_percent else format_size(extent.value)


def _data_pattern(workload: WorkloadSpec) -> dict[str, str]:
    options: dict[str, str] = {}
    if workload.dedupe_pct:
        options["dedupe_percentage"] = str(workload.dedupe_pct)
    if workload.compress_pct:
        options["buffer_compress_percentage"] = str(workload.compress_pct)
        options["buffer_compress_chunk"] = "4k"
        options["refill_buffers"] = "1"
    if workload.verify is not None:
        options["verify"] = str(workload.verify.algorithm)
        if workload.verify.backlog is not None:
            options["verify_backlog"] = str(workload.verify.backlog)
        options.update({"verify_fatal": "0", "verify_dump": "0", "verify_state_save": "0"})
    return options


def job_options(job: JobSpec, log_prefix: str, settings: FioSettings = DEFAULT_SETTINGS) -> dict[str, str]:
    workload = job.workload
    options: dict[str, str] = {}
    if job.target.fio_options.get("ioengine") is None:
        options["ioengine"] = settings.ioengine
    options["filename"] = job.target.filename
    options.update(job.target.fio_options)
    options.update(_rw(workload))
    options.update(block_size_options(workload))
    options["iodepth"] = str(workload.iodepth)
    if workload.numjobs > 1:
        options["numjobs"] = str(workload.numjobs)
    if workload.size is not None:
        options["size"] = _extent(workload.size)
    if workload.offset is not None:
        options["offset"] = _extent(workload.offset)
    if workload.time_based:
        options["time_based"] = "1"
        options["runtime"] = f"{workload.runtime_s:g}"
    if workload.ramp_s:
        options["ramp_time"] = f"{workload.ramp_s:g}"
    options.update(_rate(workload))
    options.update(_data_pattern(workload))
    options.update({"write_iops_log": log_prefix, "write_lat_log": log_prefix, "write_hist_log": log_prefix})
    return options


def render(jobs: Sequence[JobSpec], log_dir: str, settings: FioSettings = DEFAULT_SETTINGS) -> str:
    """The job file text; logs go to <log_dir>/<job name>_{iops,clat,clat_hist}.N.log."""
    global_options = {**GLOBAL_OPTIONS, "log_avg_msec": str(settings.log_avg_msec)}
    lines = ["; generated by IOGate", "[global]", *(f"{k}={v}" for k, v in global_options.items()), ""]
    for job in jobs:
        lines.append(f"[{job.name}]")
        lines.extend(f"{k}={v}" for k, v in job_options(job, f"{log_dir}/{job.name}", settings).items())
        lines.append("")
    return "\n".join(lines)
