"""No acceptance test judges for itself: it builds evidence and hands it to the judge, which applies the rules.

Read from the test modules' source. A test function that asks for `measure` or `during_load` must hand its
evidence to one of the `judge` fixture's methods (plugins/verdicts.py Judge -> iogate/judging/judge.py
SpecJudge), each of which applies the rules every family gets (I/O errors and stalls on every run, the recovery
window of an event, expected points, comparands). No module in tests/ imports a criterion, a family or the
spec loader (only iogate.judging.evidence, the evidence types), and none names a criterion or a check-name
prefix: which check judges what is decided in the library, never by a test's branch.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from iogate.events.model import ActionName
from iogate.judging import families, registry

TESTS = Path(__file__).resolve().parents[2] / "tests"
MEASURES = {"measure", "during_load"}
# The judge's methods that take evidence, each applying the rules to what it is handed.
ENTRY_POINTS = {"run", "rules", "curve", "targets", "speed", "throughput", "protocols", "events", "scaling", "datapath"}
ALLOWED_JUDGING = {"iogate.judging.evidence"}
PREFIXES = (families.SNAPSHOT, families.DEDUPE, families.REPLICA, families.MIRROR_FRONTEND_WRITE, families.MIRROR_BACKEND_WRITE,
            families.SPEED, families.THROUGHPUT)


def modules() -> list[tuple[str, ast.Module]]:
    return [(path.name, ast.parse(path.read_text())) for path in sorted(TESTS.glob("*.py"))]


def measuring_tests() -> list[tuple[str, ast.FunctionDef]]:
    found = []
    for name, tree in modules():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and MEASURES & {a.arg for a in node.args.args}:
                found.append((f"{name}::{node.name}", node))
    return found


def judge_calls(node: ast.AST) -> set[str]:
    """The methods called on the name `judge`: judge.run(...), judge.events(...) ..."""
    return {n.func.attr for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "judge"}


def judging_imports(tree: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} if node.module != "iogate.judging" else {f"iogate.judging.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m.startswith(("iogate.judging", "criteria"))}


def named_checks(tree: ast.Module) -> set[str]:
    """String constants naming a criterion, a rule's check or a check-name prefix (an event's action name,
    snapshot_create or dedupe_run, is what the test does, not a check)."""
    names = set(registry.REGISTRY) | {families.NO_ERRORS, families.STALL, families.SLOW_HOST, families.LINEAR, families.DATAPATH}
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and (n.value in names or n.value.startswith(PREFIXES)) and n.value not in ActionName.__args__}


def test_the_suite_has_measuring_tests_to_check() -> None:
    assert len(measuring_tests()) >= 10  # baseline, sweep, tiles, 2 kpi, protocols, 2 scaling, 4 events


@pytest.mark.parametrize(("name", "node"), measuring_tests(), ids=[name for name, _ in measuring_tests()])
def test_every_measuring_test_hands_its_evidence_to_the_judge(name: str, node: ast.FunctionDef) -> None:
    assert judge_calls(node) & ENTRY_POINTS, f"{name} measures runs but hands none to judge.{sorted(ENTRY_POINTS)}"


@pytest.mark.parametrize(("name", "tree"), modules(), ids=[name for name, _ in modules()])
def test_no_test_module_imports_a_criterion_or_family(name: str, tree: ast.Module) -> None:
    assert judging_imports(tree) <= ALLOWED_JUDGING, f"tests/{name} imports {sorted(judging_imports(tree) - ALLOWED_JUDGING)}"


@pytest.mark.parametrize(("name", "tree"), modules(), ids=[name for name, _ in modules()])
def test_no_test_module_names_a_criterion_or_check(name: str, tree: ast.Module) -> None:
    assert not named_checks(tree), f"tests/{name} names {sorted(named_checks(tree))}: the judge picks the checks"


def test_a_test_judging_its_own_checks_alone_is_found() -> None:
    source = ("from iogate.judging import latency_bound\n"
              "def test_x(measure, judge, spec):\n"
              "    judge(c.evaluate(measure(p)) for c in spec.for_family('baseline') if c.criterion == 'latency_bound')\n")
    tree = ast.parse(source)
    node = tree.body[1]
    assert isinstance(node, ast.FunctionDef) and not judge_calls(node) & ENTRY_POINTS
    assert judging_imports(tree) == {"iogate.judging.latency_bound"}
    assert named_checks(tree) == {"latency_bound"}
