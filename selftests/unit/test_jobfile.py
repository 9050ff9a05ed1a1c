"""Job rendering: a WorkloadSpec becomes the fio options a storage engineer expects."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iogate.arrays.base import Volume
from iogate.arrays.exports import BlockExport
from iogate.engines.fio.jobfile import FioSettings, job_options, render
from iogate.engines.workload import (
    Extent,
    JobSpec,
    RateProcess,
    RunPlan,
    SizeMix,
    Unsupported,
    Verify,
    VerifyAlgorithm,
    WorkloadSpec,
)
from iogate.hosts.connectors.base import Connection
from iogate.lab import DeviceIdentity

VOLUME = Volume("v1", 1 << 30, DeviceIdentity(backing_file="/p/v1.img"), (BlockExport(device="/dev/loop9"),))
TARGET = Connection(protocol="block", host="h1", volume=VOLUME, filename="/dev/loop9", device="/dev/loop9")


def options(**kw: object) -> dict[str, str]:
    return job_options(JobSpec("j", WorkloadSpec("w", **kw), TARGET), "/logs/j")  # type: ignore[arg-type]


def test_mixed_random() -> None:
    opts = options(read_pct=70, random_pct=100, bs=4096, iodepth=8)
    assert opts["rw"] == "randrw" and opts["rwmixread"] == "70"
    assert opts["bs"] == "4k" and opts["iodepth"] == "8" and opts["filename"] == "/dev/loop9"
    assert "percentage_random" not in opts


def test_pure_read_and_sequential_write() -> None:
    assert options(read_pct=100)["rw"] == "randread"
    assert options(read_pct=0, random_pct=0)["rw"] == "write"


def test_partly_random() -> None:
    opts = options(read_pct=95, random_pct=75)
    assert opts["rw"] == "randrw" and opts["percentage_random"] == "75"


def test_rate_split_by_mix() -> None:
    assert options(read_pct=70, rate_iops=100)["rate_iops"] == "70,30"
    assert options(read_pct=100, rate_iops=25)["rate_iops"] == "25,"
    assert options(read_pct=0, rate_iops=25)["rate_iops"] == ",25"


def test_data_pattern_and_verify() -> None:
    opts = options(read_pct=0, dedupe_pct=50, compress_pct=50, verify=Verify())
    assert opts["dedupe_percentage"] == "50" and opts["buffer_compress_percentage"] == "50"
    assert opts["verify"] == "crc32c" and "verify_backlog" not in opts


def test_logs_and_epoch_clock_in_every_job_file() -> None:
    text = render([JobSpec("vm1", WorkloadSpec("w"), TARGET)], "/logs")
    assert "log_unix_epoch=1" in text and "log_hist_msec=1000" in text and "log_avg_msec=1000" in text
    assert "write_iops_log=/logs/vm1" in text and "[vm1]" in text


def test_engine_options_of_the_connection_win() -> None:
    nbd = Connection(protocol="nbd", host="h1", volume=VOLUME, filename="nbd-v1", device="/dev/loop9",
                     fio_options={"ioengine": "nbd", "uri": "nbd+unix:///?socket=/s"})
    opts = job_options(JobSpec("j", WorkloadSpec("w"), nbd), "/l/j")
    assert opts["ioengine"] == "nbd" and opts["uri"].endswith("socket=/s")


def test_bad_workloads_rejected() -> None:
    with pytest.raises(ValueError, match="read_pct=120 is not a percentage"):
        WorkloadSpec("w", read_pct=120)
    with pytest.raises(ValueError, match="job names must be unique"):
        RunPlan("p", (JobSpec("a", WorkloadSpec("w"), TARGET), JobSpec("a", WorkloadSpec("w"), TARGET)))


def test_rate_never_rounds_a_direction_to_uncapped() -> None:
    # 95 % of 8 IOPS rounds to 8 reads: writes must still get their own cap, not fio's "same as reads".
    assert options(read_pct=95, rate_iops=8)["rate_iops"] == "7,1"
    assert options(read_pct=5, rate_iops=8)["rate_iops"] == "1,7"


def test_rate_1_at_70_pct_read_caps_both_directions_never_0() -> None:
    """fio reads 0 as "uncapped": "0,1" would let reads run free. One IOPS cannot be split: 1 each way."""
    assert options(read_pct=70, rate_iops=1)["rate_iops"] == "1,1"


@given(total=st.integers(min_value=1, max_value=100_000), read_pct=st.integers(min_value=0, max_value=100))
def test_every_split_caps_each_direction_of_the_mix_and_keeps_the_total(total: int, read_pct: int) -> None:
    reads_text, writes_text = options(read_pct=read_pct, rate_iops=total)["rate_iops"].split(",")
    if read_pct < 100:
        assert int(writes_text) >= 1  # writes happen: they have a cap, never 0 / missing
    else:
        assert writes_text == ""
    if read_pct > 0:
        assert int(reads_text) >= 1
    else:
        assert reads_text == ""
    caps = [int(t) for t in (reads_text, writes_text) if t]
    assert sum(caps) == max(total, len(caps))  # the target, or 1 each when the target is too small to split
    if 0 < read_pct < 100 and total >= 2:
        assert abs(int(reads_text) - total * read_pct / 100) <= 1  # the mix, to the nearest whole I/O


def test_a_verifying_write_job_caps_its_verify_reads_too() -> None:
    """fio 3.33 dies of SIGFPE when verify reads run under a write-only rate (",N")."""
    assert options(read_pct=0, rate_iops=200, verify=Verify())["rate_iops"] == "200,200"
    assert options(read_pct=0, rate_iops=200)["rate_iops"] == ",200"


# -- typed fields: what fio is told, worked by hand ------------------------------------------------------------


def test_a_size_mix_is_fio_bssplit_in_its_own_spelling() -> None:
    opts = options(bs=SizeMix(((4096, 50), (65536, 30), (1048576, 20))))
    assert opts["bssplit"] == "4k/50:64k/30:1m/20" and "bs" not in opts
    assert options(bs=1536)["bs"] == "1536"  # not a whole KiB: plain bytes, exact


def test_regions_in_bytes_and_shares() -> None:
    opts = options(size=Extent.of_bytes(234881024), offset=Extent.of_bytes(1048576))
    assert (opts["size"], opts["offset"]) == ("224m", "1m")
    assert options(size=Extent.percent(20))["size"] == "20%"


def test_rate_process_and_verify_backlog() -> None:
    assert options(rate_iops=10)["rate_process"] == "poisson"  # the default
    assert options(rate_iops=10, rate_process=RateProcess.LINEAR)["rate_process"] == "linear"
    assert "rate_process" not in options(rate_process=RateProcess.LINEAR)  # no rate, nothing to space
    opts = options(read_pct=0, rate_iops=50, verify=Verify(VerifyAlgorithm.MD5, backlog=64))
    assert (opts["verify"], opts["verify_backlog"], opts["rate_iops"]) == ("md5", "64", "50,50")
    assert (opts["verify_fatal"], opts["verify_dump"], opts["verify_state_save"]) == ("0", "0", "0")


def test_fio_refuses_a_uniform_rate_process_naming_workload_and_field() -> None:
    with pytest.raises(Unsupported, match=r"fio: workload w: rate_process=uniform: fio spaces a rate's I/Os only linear or poisson"):
        options(rate_iops=10, rate_process=RateProcess.UNIFORM)


def test_ioengine_and_log_averaging_are_fio_settings_not_the_workload() -> None:
    assert options()["ioengine"] == "libaio"
    job = JobSpec("j", WorkloadSpec("w"), TARGET)
    assert job_options(job, "/l/j", FioSettings(ioengine="io_uring"))["ioengine"] == "io_uring"
    text = render([job], "/logs", FioSettings(log_avg_msec=0))
    assert "log_avg_msec=0" in text.splitlines() and "log_avg_msec=1000" not in text


def test_mixed_size_job_file_text() -> None:
    workload = WorkloadSpec("mix", read_pct=70, random_pct=100, bs=SizeMix(((4096, 50), (65536, 50))), iodepth=4,
                            size=Extent.of_bytes(64 << 20), runtime_s=5)
    text = render([JobSpec("vm1", workload, TARGET)], "/logs")
    job = text.split("[vm1]\n")[1].splitlines()
    assert job == [
        "ioengine=libaio", "filename=/dev/loop9", "rw=randrw", "rwmixread=70", "bssplit=4k/50:64k/50", "iodepth=4",
        "size=64m", "time_based=1", "runtime=5",
        "write_iops_log=/logs/vm1", "write_lat_log=/logs/vm1", "write_hist_log=/logs/vm1",
    ]


def test_fio_refuses_a_rate_on_a_size_mix_it_would_run_8_5_times_slower() -> None:
    """fio caps a mix at rate_iops x the smallest size in bytes/s: 4k/50:64k/50 averages 34816 bytes, 8.5 x 4096."""
    with pytest.raises(Unsupported, match=r"fio: workload w: rate_iops=100 with block size mix 4k/50:64k/50: .* \(4k\) .* "
                                          r"8\.5x fewer I/Os than asked"):
        options(bs=SizeMix(((4096, 50), (65536, 50))), rate_iops=100)
