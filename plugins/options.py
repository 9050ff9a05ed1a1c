"""Command-line options, declared in one place, flowing into one session object (fixtures/session.py Suite).

`--lab` repeats: `--lab a.yaml --lab b.yaml` runs the same selection on each lab, its name first in every test id.
The labs of one session are compared (a bake-off), so they must be judged by one spec and driven by one engine:
a session whose labs name different specs or engines stops before anything runs, naming the difference.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.session import LAB_PARAM, SUITE, LabSession, Suite, suite_of
from iogate.errors import IOGateError
from iogate.judging.spec import AcceptanceSpec, load_spec
from iogate.lab import DEFAULT_LAB, Lab, load_lab, registry
from iogate.lab.profiles import Profile, resolve_profile
from iogate.results.compare import LAST, NO_BASELINE, check_baseline_option
from iogate.results.run_context import spec_sha256
from iogate.results.store import ResultsStore

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SPEC = ROOT / "criteria" / "poc.yaml"


def spec_chosen_by(option: str | None, lab: Lab) -> str:
    if option:
        return "--criteria"
    return f"lab {lab.path}" if lab.criteria else "default"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("iogate", "IOGate storage acceptance")
    group.addoption("--lab", action="append", default=None,
                    help="lab YAML (default: labs/local.yaml, the embedded local lab); repeat it to run the same tests "
                         "on several labs in one session (a bake-off): --lab a.yaml --lab b.yaml")
    group.addoption("--profile", default="smoke", choices=["smoke", "quick", "full"], help="run profile (default smoke)")
    group.addoption("--profile-file", default=None, help="YAML overriding the profile's durations and grids")
    group.addoption("--runtime", type=float, default=None, help="override: measured seconds per run point")
    group.addoption("--ramp", type=float, default=None, help="override: warmup seconds per run point")
    group.addoption("--fail-fast", action="store_const", const=True, default=None, dest="fail_fast",
                    help="stop a point once a monotonic check can no longer pass (the default; docs/early-stop.md)")
    group.addoption("--no-fail-fast", action="store_const", const=False, dest="fail_fast",
                    help="run every point its planned time even when a check can no longer pass")
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
    """Validate every lab before any fixture provisions anything."""
    if not hasattr(config.option, "lab"):
        return
    try:
        profile = resolve_profile(
            config.option.profile,
            Path(config.option.profile_file) if config.option.profile_file else None,
            runtime_s=config.option.runtime,
            ramp_s=config.option.ramp,
            fail_fast=config.option.fail_fast,
        )
        labs = [open_lab(path, config.option.engine, config.option.criteria, profile) for path in lab_files(config.option.lab)]
        # The longest window any lab needs, for all: labs of one session are compared at the same lengths.
        profile = profile.with_min_window(max((s.lab.min_window_s for s in labs if s.lab.min_window_s), default=None))
        for session in labs:
            session.profile = profile
        check_one_comparison(labs)
        if config.option.baseline is not None:
            for session in labs:
                check_baseline_request(config.option.baseline, session.spec, Path(config.option.results_db))
    except (IOGateError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None
    workerinput = getattr(config, "workerinput", None)
    run_id = workerinput.get("iogate_run_id") if workerinput else None
    config.stash[SUITE] = Suite(
        labs=tuple(labs),
        profile=profile,
        results_db=Path(config.option.results_db),
        baseline=config.option.baseline,
        run_id=run_id or f"{time.strftime('%Y%m%d-%H%M%S')}-{'+'.join(s.name for s in labs)}-{os.getpid()}",
    )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # type: ignore[no-untyped-def]
    """pytest-xdist: every worker stores its points under the controller's run id (one run per session)."""
    suite = suite_of(node.config)
    if suite is not None:
        node.workerinput["iogate_run_id"] = suite.run_id


def lab_files(option: list[str] | None) -> list[str]:
    """--lab values (each may hold several files separated by spaces: make accept LAB="a.yaml b.yaml")."""
    files = [f for value in (option or [str(DEFAULT_LAB)]) for f in value.split()]
    return files or [str(DEFAULT_LAB)]


def open_lab(path: str, engine: str | None, criteria: str | None, profile: Profile) -> LabSession:
    lab = load_lab(path)
    if engine:
        registry.engine_opener(engine, loc=("--engine",))
        lab = lab.model_copy(update={"engine": engine})
    spec = load_spec(spec_path(criteria, lab))
    return LabSession(lab=lab, spec=spec, profile=profile, spec_chosen_by=spec_chosen_by(criteria, lab))


