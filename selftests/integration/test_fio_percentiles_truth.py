"""Ground truth: for real fio 3.33 runs of every rw mode, a single job's percentiles from its
json+ bins equal fio's own json clat percentiles exactly, for every percentile fio printed.

fio runs on a small file in tmp_path (trim needs a block device: a loop device over a
file in tmp_path, made and detached by this test only). Expected values are fio's own
output; the code under test only reads the bins.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.metrics.histogram import Histogram

pytestmark = pytest.mark.integration

FIO = shutil.which("fio")
FILE_MODES = ("read", "write", "randread", "randwrite", "rw", "randrw")
DIRECTIONS = ("read", "write", "trim")


def run_fio(target: Path | str, out: Path, *args: str) -> dict:
    command = [FIO or "fio", "--name=truth", f"--filename={target}", "--size=8m", "--bs=4k", "--ioengine=psync",
               "--output-format=json+", f"--output={out}", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"fio failed: {done.stderr}"
    doc = json.loads(out.read_text())
    assert all(job["error"] == 0 for job in doc["jobs"]), doc["jobs"]
    return doc


def checked_percentiles(doc: dict) -> int:
    """Assert every printed percentile of every job and direction; return how many were compared."""
    compared = 0
    for job in doc["jobs"]:
        for direction in DIRECTIONS:
            clat = job[direction]["clat_ns"]
            if not job[direction]["total_ios"]:
                continue
            hist = Histogram.from_json_bins(clat["bins"])
            assert hist.total == clat["N"] == job[direction]["total_ios"]
            for key, fio_ns in clat["percentile"].items():
                assert hist.percentile_ns(key) == fio_ns, (direction, key, hist.total)
                compared += 1
    return compared


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[str]:
    """A loop device over a 16 MiB file of this test (only this device is ever detached)."""
    if os.geteuid() != 0 or not shutil.which("losetup"):
        pytest.skip("trim needs a block device: a loop device needs root and losetup")
    image = tmp_path / "trim.img"
    with image.open("wb") as handle:
        handle.truncate(16 * 2**20)
    made = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"no loop device: {made.stderr.strip()}")
    device = made.stdout.strip()
    try:
        yield device
    finally:
        subprocess.run(["losetup", "-d", device], check=False)


@pytest.mark.skipif(FIO is None, reason="fio not installed")
@pytest.mark.parametrize("mode", FILE_MODES)
def test_every_rw_mode_on_a_file_matches_fios_percentiles(tmp_path: Path, mode: str) -> None:
    doc = run_fio(tmp_path / "data", tmp_path / "out.json", f"--rw={mode}", "--runtime=1", "--time_based")
    assert checked_percentiles(doc) >= 17  # fio's default list: 17 percentiles per direction


@pytest.mark.skipif(FIO is None, reason="fio not installed")
def test_trim_on_a_loop_device_matches_fios_percentiles(tmp_path: Path, loop_device: str) -> None:
    doc = run_fio(loop_device, tmp_path / "out.json", "--rw=randtrim", "--runtime=1", "--time_based")
    assert doc["jobs"][0]["trim"]["total_ios"] > 0
    assert checked_percentiles(doc) >= 17


@pytest.mark.skipif(FIO is None, reason="fio not installed")
def test_2000_ios_and_odd_percentiles_match_fio(tmp_path: Path) -> None:
    """The issue's case (N = 2000, where rank 99.95 % sits exactly on a sample for the decimal value)
    and a list of percentiles whose doubles are not their decimals."""
    exact = run_fio(tmp_path / "data", tmp_path / "n2000.json", "--rw=randread", "--number_ios=2000", "--size=16m")
    assert exact["jobs"][0]["read"]["total_ios"] == 2000
    assert checked_percentiles(exact) == 17
    odd = run_fio(tmp_path / "data", tmp_path / "odd.json", "--rw=randrw", "--runtime=1", "--time_based",
                  "--percentile_list=0.1:12.345:33.33:66.67:99.9:99.95:99.99:99.999:100")
    assert checked_percentiles(odd) == 18
