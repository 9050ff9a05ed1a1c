"""Acceptance specs (criteria/poc.yaml, criteria/nightly.yaml): which criteria, which bounds, per test family.

A spec file names, for each test family (baseline, sweep, tiles ...), its
checks: a check is a named use of a criterion with its bounds, e.g.

    families:
      baseline:
        checks:
          p99_latency_max: {criterion: latency_bound, stat: p99, max_latency: 50ms}

Loading validates everything before a test runs: the file's structure, the
criterion names, each criterion's bounds (its Params model: range and unit of
every bound, so that every check can both pass and fail; the bounds a spec must
write out, a knee's min_knee_iops), a check name that names a case names a real
one (iogate/judging/cases.py), where a bound comes from (`source:`, SOURCE_KINDS) and,
per family, that the tests apply every check with a criterion that can judge
what they hand it and find every check they read by name
(iogate/judging/families.py); every error names file:line and the allowed values
("criteria/poc.yaml line 14: families.baseline.checks.p99_latency_max.
max_latency: ...").

Each check may say where its bound comes from, `source:` (SOURCE_KINDS:
"[published] SNIA PTS", "[BUYER] committed IOPS", "calibrated N=40: worst 1068
x 0.95" ...); every verdict of the check carries it and the check's
description (Verdict.bound_source, Verdict.description) for the reviewer.

>>> spec = load_spec(Path("criteria/poc.yaml"))
>>> verdict = spec.for_family("baseline")["iops_min"].evaluate(run)
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from iogate.errors import LabFileError
from iogate.judging import cases, registry
from iogate.judging import families as family_uses
from iogate.judging.params import CriterionParams
from iogate.lab.yamlfile import Loc, line_of, load_yaml, validate
from iogate.metrics.generator import judged_on
from iogate.verdict import Verdict

FamilyName = Literal["baseline", "sweep", "tiles", "kpi", "protocols", "scaling", "events", "regression"]
FAMILIES: tuple[str, ...] = FamilyName.__args__
SPEC_DIR = Path(__file__).resolve().parents[2] / "criteria"  # the spec YAMLs and calibration records: data, beside the library


class _CheckModel(BaseModel):
    """A check as written: criterion, description; every other key is a bound.

    There is no `window` key: the test hands each criterion the window(s) it
    judges and the verdict names them; a key the suite would read nowhere
    would only pretend to move a check (REMOVED_KEYS says so when a spec has it).
    """

    model_config = ConfigDict(extra="allow")
    criterion: str
    description: str = ""
    source: str = ""


# Where a bound comes from, as a check's `source:` starts: the reviewer reads it beside the verdict.
SOURCE_KINDS = {
    "[published]": "a figure or rule of a published procedure or report, named after the tag",
    "[vendor]": "the vendor's own statement (IOgen's list of data-service costs), named after the tag",
    "[BUYER]": "a placeholder for the buyer's committed figure, to replace for the array under test",
    "calibrated N=": "the worst of N calibration runs plus the stated margin (criteria/<lab>.calibration.md)",
    "[hand-set]": "set by hand where no figure is published nor calibrated, with why",
}


_RUNS = re.compile(r"^\d+")


def _source_problem(source: str) -> str | None:
    """Why a check's `source:` does not say where its bound comes from, or None (unstated is allowed when loading;
    the shipped specs' self-test requires it)."""
    if not source:
        return None
    kind = next((kind for kind in SOURCE_KINDS if source.startswith(kind)), None)
    if kind is None:
        kinds = "; ".join(f"{kind} ({why})" for kind, why in SOURCE_KINDS.items())
        return f"source {source!r} must start with one of: {kinds}"
    what = source.removeprefix(kind)
    if kind == "calibrated N=":
        runs = _RUNS.match(what)
        if runs is None:
            return f"source {source!r}: write calibrated N=<runs> (e.g. 'calibrated N=40: worst 1068 x 0.95')"
        what = what[runs.end():]
    if not what.strip(" :;,"):
        return f"source {source!r} says which kind but not what: add the reference or why after it"
    return None


REMOVED_KEYS = {
    "window": "was removed: each test hands its criteria the windows they judge (measure, or event vs baseline) "
              "and every verdict names its window; delete the key",
}


class _FamilyModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str = ""
    checks: dict[str, _CheckModel]


class _SpecModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: Literal[1]
    description: str = ""
    families: dict[FamilyName, _FamilyModel]


@dataclass(frozen=True)
class Check:
    """One criterion with its bounds, as a family of tests applies it."""

    name: str
    family: str
    criterion: str
    params: CriterionParams
    description: str = ""
    where: str = ""  # file:line, for messages
    source: str = ""  # where its bound comes from (SOURCE_KINDS)

    def evaluate(self, *inputs: Any, **extra: Any) -> Verdict:
        """Run the criterion on the inputs with this check's bounds; `extra` adds
        per-test keywords (window, limit ...) or, named like a Params field
        (minimum, max_latency_ns ...), overrides that bound for this call."""
        fields = type(self.params).model_fields
        bounds = {key: value for key, value in extra.items() if key in fields}
        params = self.params.model_copy(update=bounds) if bounds else self.params
        keywords = {key: value for key, value in extra.items() if key not in fields}
        verdict = registry.get(self.criterion).evaluate(*inputs, params=params, **keywords)
        return dataclasses.replace(verdict, criterion=self.name, description=self.description,
                                   bound_source=self.bound_source(bounds), **judged_on(inputs))  # the run point it judged

    def bound_source(self, overridden: Mapping[str, Any] | None = None) -> str:
        """Where this verdict's bound comes from: the spec's source, unless the test set the bound itself."""
        if overridden:
            return f"set by the test ({', '.join(f'{key}={value!r}' for key, value in overridden.items())}), not the spec"
        return self.source

    def bound(self, key: str) -> Any:
        return getattr(self.params, key)


