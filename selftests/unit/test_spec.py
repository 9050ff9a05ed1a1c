"""Acceptance specs: the shipped poc.yaml / nightly.yaml load, and every mistake names file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from criteria.spec import FAMILIES, load_named, load_spec
from iogate.engines.fio.parse import load_json, parse_jobs
from iogate.errors import LabFileError
from iogate.metrics.types import RunResult, Series

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["poc", "nightly"])
def test_shipped_specs_load_and_cover_every_family(name: str) -> None:
    spec = load_named(name)
    assert set(spec.families) == set(FAMILIES)
    for family in FAMILIES:
        assert len(spec.for_family(family)) >= 1


def test_baseline_family_has_the_spines_bounds_and_they_pass_on_a_loop_device_like_run() -> None:
    baseline = load_named("poc").for_family("baseline")
    assert baseline["iops_min"].criterion == "throughput_min" and baseline["iops_min"].bound("minimum") == 500
    assert baseline["p99_latency_max"].bound("max_latency_ns") == 50_000_000
    data = load_json((DATA / "randrw.json").read_text(), "randrw.json")  # 4 KiB random 70/30, ~2000 IOPS
    run = RunResult("baseline", tuple(parse_jobs(data, "localhost")), Series(), 0, 0)
    verdicts = [check.evaluate(run) for check in baseline]
    assert all(v.passed for v in verdicts), [v.line() for v in verdicts]
    assert [v.criterion for v in verdicts] == ["iops_min", "p99_latency_max", "no_errors"]
    strict = baseline["iops_min"].evaluate(run, minimum=10_000)  # a test may override a bound
    assert not strict.passed and strict.criterion == "iops_min"


def test_tiles_family_holds_targets_to_90pct_in_90pct_of_intervals() -> None:
    held = load_named("poc").for_family("tiles")["targets_held"]
    assert (held.bound("tolerance"), held.bound("min_fraction")) == (0.1, 0.9)


def test_family_left_out_has_no_checks_and_unknown_family_is_an_error(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, "version: 1\nfamilies:\n  baseline:\n    checks:\n      e: {criterion: no_io_errors}\n"))
    assert len(spec.for_family("tiles")) == 0
    with pytest.raises(LabFileError, match="unknown test family 'tile'"):
        spec.for_family("tile")
    with pytest.raises(LabFileError, match="has no check 'x'"):
        spec.for_family("baseline")["x"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "version: 1\nfamilies:\n  baseline:\n    checks:\n      p99:\n        criterion: latency_bound\n        max_latency: 50\n",
            r"spec\.yaml line 7: families\.baseline\.checks\.p99\.max_latency: .*has no unit",
        ),
        (
            "version: 1\nfamilies:\n  baseline:\n    checks:\n      p99:\n        criterion: latency_bund\n",
            r"spec\.yaml line 6: families\.baseline\.checks\.p99\.criterion: unknown criterion 'latency_bund' \(known: .*latency_bound",
        ),
        (
            "version: 1\nfamilies:\n  tiles:\n    checks:\n      held:\n        criterion: target_iops_held\n        tolerance: 1.5\n",
            r"spec\.yaml line 7: families\.tiles\.checks\.held\.tolerance: Input should be less than 1",
        ),
        (
            "version: 1\nfamilies:\n  tiles:\n    checks:\n      held:\n        criterion: target_iops_held\n        tolerence: 0.1\n",
            r"spec\.yaml line 7: families\.tiles\.checks\.held\.tolerence: Extra inputs are not permitted",
        ),
        (
            "version: 1\nfamilies:\n  tilez:\n    checks: {}\n",
            r"spec\.yaml line 3: families\.tilez",
        ),
        (
            "version: 1\nfamilies:\n  sweep:\n    checks:\n      k:\n        criterion: knee\n        stat: p999x\n",
            r"spec\.yaml line 7: families\.sweep\.checks\.k\.stat: .*latency statistic 'p999x'",
        ),
        ("families: {}\n", r"spec\.yaml line 1: version: Field required"),
    ],
)
def test_mistakes_name_file_line_and_field(tmp_path: Path, text: str, error: str) -> None:
    with pytest.raises(LabFileError, match=error):
        load_spec(write(tmp_path, text))


def test_latency_units() -> None:
    from criteria.params import parse_latency_ns

    assert parse_latency_ns("0.5ms") == 500_000
    assert parse_latency_ns("150us") == parse_latency_ns("150 µs") == 150_000
    assert parse_latency_ns("2s") == 2e9
    with pytest.raises(ValueError, match="not a latency"):
        parse_latency_ns("fast")


def test_a_window_key_is_refused_with_why_and_where(tmp_path: Path) -> None:
    """`window:` changed nothing (tests choose the windows): a spec that sets it is told so, at its line."""
    path = write(tmp_path, """\
version: 1
families:
  events:
    checks:
      drop:
        criterion: throughput_impact
        metric: iops
        window: recovery
        max_drop_pct: 50
""")
    with pytest.raises(LabFileError, match=r"spec\.yaml line 8: families\.events\.checks\.drop\.window: was removed"):
        load_spec(path)


@pytest.mark.parametrize("name", ["poc", "nightly"])
def test_shipped_knee_checks_use_the_saturation_minimums(name: str) -> None:
    check = load_named(name).for_family("sweep")["io_before_saturation"]
    assert check.bound("min_rise_pct") == 50 and check.bound("min_rise_latency") == 50_000
