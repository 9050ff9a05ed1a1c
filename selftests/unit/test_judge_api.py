"""The judge a test hands evidence to (iogate/judging/judge.py SpecJudge, through plugins/verdicts.py Judge): which
checks judge which evidence and the rules every family gets, decided there and not by a test. Expected values worked
by hand from the runs built here (selftests/unit/test_family_rules.py's helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.judging.evidence import SweepPoint
from iogate.judging.judge import SpecJudge
from iogate.judging.spec import AcceptanceSpec, load_spec
from iogate.metrics.windows import Window, window_stats
from plugins.verdicts import Judge
from selftests.unit.test_family_rules import S, run, steady


def loaded(tmp_path: Path, families: str) -> AcceptanceSpec:
    path = tmp_path / "spec.yaml"
    path.write_text("version: 1\nfamilies:\n" + families)
    return load_spec(path)


def outcomes(verdicts) -> list[tuple[str, bool]]:  # type: ignore[no-untyped-def]
    return [(v.criterion, v.passed) for v in verdicts]


def test_a_run_gets_its_run_checks_and_both_rules_though_the_spec_names_neither(tmp_path: Path) -> None:
    # 100 IOPS for 30 s, every job returned EIO (5): the floor of 80 passes, no_errors fails; no silent second.
    spec = loaded(tmp_path, "  baseline:\n    checks:\n      iops_min: {criterion: throughput_min, metric: iops, minimum: 80}\n")
    assert outcomes(SpecJudge(spec).run("baseline", run(steady(100), error=5))) == [
        ("iops_min", True), ("no_errors", False), ("no_stall", True)]


def test_a_sweep_point_is_judged_without_its_curve_checks_and_the_curve_needs_every_planned_point(tmp_path: Path) -> None:
    spec = loaded(tmp_path, "  sweep:\n    checks:\n"
                            "      iops_min: {criterion: throughput_min, metric: iops, minimum: 80}\n"
                            "      knee: {criterion: knee, min_knee_iops: 10}\n")
    judge = SpecJudge(spec)
    assert outcomes(judge.run("sweep", run(steady(100)))) == [("iops_min", True), ("no_errors", True), ("no_stall", True)]
    assert judge.judges_curves("sweep")
    points = [SweepPoint("t1", 100.0, 1e6, {99.0: 2e6}), SweepPoint("t2", 190.0, 1.1e6, {99.0: 2.2e6})]
    verdicts = judge.curve("sweep", {"rd100-4k": points}, planned=["t1", "t2", "t4"], measured=["t1", "t2"], what="point",
                           window="sweep block")
    assert [v.criterion for v in verdicts] == ["expected_points", "knee[rd100-4k]"]
    assert not verdicts[0].passed and "missing t4" in verdicts[0].detail  # 2 of 3 planned: the sweep fails, naming t4


def test_a_protocol_comparison_with_the_baseline_alone_fails(tmp_path: Path) -> None:
    spec = loaded(tmp_path, "  protocols:\n    checks:\n"
                            "      iops_within: {criterion: relative_to_baseline, metric: iops, tolerance_pct: 5}\n")
    verdicts = SpecJudge(spec).protocols({"block": run(steady(100))}, planned=["block", "nbd"], baseline="block",
                                         figures={"iops": lambda r: r.total_iops}, window="p1")
    assert outcomes(verdicts)[0] == ("comparands", False)
    assert [v.criterion for v in verdicts] == ["comparands", "iops_within", "no_errors", "no_stall"]


EVENTS = ("  events:\n    checks:\n"
          "      snapshot_read_drop_max: {criterion: throughput_impact, metric: iops, direction: read, max_drop_pct: 15}\n"
          "      snapshot_backend_write_drop_max: {criterion: throughput_impact, metric: iops, direction: read, max_drop_pct: 50}\n"
          "      snapshot_p99_max: {criterion: latency_bound, stat: p99, direction: read, max_latency: 100ms}\n"
          "      no_errors: {criterion: no_io_errors}\n")


def thirds(result):  # type: ignore[no-untyped-def]
    """Baseline 0-10 s, event 10-20 s, recovery 20-30 s of a 30 s run."""
    return (window_stats(result.series, Window(n, a * S, b * S))
            for n, a, b in (("baseline", 0, 10), ("event", 10, 20), ("recovery", 20, 30)))


def test_an_event_case_is_judged_by_its_own_checks_and_every_case_checks_on_both_windows(tmp_path: Path) -> None:
    # Baseline 0-10 s, event 10-20 s, recovery 20-30 s, 100 IOPS throughout: every window check passes.
    result = run(steady(100))
    baseline, event, recovery = thirds(result)
    verdicts = SpecJudge(loaded(tmp_path, EVENTS)).events("snapshot", baseline, event, recovery, result, case="read")
    names = [v.criterion for v in verdicts]
    # snapshot_backend_write_* judges another case only; snapshot_p99_max judges every case.
    assert names[:4] == ["snapshot_read_drop_max", "snapshot_p99_max", "snapshot_read_drop_max[recovery]", "snapshot_p99_max[recovery]"]
    assert "snapshot_backend_write_drop_max" not in names and {"no_errors", "no_stall"} <= set(names)


def test_the_fixture_records_what_the_judge_returns(tmp_path: Path) -> None:
    spec = loaded(tmp_path, "  baseline:\n    checks:\n      iops_min: {criterion: throughput_min, metric: iops, minimum: 80}\n")
    sink: list = []
    returned = Judge(sink, [], lambda: spec).run("baseline", run(steady(100)))
    assert sink == returned and len(sink) == 3


DEDUPE = ("  events:\n    checks:\n"
          "      dedupe_p99_max: {criterion: latency_bound, stat: p99, direction: all, max_latency: 100ms}\n"
          "      no_errors: {criterion: no_io_errors}\n")


def test_a_dedupe_event_is_judged_on_what_the_pass_did_and_not_without_it(tmp_path: Path) -> None:
    # Besides the spec's checks on the load, a verdict on the pass from the array's own figure: 0 bytes saved is a FAIL.
    result = run(steady(100))
    baseline, event, recovery = thirds(result)
    judge = SpecJudge(loaded(tmp_path, DEDUPE))
    did = judge.events("dedupe", baseline, event, recovery, result, event_evidence={"saved_bytes": 4096})
    assert outcomes(did)[-1] == ("dedupe_took_effect", True) and did[0].criterion == "dedupe_p99_max"
    idle = judge.events("dedupe", baseline, event, recovery, result, event_evidence={"saved_bytes": 0})
    assert outcomes(idle)[-1] == ("dedupe_took_effect", False)
    with pytest.raises(ValueError, match="the dedupe job's evidence is needed"):
        judge.events("dedupe", baseline, event, recovery, result)


# -- what no check of the spec judges is a FAIL ("nothing judged"), not a pass on the rules alone ----------------

GAP = ("nothing_judged", False)


def test_a_family_the_spec_leaves_out_fails_nothing_judged_beside_the_rules(tmp_path: Path) -> None:
    # Before, a spec without a baseline family passed the baseline test at any IOPS: the rules alone judged it.
    spec = loaded(tmp_path, EVENTS)  # events only
    verdicts = SpecJudge(spec).run("baseline", run(steady(100)))
    assert outcomes(verdicts) == [GAP, ("no_errors", True), ("no_stall", True)]
    assert verdicts[0].detail.startswith(f"spec {spec.path} has no check of family baseline (the family is left out): ")


def test_a_family_of_rules_only_is_nothing_judged(tmp_path: Path) -> None:
    spec = loaded(tmp_path, "  baseline:\n    checks:\n      no_errors: {criterion: no_io_errors}\n")
    verdicts = SpecJudge(spec).run("baseline", run(steady(100)))
    assert outcomes(verdicts) == [GAP, ("no_errors", True), ("no_stall", True)]
    assert "has no check of family baseline: " in verdicts[0].detail


def test_an_event_service_with_no_check_is_nothing_judged_though_the_family_judges_others(tmp_path: Path) -> None:
    # EVENTS names snapshot_* checks only: a replica sync (or a mirror) measured under it is judged by nothing.
    result = run(steady(100))
    baseline, event, recovery = thirds(result)
    judge = SpecJudge(loaded(tmp_path, EVENTS))
    replica = judge.events("replica", baseline, event, recovery, result)
    assert outcomes(replica)[0] == GAP and "has no events check for replica (replica_*)" in replica[0].detail
    snapshot = judge.events("snapshot", baseline, event, recovery, result, case="frontend_write")  # snapshot_p99_max judges it
    assert GAP not in outcomes(snapshot) and snapshot[0].criterion == "snapshot_p99_max"


def test_a_kpi_case_a_curve_a_tile_a_comparison_and_stepping_without_checks_are_nothing_judged(tmp_path: Path) -> None:
    from iogate.procedures.scaling import Step

    judge = SpecJudge(loaded(tmp_path, EVENTS))
    one = run(steady(100))
    assert outcomes(judge.speed("4k_random_read", one))[0] == GAP
    assert outcomes(judge.throughput("4k_random_read", [("qd1", one)], backend=False))[0] == GAP
    assert outcomes(judge.curve("sweep", {}, planned=["t1"], measured=["t1"], what="point", window="sweep"))[0] == GAP
    assert outcomes(judge.targets("tiles", one, one.series, {}, {}, min_intervals=1))[0] == GAP
    compared = judge.protocols({"block": one, "nbd": one}, planned=["block", "nbd"], baseline="block", figures={}, window="p1")
    assert outcomes(compared)[0] == GAP
    assert outcomes(judge.scaling([], planned=[Step("incremental", ("h1",))], runs=[]))[0] == GAP