@dataclass(frozen=True)
class FamilySpec:
    name: str
    checks: Mapping[str, Check]
    description: str = ""
    path: Path | None = None

    def __getitem__(self, name: str) -> Check:
        try:
            return self.checks[name]
        except KeyError:
            raise LabFileError(f"{self.path}: family {self.name} has no check {name!r} (has: {', '.join(self.checks)})") from None

    def __iter__(self) -> Iterator[Check]:
        return iter(self.checks.values())

    def __len__(self) -> int:
        return len(self.checks)


@dataclass(frozen=True)
class AcceptanceSpec:
    path: Path
    families: Mapping[str, FamilySpec]
    description: str = ""

    def for_family(self, name: str) -> FamilySpec:
        """The checks of one family; a family the file leaves out has no checks."""
        if name not in FAMILIES:
            raise LabFileError(f"{self.path}: unknown test family {name!r} (families: {', '.join(FAMILIES)})")
        return self.families.get(name, FamilySpec(name, {}, path=self.path))


def load_spec(path: Path | str) -> AcceptanceSpec:
    """Load and validate a spec file; LabFileError names file:line of every mistake in it, one a line."""
    path = Path(path)
    data, lines = load_yaml(path)
    model = validate(_SpecModel, data, path, lines)
    families: dict[str, FamilySpec] = {}
    problems: list[str] = []  # per family: its checks' mistakes in file order, then what its tests cannot apply
    for family_name, family in model.families.items():
        checks: dict[str, Check] = {}
        for check_name, written in family.checks.items():
            check, found = _load_check(path, lines, family_name, check_name, written)
            problems += found
            if check is not None:
                checks[check_name] = check
        known = {name: c.criterion for name, c in family.checks.items() if c.criterion in registry.REGISTRY}
        problems += _use_problems(path, lines, family_name, known)
        families[family_name] = FamilySpec(family_name, checks, family.description, path)
    if problems:
        raise LabFileError("\n".join(problems))
    return AcceptanceSpec(path, families, model.description)


def _load_check(path: Path, lines: dict[Loc, int], family: str, name: str, written: _CheckModel) -> tuple[Check | None, list[str]]:
    """The check as the suite applies it, and every mistake in it (file:line each); None when it cannot be built."""
    loc: Loc = ("families", family, "checks", name)
    line = line_of(lines, (*loc, "criterion"))
    where = f"{path} line {line}" if line else str(path)
    if written.criterion not in registry.REGISTRY:
        return None, [_at(path, lines, (*loc, "criterion"), f"unknown criterion {written.criterion!r} "
                                                            f"(known: {', '.join(sorted(registry.REGISTRY))})")]
    bounds = dict(written.model_extra or {})
    found = [_at(path, lines, (*loc, key), why) for key, why in REMOVED_KEYS.items() if key in bounds]
    bounds_model = registry.get(written.criterion).params
    try:
        params = validate(bounds_model, {k: v for k, v in bounds.items() if k not in REMOVED_KEYS}, path, lines, prefix=loc)
    except LabFileError as refused:
        return None, [*found, *str(refused).splitlines()]
    named = [("", cases.problem(family, name)), ("source", _source_problem(written.source))]
    named += [(key, f"a {written.criterion} check in a spec needs {key}: {why}")
              for key, why in bounds_model.SPEC_REQUIRES.items() if bounds.get(key) is None]
    found += [_at(path, lines, (*loc, key) if key else loc, problem) for key, problem in named if problem]
    return Check(name, family, written.criterion, params, written.description, where, written.source), found


def _at(path: Path, lines: dict[Loc, int], loc: Loc, message: str) -> str:
    """"spec.yaml line 12: families.kpi.checks.x.key: message" (a key the file lacks: the line of its parent)."""
    line = line_of(lines, loc)
    return f"{path}{f' line {line}' if line else ''}: {'.'.join(map(str, loc))}: {message}"


def _use_problems(path: Path, lines: dict[Loc, int], family: str, checks: Mapping[str, str]) -> list[str]:
    """Every way the family's checks ({name: criterion}) break what its tests apply, at file:line, family and check
    (a missing check: the line of the family's checks)."""
    return [_at(path, lines, ("families", family, "checks", problem.check, *((problem.key,) if problem.key else ())), problem.message)
            for problem in family_uses.problems(family, checks)]


def load_named(name: str) -> AcceptanceSpec:
    """"poc" or "nightly" (the specs shipped in criteria/), or a path to another spec."""
    candidate = SPEC_DIR / f"{name}.yaml"
    return load_spec(candidate if candidate.exists() else Path(name))
