"""NetApp/VMware protocol comparison: the same VMs on every protocol, relative to the baseline protocol.

Points (workloads/netapp.yaml): 32 ... 128 VMs with 2 outstanding I/Os each,
4K and 8K, 75 % read, 100 % random; and one VM with 128 outstanding I/Os over
2 disks, 8K, 60 % read. Each VM is a fio job on its own region of a lab volume
(the shared datastore). Before each protocol's run the volumes are restored
from the post-prefill snapshot (where the array driver can), so every protocol
starts from the same state.

Verdicts (spec family `protocols`): relative_to_baseline (baseline protocol =
100, the lab's baseline_protocol), which needs its comparands (every lab protocol
measured, at least one beside the baseline: iogate/judging/points.py `comparands`), and
the rules every family gets (no_errors, no_stall) on every protocol's run.
"""

from __future__ import annotations

import allure
import pytest

from fixtures.session import per_lab
from fixtures.suite import attach_table
from iogate.engines.workload import RunPlan
from iogate.judging.evidence import RUN_FIGURES
from iogate.metrics.types import RunResult
from iogate.procedures.netapp import load_netapp, netapp_jobs

NETAPP = load_netapp().netapp


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "netapp_point" in metafunc.fixturenames:
        per_lab(metafunc, "netapp_point", lambda s: [(p.id, p) for p in NETAPP.points(s.profile)])


@pytest.mark.protocols
@pytest.mark.netapp
@allure.epic("NetApp protocol comparison")
@allure.feature("protocols")
@allure.story("every protocol relative to the baseline protocol (= 100)")
def test_protocol_compare(netapp_point, lab, protocol_volumes, connect, measure, profile, judge, state):
    allure.dynamic.parameter("baseline", lab.baseline)
    for key, value in {"vms": netapp_point.vms, "bs": netapp_point.bs, "read_pct": netapp_point.read_pct,
                       "outstanding_total": netapp_point.outstanding_total * netapp_point.disks_per_vm}.items():
        allure.dynamic.parameter(key, value)
    hosts = [h.name for h in lab.hosts]
    order = [lab.baseline] + [p.name for p in lab.protocols if p.name != lab.baseline]
    results: dict[str, RunResult] = {}
    for protocol in order:
        if NETAPP.restore_between_tests:
            state.restore(f"before {protocol}")
        volumes = protocol_volumes(protocol)
        plan = netapp_jobs(NETAPP, netapp_point, hosts, volumes, lambda volume, host, p=protocol: connect(p, volume, host),
                           runtime_s=profile.runtime_s, ramp_s=profile.ramp_s)
        results[protocol] = measure(RunPlan(f"{protocol}-{netapp_point.id}", plan.jobs))
    base = results[lab.baseline]
    attach_table("protocols", [
        {"protocol": name, **{k: round(f(r), 4) for k, f in RUN_FIGURES.items()},
         "iops_relative": round(100.0 * r.total_iops / base.total_iops, 1) if base.total_iops else ""}
        for name, r in results.items()])
    # Every protocol against the baseline protocol (its comparands found measured first), and every protocol's run.
    judge.protocols(results, planned=order, baseline=lab.baseline, figures=RUN_FIGURES, window=netapp_point.id)