def check_one_comparison(labs: list[LabSession]) -> None:
    """Labs of one session are compared: one name each, one spec (path and content), one engine."""
    names = [s.name for s in labs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"--lab: lab name {', '.join(twice)} given twice: each lab of a session needs a name of its own "
                         "(it leads every test id and names the lab's column in the bake-off)")
    if len(labs) < 2:
        return
    specs = {s.name: (str(s.spec.path), spec_sha256(Path(s.spec.path))) for s in labs}
    if len({digest for _, digest in specs.values()}) > 1 or len({p for p, _ in specs.values()}) > 1:
        raise ValueError("refused: labs judged by different specs cannot be compared in one session: "
                         + "; ".join(f"lab {name} {path}" for name, (path, _) in specs.items())
                         + " (name one with --criteria FILE)")
    engines = {s.name: s.lab.engine for s in labs}
    if len(set(engines.values())) > 1:
        raise ValueError("refused: labs driven by different engines cannot be compared in one session: "
                         + "; ".join(f"lab {name} {engine}" for name, engine in engines.items()) + " (choose one with --engine)")


def check_baseline_request(how: str, spec: AcceptanceSpec, results_db: Path) -> None:
    """--baseline is none, last, median:K (K >= 1) or a run the store holds, and the spec has regression checks
    to judge with it: a mistyped request stops the session before anything runs, never a silent skip."""
    check_baseline_option(how)
    if not spec.for_family("regression"):
        raise ValueError(f"--baseline {how}: spec {spec.path} has no check in family regression")
    if how not in (NO_BASELINE, LAST) and not how.startswith("median:") and not ResultsStore(results_db).has_run(how):
        raise ValueError(f"--baseline {how}: results store {results_db} holds no run {how!r} "
                         f"(use none, last, median:K or a stored run id)")


def _regression_line(suite: Suite) -> str:
    """What the regression family judges against, so no one reads a run without --baseline as compared."""
    checks = len(suite.labs[0].spec.for_family("regression"))
    if suite.baseline is None:
        return f"regression: not judged (no --baseline; the spec has {checks} regression check(s))" if checks else ""
    if suite.baseline == NO_BASELINE:
        return "regression: no baseline by request (--baseline none)"
    return f"regression: against stored runs that passed, --baseline {suite.baseline} (store {suite.results_db})"


def _window_note(suite: Suite) -> str:
    """Which lab's min_window_s lengthened the session's windows (every lab of a session runs the longest)."""
    windows = {s.name: s.lab.min_window_s for s in suite.labs if s.lab.min_window_s}
    if not windows:
        return ""
    lab = max(windows, key=lambda name: windows[name] or 0)
    return f"; windows at least {windows[lab]:g} s (min_window_s of lab {lab})"


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    """The console's first lines say which labs, profile and spec judge this run, and its regression baseline."""
    suite = suite_of(config)
    if suite is None:
        return None
    lines = [f"iogate: lab {s.name} ({s.lab.path}), engine {s.lab.engine}, profile {s.profile.name}, "
             f"spec {s.spec.path} (chosen by {s.spec_chosen_by})"
             f"{_window_note(suite)}"
             f"{'' if s.lab.live_judge else '; no live judge (lab: live_judge false): every point runs its planned time'}"
             for s in suite.labs]
    if len(suite.labs) > 1:
        order = " | ".join(" then ".join(s.name for s in group) for group in suite.groups())
        lines.append(f"iogate: {len(suite.labs)} labs, run {suite.run_id}; one after another where they share a host: {order}")
    regression = _regression_line(suite)
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
def suite(pytestconfig: pytest.Config) -> Suite:
    found = suite_of(pytestconfig)
    if found is None:
        raise pytest.UsageError("no IOGate session: run with --lab")
    return found


@pytest.fixture(scope="session")
def lab_session(request: pytest.FixtureRequest, suite: Suite) -> Iterator[LabSession]:
    """The lab this test runs on (plugins/parametrize.py: its name is the test id's first part). Session-scoped
    and parametrized by lab: pytest runs one lab's tests, tears its fixtures down, then the next lab's."""
    name = getattr(request, "param", None)
    if name is None and len(suite.labs) > 1:
        raise pytest.UsageError(f"{request.node.nodeid}: not parametrized by lab ({LAB_PARAM}) in a session of "
                                f"{len(suite.labs)} labs")
    current = suite.lab(str(name)) if name is not None else suite.labs[0]
    # What a bake-off lists when it differs between labs (iogate/results/bakeoff_guard.py, from the run context).
    current.facts.setdefault("lab.volumes", f"{current.lab.volumes.count} x {current.lab.volumes.size}")
    current.facts.setdefault("lab.protocols", ", ".join(p.name for p in current.lab.protocols))
    suite.active = current
    yield current
    if suite.active is current:
        suite.active = None


@pytest.fixture(scope="session")
def lab(lab_session: LabSession) -> Lab:
    return lab_session.lab


@pytest.fixture(scope="session")
def profile(lab_session: LabSession) -> Profile:
    return lab_session.profile


@pytest.fixture(scope="session")
def spec(lab_session: LabSession) -> AcceptanceSpec:
    """The acceptance spec (--criteria): which checks and bounds each test family applies."""
    return lab_session.spec
