"""Acceptance specs: the shipped poc.yaml / nightly.yaml load, and every mistake names file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.engines.fio.parse import load_json, parse_jobs
from iogate.errors import LabFileError
from iogate.judging.spec import FAMILIES, load_named, load_spec
from iogate.metrics.types import RunResult, Series

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


# A procurement spec covers every family; a lab's spec the families calibrated on that lab (the local lab has
# one host: no scaling; the netns lab's calibration took baseline, sweep, tiles and scaling; the emulated vendor
# labs the families issue 16 runs on them: baseline, tiles, events).
COVERS = {"poc": set(FAMILIES), "nightly": set(FAMILIES), "local": set(FAMILIES) - {"scaling"},
          "netns": {"baseline", "sweep", "tiles", "scaling"}, "emulated": {"baseline", "tiles", "events"}}


@pytest.mark.parametrize("name", sorted(COVERS))
def test_shipped_specs_load_and_cover_their_families(name: str) -> None:
    spec = load_named(name)
    assert set(spec.families) == COVERS[name]
    for family in COVERS[name]:
        assert len(spec.for_family(family)) >= 1


# The procurement template holds the published procedures' own figures (shared/docs/methodology.md beside this repository):
# (family, check, bound key, published value in the bound's unit).
PUBLISHED = [
    ("kpi", "speed_frontend_read_latency_max", "max_latency_ns", 150_000),  # IOgen OceanStor 6800 V5: 150 us
    ("kpi", "speed_backend_read_latency_max", "max_latency_ns", 250_000),  # 250 us
    ("kpi", "throughput_frontend_read_at_latency", "min_iops", 780_000),  # 780k IOPS @ 0.5 ms
    ("kpi", "throughput_frontend_read_at_latency", "max_latency_ns", 500_000),
    ("kpi", "throughput_backend_write_at_latency", "min_iops", 360_000),  # 360k IOPS @ 1.2 ms
    ("kpi", "throughput_backend_write_at_latency", "max_latency_ns", 1_200_000),
    ("kpi", "steady_state", "window_rounds", 5),  # SNIA PTS: 5 rounds, 20 % range, 10 % slope
    ("kpi", "steady_state", "max_range_pct", 20),
    ("kpi", "steady_state", "max_slope_pct", 10),
    ("protocols", "iops_vs_baseline_protocol", "tolerance_pct", 5),  # NetApp: within 5 % of the baseline
    ("protocols", "iops_vs_baseline_protocol", "mode", "within"),
    ("events", "dedupe_latency_rise_max", "max_rise_pct", 28.5),  # Hitachi: +28.5 % during dedupe
    ("events", "dedupe_targets_held", "min_fraction", 1.0),  # Hitachi: reach and maintain
    ("tiles", "targets_held", "min_fraction", 1.0),
    ("events", "snapshot_backend_write_drop_max", "max_drop_pct", 50),  # IOgen: snapshot 50 % on backend write
    ("events", "mirror_frontend_write_drop_max", "max_drop_pct", 50),  # IOgen: sync mirror 50 % / 70 %
    ("events", "mirror_backend_write_drop_max", "max_drop_pct", 70),
    ("scaling", "datapath_efficiency_min", "min_efficiency_pct", 92),  # VAST: 92 % (100 x 10 GbE)
]


@pytest.mark.parametrize("name", ["poc", "nightly"])
@pytest.mark.parametrize(("family", "check", "key", "published"), PUBLISHED, ids=[f"{c}.{k}" for _, c, k, _ in PUBLISHED])
def test_procurement_specs_hold_the_published_figures(name: str, family: str, check: str, key: str, published: object) -> None:
    assert load_named(name).for_family(family)[check].bound(key) == published


def test_a_loop_device_run_fails_the_procurement_template_by_its_commitment() -> None:
    """poc.yaml is not stretched to pass on a loop device: a ~2000 IOPS 70/30 run misses its committed IOPS."""
    baseline = load_named("poc").for_family("baseline")
    data = load_json((DATA / "randrw.json").read_text(), "randrw.json")  # 4 KiB random 70/30, ~2000 IOPS
    run = RunResult("baseline", tuple(parse_jobs(data, "localhost")), Series(), 0, 0)
    verdicts = {check.name: check.evaluate(run) for check in baseline}
    assert not verdicts["iops_min"].passed and verdicts["iops_min"].bound == 100_000
    assert verdicts["no_errors"].passed
    relaxed = baseline["iops_min"].evaluate(run, minimum=1000)  # a test may override a bound
    assert relaxed.passed and relaxed.criterion == "iops_min"


BOUND_KEYS = {"minimum", "max_latency", "min_iops", "min_knee_iops", "tolerance", "min_fraction", "window_rounds", "max_range_pct",
              "max_slope_pct", "max_rounds", "tolerance_pct", "min_efficiency_pct", "max_drop_pct", "max_rise_pct"}


def test_every_number_of_the_procurement_template_says_where_it_comes_from() -> None:
    """Each bound line of poc.yaml carries a [published], [BUYER] or [vendor] comment (or the line above does)."""
    lines = (Path(__file__).resolve().parents[2] / "criteria" / "poc.yaml").read_text().splitlines()
    unsourced = []
    for index, line in enumerate(lines):
        stripped = line.split("#", 1)[0].strip()
        key = stripped.partition(":")[0]
        if key.strip() not in BOUND_KEYS:
            continue
        context = line + (lines[index - 1] if index else "")
        if not any(tag in context for tag in ("[published]", "[BUYER]", "[vendor]", "as tiles.")):
            unsourced.append(f"line {index + 1}: {line.strip()}")
    assert not unsourced, unsourced


def test_a_lab_names_its_spec_and_the_command_line_overrides_it(tmp_path: Path) -> None:
    from iogate.lab import load_lab
    from plugins.options import DEFAULT_SPEC, ROOT, spec_chosen_by, spec_path

    local = load_lab(ROOT / "labs" / "local.yaml")
    assert spec_path(None, local) == ROOT / "criteria" / "local.yaml"
    assert spec_chosen_by(None, local).startswith("lab ")
    assert spec_path("criteria/poc.yaml", local) == Path("criteria/poc.yaml")
    assert spec_chosen_by("criteria/poc.yaml", local) == "--criteria"
    unnamed = load_lab(ROOT / "labs" / "examples" / "static.yaml")
    assert spec_path(None, unnamed) == DEFAULT_SPEC and spec_chosen_by(None, unnamed) == "default"


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
            r"spec\.yaml line 7: families\.tiles\.checks\.held\.tolerance: .*tolerance 1\.5 is refused: allowed 0 <= tolerance < 1",
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
    from iogate.judging.params import parse_latency_ns

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
