"""Parmfile rendering: a WorkloadSpec becomes the vdbench parameters a storage engineer expects,
and what vdbench cannot express is refused saying what it is."""

from __future__ import annotations

import re

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.exports import BlockExport
from iogate.engines.vdbench import health
from iogate.engines.vdbench.parmfile import Unsupported, render, xfersize
from iogate.engines.workload import JobSpec, WorkloadSpec
from iogate.errors import EngineError
from iogate.hosts.connectors.base import Connection
from iogate.lab import DeviceIdentity

VOLUME = Volume("v1", 1 << 30, DeviceIdentity(backing_file="/p/v1.img"), (BlockExport(device="/dev/loop9"),))
TARGET = Connection(protocol="block", host="h1", volume=VOLUME, filename="/dev/loop9", device="/dev/loop9")
OTHER = Connection(protocol="block", host="h1", volume=VOLUME, filename="/dev/loop8", device="/dev/loop8")


def lines(*jobs: JobSpec) -> dict[str, str]:
    """Parmfile lines keyed by their first 'name=value'."""
    text = render(jobs, monitor_file="/w/monitor")
    return {line.split(",")[0]: line for line in text.splitlines() if not line.startswith("*")}


def job(name: str = "j", target: Connection = TARGET, **kw: object) -> JobSpec:
    return JobSpec(name, WorkloadSpec(name, **kw), target)  # type: ignore[arg-type]


def test_one_job() -> None:
    parm = lines(job(read_pct=70, random_pct=100, bs="8k", iodepth=4, numjobs=2, runtime_s=30))
    assert parm["sd=sd1"] == "sd=sd1,lun=/dev/loop9,openflags=o_direct,threads=8"
    assert parm["wd=j"] == "wd=j,sd=sd1,xfersize=8k,rdpct=70,seekpct=100"
    assert parm["rd=rd_iogate"] == "rd=rd_iogate,wd=(j),iorate=max,warmup=0,elapsed=30,interval=1"
    assert parm["monitor=/w/monitor"]


def test_ramp_is_warmup_plus_the_interval_vdbench_averages() -> None:
    rd = lines(job(runtime_s=10, ramp_s=2))["rd=rd_iogate"]
    assert "warmup=3" in rd and "elapsed=9" in rd  # 12 intervals; the average covers 3-12 = 10 s after 2 s ramp


def test_sequential_and_partly_random() -> None:
    assert "seekpct=0" in lines(job(random_pct=0))["wd=j"]
    assert "seekpct=30" in lines(job(random_pct=30))["wd=j"]


def test_bssplit_becomes_an_xfersize_distribution() -> None:
    assert xfersize(WorkloadSpec("w", bssplit="4k/50:64k/30:1m/20")) == "(4k,50,64k,30,1m,20)"
    with pytest.raises(Unsupported, match="per-direction"):
        xfersize(WorkloadSpec("w", bssplit="4k/100,64k/100"))
    with pytest.raises(Unsupported, match="add up to 90"):
        xfersize(WorkloadSpec("w", bssplit="4k/50:64k/40"))


def test_rates_become_iorate_and_skew() -> None:
    parm = lines(job("vm1", rate_iops=300), job("vm2", OTHER, rate_iops=100))
    assert "iorate=400" in parm["rd=rd_iogate"]
    assert parm["wd=vm1"].endswith("skew=75") and parm["wd=vm2"].endswith("skew=25")
    assert set(parm) >= {"sd=sd1", "sd=sd2"}
    assert "distribution" not in parm["rd=rd_iogate"]  # poisson arrivals: vdbench's default (exponential)
    even = lines(job("vm1", rate_iops=300, extra={"rate_process": "linear"}))
    assert "iorate=300,distribution=deterministic" in even["rd=rd_iogate"]
    with pytest.raises(Unsupported, match="some jobs but not others"):
        lines(job("vm1", rate_iops=300), job("vm2"))


def test_two_jobs_on_one_target_share_its_sd_and_threads() -> None:
    parm = lines(job("a", iodepth=4), job("b", iodepth=2))
    assert parm["sd=sd1"].endswith("threads=6") and "sd=sd2" not in parm


def test_data_pattern_from_percentages_and_from_extra() -> None:
    parm = lines(job(compress_pct=50, dedupe_pct=50))
    assert "compratio=2" in parm and "dedupratio=2" in parm and "dedupunit=4k" in parm
    parm = lines(job(extra={"compratio": "3", "dedupratio": "2", "dedupunit": "8k", "dedupsets": "5%"}))
    assert {"compratio=3", "dedupratio=2", "dedupunit=8k", "dedupsets=5%"} <= set(parm)
    with pytest.raises(Unsupported, match="global in vdbench"):
        lines(job("a", compress_pct=50), job("b", compress_pct=0))


def test_region() -> None:
    assert lines(job(size="20%"))["sd=sd1"].endswith("range=(0,20)")
    assert lines(job(size="256m", offset="1m"))["sd=sd1"].endswith(f"size={256 << 20},offset={1 << 20}")


def test_what_vdbench_cannot_express_is_refused_with_the_reason() -> None:
    nbd = Connection(protocol="nbd", host="h1", volume=VOLUME, filename="nbd-v1", fio_options={"ioengine": "nbd"})
    with pytest.raises(Unsupported, match=r"fio options \['ioengine'\] \(nbd\)"):
        lines(job(target=nbd))
    with pytest.raises(Unsupported, match=r"\['zonemode'\] have no vdbench equivalent"):
        lines(job(extra={"zonemode": "zbd"}))
    with pytest.raises(Unsupported, match="different runtimes"):
        lines(job("a", runtime_s=10), job("b", runtime_s=20))


# -- health: vdbench's own words -----------------------------------------------------------

DONE = "Vdbench execution completed successfully. Output directory: /o\n"


def test_exit_157_is_an_engine_error_even_with_files() -> None:
    with pytest.raises(EngineError, match="exited 157 .vdbench's failure code"):
        health.check("h", 157, DONE, "", stop_requested=False)


def test_warning_or_abort_in_the_logs_is_an_engine_error() -> None:
    for text in ("* Warning: total amount of i/o per second per slave (161580) greater than 100000. *",
                 "Vdbench terminating due to Data Validation or I/O errors. See errorlog.html.",
                 "java.lang.NullPointerException"):
        with pytest.raises(EngineError, match=re.escape(text[:30])):
            health.check("h", 0, text + "\n" + DONE, "", stop_requested=False)
    with pytest.raises(EngineError, match="did not report completion"):
        health.check("h", 0, "Starting RD=rd_iogate\n", "", stop_requested=False)


def test_our_own_stop_and_tolerated_warnings_pass_and_only_those() -> None:
    stop = "User requested early Vdbench termination.\n"
    health.check("h", 0, stop + DONE, "", stop_requested=True)
    with pytest.raises(EngineError, match="early Vdbench termination"):
        health.check("h", 0, stop + DONE, "", stop_requested=False)
    cpu = "12:00:00.000 * Warning for host=localhost: average processor utilization 91.8%  *\n"
    health.check("h", 0, cpu + DONE, "", stop_requested=False, tolerated=(health.CPU_WARNING,))
    with pytest.raises(EngineError, match="processor utilization"):
        health.check("h", 0, cpu + DONE, "", stop_requested=False)
