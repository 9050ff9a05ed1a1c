"""Ground truth for the rules every family gets (iogate/judging/family_rules.py), with real fio on the local lab.

Each case runs an acceptance family end to end (selftests/spec_catches.run_family: smoke profile, a copy of
labs/local.yaml whose workdir is the test's) with one degradation injected into what the run started:

  * the I/O frozen 8 s inside a 30 s baseline run, judged by a spec whose baseline family has only a
    mean-IOPS floor: the floor passes (the mean hides it), the stall rule fails naming host, job and span;
  * the I/O frozen 8 s right after a snapshot is deleted (the recovery window): the recovery window's
    checks and the stall rule fail, naming the window;
  * one sweep point's fio killed mid-run: the point is an infrastructure error, and the sweep's curve
    fails its expected points naming it (the knee is no longer judged as if the curve were whole).

"Frozen" is the run's own fio stopped (SIGSTOP, selftests.spec_catches.Stall): no I/O is issued or
reaped, exactly what an array that stops completing I/O shows the host.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from selftests.spec_catches import Injection, Stall, details, failed, our_processes, run_family, signal_all

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MEAN_FLOOR_ONLY = """\
version: 1
description: A baseline family with a whole-run mean IOPS floor only (the stall rule is not named).
families:
  baseline:
    checks:
      iops_min:
        criterion: throughput_min
        metric: iops
        minimum: 500
"""


class StallAfterDelete(Stall):
    """The run's fio stopped for `for_s` once the snapshot image `image` (a glob under the workdir) existed
    and is gone again: the freeze begins as the recovery window does."""

    def __init__(self, image: str, *, for_s: float, also: str = "") -> None:
        super().__init__("fio", after_s=0, for_s=for_s, also=also)
        self.image, self.seen = image, False

    def anchored(self, workdir: Path) -> bool:
        present = any(workdir.glob(self.image))
        self.seen = self.seen or present
        return self.seen and not present


class Kill(Injection):
    """SIGKILL the run's own fio `after_s` after it appears (its command line holds `also`): a point that dies mid-run."""

    def act(self, workdir: Path) -> None:
        pids = our_processes(workdir, "fio", self.also)
        print(f"kill: SIGKILL fio {pids}", flush=True)
        signal_all(pids, signal.SIGKILL)


def test_eight_frozen_seconds_in_a_baseline_run_fail_the_stall_rule_not_the_mean_floor(tmp_path: Path) -> None:
    spec = tmp_path / "mean-floor.yaml"
    spec.write_text(MEAN_FLOOR_ONLY)
    rows = run_family(tmp_path, "baseline", args=("--runtime", "30", "--criteria", str(spec)),
                      stall=Stall("fio", after_s=8, for_s=8, also="-baseline/"))
    assert failed(rows, with_invalid=True) == {"no_stall"}, {name: details(rows, name) for name in rows}
    # The mean floor passed: 22 of 30 s at the committed 1428 IOPS is ~1047 >= 500.
    assert all(v["passed"] for v in rows["iops_min"])
    stall = details(rows, "no_stall")
    assert "no I/O completed" in stall and "s after the measurement began" in stall
    assert all(v["measured"] >= 6000 for v in rows["no_stall"] if not v["passed"]), stall  # ~8 s silent


def test_a_freeze_after_the_snapshot_delete_fails_the_recovery_window(tmp_path: Path) -> None:
    rows = run_family(tmp_path, "events", args=("-k", "snapshot and read"),
                      stall=StallAfterDelete("runs/*/pool/events-snap@read.img", for_s=8, also="-snapshot-read/"))
    failing = failed(rows, with_invalid=True)
    assert {"no_stall", "snapshot_read_drop_max"} <= failing, {name: details(rows, name) for name in failing}
    recovery = [v for v in rows["snapshot_read_drop_max"] if v["criterion"].endswith("[recovery]")]
    assert recovery and not recovery[0]["passed"] and recovery[0]["window"].startswith("recovery")
    event = [v for v in rows["snapshot_read_drop_max"] if not v["criterion"].endswith("[recovery]")]
    assert event and event[0]["passed"], event  # the snapshot itself cost nothing: only the recovery window fails
    assert "recovery window" in details(rows, "no_stall")
    # What else may fail is the same freeze: the stalled I/Os' latency in the recovery window.
    assert failing <= {"no_stall", "snapshot_read_drop_max", "snapshot_p99_latency_max"}, failing


def test_a_sweep_point_killed_mid_run_fails_the_sweep_naming_it(tmp_path: Path) -> None:
    point = "rd70-4k-t16"  # the smoke grid's heaviest point (corners: t1, t4, t16)
    rows = run_family(tmp_path, "sweep", args=("-k", "block"), stall=Kill(after_s=2, also=f"-block-{point}/"))
    assert "expected_points" in failed(rows, with_invalid=True), rows.get("expected_points")
    assert f"missing {point}" in details(rows, "expected_points")
