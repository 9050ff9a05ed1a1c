"""`iogate lab check FILE`: everything about a lab that can be known before a run, and the run's plan.

Offline (seconds, nothing contacted): the schema and every cross-check load_lab makes
(each refusal names file:line), the vendor SDK importable, the acceptance spec loadable,
the profile known; then the plan (iogate.lab.plan). With `connect`, without provisioning
anything: each host over SSH as root with the controller's fio, its clock and (with two or
more hosts) its `fio --server`; the array's login and API version (iogate.lab.reachable).
Every line says ok or FAIL; the check holds only when no line fails.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from iogate.errors import IOGateError, LabFileError
from iogate.lab import registry
from iogate.lab.checks import human_size
from iogate.lab.model import load_lab
from iogate.lab.plan import make_plan
from iogate.lab.profiles import Profile, resolve_profile
from iogate.lab.support import sdk_problem
from iogate.lab.yamlfile import Loc, line_of, load_yaml
from iogate.units import parse_size_bytes

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SPEC = ROOT / "criteria" / "poc.yaml"  # as plugins/options.py: --criteria, else the lab's, else this


@dataclass(frozen=True)
class Line:
    ok: bool
    text: str

    def render(self) -> str:
        return f"  {'ok  ' if self.ok else 'FAIL'}  {self.text}"


def spec_path(option: str | None, lab_criteria: str | None, lab_path: Path) -> Path:
    """Which spec judges the run (plugins/options.py spec_path): --criteria, the lab's `criteria:`, else criteria/poc.yaml."""
    if option:
        return Path(option)
    if not lab_criteria:
        return DEFAULT_SPEC
    named = Path(lab_criteria)
    if named.is_absolute():
        return named
    candidates = [ROOT / named, lab_path.parent / named]
    return next((c for c in candidates if c.exists()), candidates[0])


def check(path: Path, criteria: str | None = None, profile_name: str = "smoke", connect: bool = False) -> tuple[bool, list[str]]:
    """(whether everything holds, the lines to print)."""
    started = time.monotonic()
    out = [f"iogate lab check {path}"]
    try:
        lab = load_lab(path)
    except LabFileError as exc:
        problems = str(exc).splitlines()
        return False, [*out, *(Line(False, p).render() for p in problems), f"lab check: {len(problems)} problem(s) in {path}"]
    lines = [Line(True, f"schema and cross-checks: lab {lab.name}, driver {lab.array.driver}, {len(lab.hosts)} host(s), "
                        f"protocols {', '.join(p.name for p in lab.protocols)} (baseline {lab.baseline})")]
    _, where = load_yaml(path)

    def located(loc: Loc, message: str) -> str:
        line = line_of(where, loc)
        return f"{path}{f' line {line}' if line else ''}: {'.'.join(map(str, loc))}: {message}"

    problem = sdk_problem(lab.array.driver)
    lines.append(Line(problem is None, located(("array", "driver"), problem) if problem else
                      f"array driver {lab.array.driver}: its SDK (if any) is importable"))
    spec = spec_path(criteria, lab.criteria, path)
    try:
        from iogate.judging.family_rules import own_checks
        from iogate.judging.spec import FAMILIES, load_spec

        judged = load_spec(spec).families
        # A family the spec leaves out, or gives only the rules (no_errors, no_stall), fails its tests "nothing judged"
        # (a spec gap, never a pass): say which before a run.
        unjudged = [name for name in FAMILIES if name not in judged or not own_checks(judged[name])]
        judging = [name for name in judged if name not in unjudged]
        lines.append(Line(True, f"acceptance spec {spec} loads; it judges {', '.join(judging) or 'no family'}"
                                + (f" (no checks for {', '.join(unjudged)}: their tests would fail 'nothing judged')" if unjudged else "")))
    except (IOGateError, OSError) as exc:
        lines.append(Line(False, f"acceptance spec {spec}: {exc}"))
    profile: Profile | None = None
    try:
        profile = resolve_profile(profile_name)
        lines.append(Line(True, f"profile {profile.name}"))
    except (ValueError, IOGateError) as exc:
        lines.append(Line(False, f"profile: {exc}"))
    driver = registry.array_driver_class(lab.array.driver)
    options = driver.Options.model_validate(lab.array.options)
    plan_lines: list[str] = []
    if profile is not None:
        plan = make_plan(lab, driver, options, profile)
        plan_lines = plan.lines(profile)
        pool = getattr(options, "pool_size", None)
        if pool and not getattr(options, "overcommit", False):
            fits = plan.provisioned_bytes <= parse_size_bytes(pool)
            lines.append(Line(fits, f"the plan's {human_size(plan.provisioned_bytes)} of volumes fit the pool ({pool})" if fits else
                              located(("array", "options", "pool_size"),
                                      f"the run provisions {human_size(plan.provisioned_bytes)} of volumes (the plan), more than "
                                      f"the pool's {human_size(parse_size_bytes(pool))}: enlarge it, shrink volumes or set overcommit")))
    if connect:
        from iogate.lab.reachable import connect_lines

        lines += [Line(ok, text) for ok, text in connect_lines(lab, driver, options)]
    failed = [line for line in lines if not line.ok]
    verdict = (f"lab check: {len(failed)} problem(s)" if failed else
               f"lab check: everything holds ({'offline and connected' if connect else 'offline; --connect also reaches hosts and array'})")
    return not failed, [*out, *(line.render() for line in lines), *plan_lines,
                        f"{verdict} ({time.monotonic() - started:.1f} s)"]
