"""Command-line options, declared in one place, flowing into one config object."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures.stash import CONFIG_KEY, IOGateConfig
from iogate.errors import IOGateError
from iogate.judging.spec import AcceptanceSpec, load_spec
from iogate.lab import DEFAULT_LAB, Lab, load_lab, registry
from iogate.lab.profiles import Profile, resolve_profile
from iogate.results.compare import LAST, NO_BASELINE, check_baseline_option
from iogate.results.store import ResultsStore

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SPEC = ROOT / "criteria" / "poc.yaml"


def spec_chosen_by(option: str | None, lab: Lab) -> str:
    if option:
        return "--criteria"
    return f"lab {lab.path}" if lab.criteria else "default"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("iogate", "IOGate storage acceptance")
    group.addoption("--lab", default=str(DEFAULT_LAB), help="lab YAML (default: labs/local.yaml, the embedded local lab)")
    group.addoption("--profile", default="smoke", choices=["smoke", "quick", "full"], help="run profile (default smoke)")
    group.addoption("--profile-file", default=None, help="YAML overriding the profile's durations and grids")
    group.addoption("--runtime", type=float, default=None, help="override: measured seconds per run point")
    group.addoption("--ramp", type=float, default=None, help="override: warmup seconds per run point")
    group.addoption("--no-fail-fast", action="store_const", const=False, default=None, dest="fail_fast",
                    help="run every point its planned time even when a check can no longer pass (docs/early-stop.md)")
    group.addoption("--engine", default=None,
                    help=f"load engine ({', '.join(sorted(registry.ENGINES))}; default: the lab file's `engine:`, else fio)")
    group.addoption("--criteria", default=None,
                    help="acceptance spec YAML (default: the lab file's `criteria:`, else criteria/poc.yaml)")
    group.addoption("--results-db", default=str(ROOT / ".iogate" / "results.sqlite"), help="SQLite results store")
    group.addoption(
        "--baseline", default=None,
        help="judge the spec's regression family against stored runs that passed: last | median:K | RUN_ID; "
             "none: a first run, compared with nothing by request (without a passing stored run, last/median:K/"
             "RUN_ID fail: no data)")
    group.addoption("--tiles", type=int, default=None, help="Hitachi VM tiles to run (default: lab YAML `tiles`, else per profile)")
    group.addoption(
        "--verdicts-jsonl", default=None,
        help="append every verdict (test, check, measured, bound ...) to this JSON-lines file (tools/calibrate.py reads it)")


def pytest_configure(config: pytest.Config) -> None:
    """Validate the lab before any fixture provisions anything."""
    if not hasattr(config.option, "lab"):
        return
    try:
        lab = load_lab(config.option.lab)
        if config.option.engine:
            registry.engine_opener(config.option.engine, loc=("--engine",))
            lab = lab.model_copy(update={"engine": config.option.engine})
        profile = resolve_profile(
            config.option.profile,
            Path(config.option.profile_file) if config.option.profile_file else None,
            runtime_s=config.option.runtime,
            ramp_s=config.option.ramp,
            fail_fast=config.option.fail_fast,
        )
        spec = load_spec(spec_path(config.option.criteria, lab))
        if config.option.baseline is not None:
            check_baseline_request(config.option.baseline, spec, Path(config.option.results_db))
    except (IOGateError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[CONFIG_KEY] = IOGateConfig(
        lab=lab,
        profile=profile,
        spec=spec,
        results_db=Path(config.option.results_db),
        baseline=config.option.baseline,
        spec_chosen_by=spec_chosen_by(config.option.criteria, lab),
    )


def check_baseline_request(how: str, spec: AcceptanceSpec, results_db: Path) -> None:
    """--baseline is none, last, median:K (K >= 1) or a run the store holds, and the spec has regression checks
    to judge with it: a mistyped request stops the session before anything runs, never a silent skip."""
    check_baseline_option(how)
    if not spec.for_family("regression"):
        raise ValueError(f"--baseline {how}: spec {spec.path} has no check in family regression")
    if how not in (NO_BASELINE, LAST) and not how.startswith("median:") and not ResultsStore(results_db).has_run(how):
        raise ValueError(f"--baseline {how}: results store {results_db} holds no run {how!r} "
                         f"(use none, last, median:K or a stored run id)")


def _regression_line(c: IOGateConfig) -> str:
    """What the regression family judges against, so no one reads a run without --baseline as compared."""
    checks = len(c.spec.for_family("regression"))
    if c.baseline is None:
        return f"regression: not judged (no --baseline; the spec has {checks} regression check(s))" if checks else ""
    if c.baseline == NO_BASELINE:
        return "regression: no baseline by request (--baseline none)"
    return f"regression: against stored runs that passed, --baseline {c.baseline} (store {c.results_db})"


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    """The console's first lines say which lab, profile and spec judge this run, and its regression baseline."""
    if CONFIG_KEY not in config.stash:
        return None
    c = config.stash[CONFIG_KEY]
    lines = [f"iogate: lab {c.lab.name} ({c.lab.path}), engine {c.lab.engine}, profile {c.profile.name}, "
             f"spec {c.spec.path} (chosen by {c.spec_chosen_by})"]
    regression = _regression_line(c)
    return [*lines, f"iogate: {regression}"] if regression else lines


def spec_path(option: str | None, lab: Lab) -> Path:
    """Which spec judges the run: --criteria, else the lab's own `criteria:`, else criteria/poc.yaml.

    A lab's relative path is tried from the repository root, then from the lab
    file's directory, so `criteria: criteria/local.yaml` works from any cwd.
    """
    if option:
        return Path(option)
    if not lab.criteria:
        return DEFAULT_SPEC
    named = Path(lab.criteria)
    if named.is_absolute():
        return named
    candidates = [ROOT / named, Path(lab.path).parent / named]
    return next((c for c in candidates if c.exists()), candidates[0])


@pytest.fixture(scope="session")
def iogate_config(pytestconfig: pytest.Config) -> IOGateConfig:
    return pytestconfig.stash[CONFIG_KEY]


@pytest.fixture(scope="session")
def lab(iogate_config: IOGateConfig) -> Lab:
    return iogate_config.lab


@pytest.fixture(scope="session")
def profile(iogate_config: IOGateConfig) -> Profile:
    return iogate_config.profile


@pytest.fixture(scope="session")
def spec(iogate_config: IOGateConfig) -> AcceptanceSpec:
    """The acceptance spec (--criteria): which checks and bounds each test family applies."""
    return iogate_config.spec
