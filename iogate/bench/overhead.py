"""Harness overhead: the same fio job bare and through IOGate, alternating, same device.

Prints `iogate/bare IOPS ratio = X` (median of per-pair ratios; alternating pairs
cancel the 2-3x drift loop devices show between runs here) and the orchestration
overhead per run point in seconds (IOGate wall time minus bare fio wall time).
Targets: ratio >= 0.99, overhead <= 0.3 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

from iogate.arrays.local import LocalArray
from iogate.engines.fio import jobfile, parse
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import load_lab
from iogate.run import Run
from iogate.run.resources import release_all


def bare_fio(device: str, workload: WorkloadSpec, path: str) -> tuple[float, float]:
    """(IOPS, wall seconds) of plain fio with the same job options and no IOGate logging."""
    block_sizes = "".join(f"{k}={v}\n" for k, v in jobfile.block_size_options(workload).items())
    job = (
        f"[bare]\nfilename={device}\nioengine={jobfile.DEFAULT_SETTINGS.ioengine}\ndirect=1\nrw=randrw\nrwmixread={workload.read_pct}\n"
        f"{block_sizes}iodepth={workload.iodepth}\ntime_based=1\nruntime={workload.runtime_s:g}\n"
    )
    with open(path, "w") as handle:
        handle.write(job)
    started = time.monotonic()
    done = subprocess.run(["fio", "--output-format=json", path], capture_output=True, text=True, check=True)
    wall = time.monotonic() - started
    data = parse.load_json(done.stdout, path)
    job_data = data["jobs"][0]
    return job_data["read"]["iops"] + job_data["write"]["iops"], wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=float, default=3)
    args = parser.parse_args()
    lab = load_lab()
    run = Run.start(lab.workdir, "bench")
    array = LocalArray(lab, run)
    try:
        array.setup()
        volume = array.create_volume("bench", 256 << 20)
        guard = Guard()
        guard.admit(volume.identity)
        initiator = Initiator.from_config(lab.hosts[0])
        connection = BlockConnector(lab.protocols[0], run).connect(initiator, volume)
        engine = FioEngine(run, {initiator.name: initiator}, guard)
        workload = WorkloadSpec("bench", read_pct=70, bs=4 << 10, iodepth=8, runtime_s=args.runtime)
        ratios, overheads = [], []
        for pair in range(args.pairs):
            bare_iops, bare_wall = bare_fio(connection.filename, workload, str(run.path("bare.fio")))  # the loop device itself
            started = time.monotonic()
            result = engine.run_plan(RunPlan("bench", (JobSpec("bench", workload, connection),)))
            suite_wall = time.monotonic() - started
            ratios.append(result.total_iops / bare_iops)
            overheads.append(suite_wall - bare_wall)
            print(f"pair {pair + 1}: bare {bare_iops:.0f} IOPS in {bare_wall:.2f} s, "
                  f"iogate {result.total_iops:.0f} IOPS in {suite_wall:.2f} s")
        print(f"iogate/bare IOPS ratio = {statistics.median(ratios):.3f}")
        print(f"orchestration overhead per run point = {statistics.median(overheads):.3f} s")
    finally:
        array.teardown()
        release_all(run.ledger)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
