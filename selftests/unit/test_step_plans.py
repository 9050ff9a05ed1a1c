"""Client stepping plans at many hosts: the smoke profile's bounded incremental series, the test's time budget,
the stepping chart, and the ssh master connection of namespace hosts (iogate/procedures/scaling.py,
iogate/report/stepping_chart.py, iogate/hosts/initiator.py)."""

from __future__ import annotations

import pytest

from iogate.hosts.initiator import CONTROL_DIR, Initiator
from iogate.lab.model import HostConfig
from iogate.procedures import scaling
from iogate.procedures.scaling import Figures, Step, StepResult
from iogate.report.stepping_chart import stepping_png

HOSTS = [f"h{n}" for n in range(1, 101)]


def test_smoke_at_100_hosts_steps_10_20_to_100_after_every_host_alone() -> None:
    steps = scaling.plan_steps(HOSTS, scaling.incremental_every(100, "smoke"))
    assert [s.name for s in steps[:100]] == [f"alone-h{n}" for n in range(1, 101)]
    assert [len(s.hosts) for s in steps[100:]] == list(range(10, 101, 10))
    assert steps[-1].hosts == tuple(HOSTS)


@pytest.mark.parametrize(("hosts", "profile", "counts"), [
    (4, "smoke", [2, 4]),
    (6, "smoke", [2, 4, 6]),
    (20, "smoke", list(range(2, 21, 2))),
    (21, "smoke", [4, 8, 12, 16, 20, 21]),
    (100, "quick", list(range(2, 101, 2))),
    (100, "full", list(range(2, 101, 2))),
    (7, "full", [2, 4, 6, 7]),
])
def test_the_guide_steps_by_two_and_smoke_runs_at_most_ten_incremental_steps(hosts: int, profile: str, counts: list[int]) -> None:
    every = scaling.incremental_every(hosts, profile)
    assert scaling.incremental_counts(hosts, every) == counts
    assert every % 2 == 0
    if profile == "smoke":
        assert len(counts) <= scaling.SMOKE_INCREMENTAL_STEPS


def test_incremental_every_refuses_no_hosts() -> None:
    with pytest.raises(ValueError, match="at least 1 host"):
        scaling.incremental_every(0, "smoke")


def test_the_budget_keeps_pytest_ini_timeout_for_a_small_lab_and_grows_with_the_plan() -> None:
    assert scaling.stepping_budget_s(scaling.plan_steps(["h1", "h2", "h3", "h4"]), 5) == scaling.MIN_BUDGET_S
    smoke = scaling.stepping_budget_s(scaling.plan_steps(HOSTS, scaling.incremental_every(100, "smoke")), 5)
    full = scaling.stepping_budget_s(scaling.plan_steps(HOSTS), 80)
    # Run 1 of the 100-host smoke stepping was cut at pytest.ini's 900 s after 73 of its 110 steps.
    assert 3000 < smoke < full


def _step(mode: str, hosts: tuple[str, ...], mb_per_host: float) -> StepResult:
    one = Figures(mb_per_host, mb_per_host * 1e6)
    cluster = Figures(mb_per_host * len(hosts), mb_per_host * len(hosts) * 1e6)
    return StepResult(Step(mode, hosts), {h: one for h in hosts}, cluster, 1e6)  # type: ignore[arg-type]


def test_the_stepping_chart_draws_100_hosts_with_a_slow_one_and_missing_steps() -> None:
    results = [_step("constant", (h,), 2.0 if h == "h7" else 5.0) for h in HOSTS]
    results += [_step("incremental", tuple(HOSTS[:k]), 5.0) for k in range(10, 101, 10) if k != 50]
    png = stepping_png(results, limit_bytes_per_s=500e6, slow_below_pct=10, title="100 hosts")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000


def test_the_stepping_chart_says_when_a_mode_has_no_step() -> None:
    assert stepping_png([]).startswith(b"\x89PNG")
    assert stepping_png([_step("incremental", ("h1", "h2"), 5.0)], metric="iops").startswith(b"\x89PNG")


def test_namespace_hosts_share_one_ssh_master_and_others_do_not() -> None:
    ns = Initiator.from_config(HostConfig(name="h1", transport="ssh://root@10.110.1.2", ssh_key="/k", namespace="iogate-h1"))
    real = Initiator.from_config(HostConfig(name="r1", transport="ssh://root@host.example", ssh_key="/k"))
    assert ns.host.backend.controlpath == f"{CONTROL_DIR}/%%C" and ns.host.backend.controlpersist > 0
    assert real.host.backend.controlpath is None
    cmd, args = ns.host.backend._build_ssh_command("true")
    line = " ".join(cmd) % tuple(args)  # what testinfra runs: the path survives its %-formatting
    assert f"-o ControlPath={CONTROL_DIR}/%C " in line and "-o ControlMaster=auto" in line


def test_a_step_that_failed_at_100_hosts_fails_the_stepping_naming_it() -> None:
    from iogate.judging.scaling_family import stepping_verdicts
    from iogate.judging.spec import FamilySpec

    planned = scaling.plan_steps(HOSTS, scaling.incremental_every(100, "smoke"))
    measured = [_step(s.mode, s.hosts, 5.0) for s in planned if s.name not in ("alone-h42", "hosts-70")]
    (present,) = stepping_verdicts(FamilySpec("scaling", {}), measured, planned=planned, runs=[])
    assert not present.passed and "alone-h42, hosts-70" in present.detail and "2 of 110 planned" in present.detail
