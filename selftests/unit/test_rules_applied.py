"""No acceptance test measures a run without handing it to the family layer that applies the rules every
family gets (iogate/judging/family_rules.py: I/O errors and stalls on every run, the recovery window of an event).

Read from the test modules' source: a test function that asks for `measure` or `during_load` must call one
of the family layer's entry points. A test that judged its own checks alone would silently drop the rules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[2] / "tests"
MEASURES = {"measure", "during_load"}
# The family layer's entry points, each applying the rules to what it is handed.
ENTRY_POINTS = {"run_verdicts", "rule_verdicts", "event_verdicts", "stepping_verdicts", "run_rules"}


def measuring_tests() -> list[tuple[str, ast.FunctionDef]]:
    found = []
    for path in sorted(TESTS.glob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and MEASURES & {a.arg for a in node.args.args}:
                found.append((f"{path.name}::{node.name}", node))
    return found


def calls(node: ast.FunctionDef) -> set[str]:
    return {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(node)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name | ast.Attribute)}


def test_the_suite_has_measuring_tests_to_check() -> None:
    assert len(measuring_tests()) >= 10  # baseline, sweep, tiles, 2 kpi, protocols, 2 scaling, 4 events


@pytest.mark.parametrize(("name", "node"), measuring_tests(), ids=[name for name, _ in measuring_tests()])
def test_every_measuring_test_hands_its_runs_to_the_family_layer(name: str, node: ast.FunctionDef) -> None:
    assert calls(node) & ENTRY_POINTS, f"{name} measures runs but calls none of {sorted(ENTRY_POINTS)}: the rules would not judge them"


def test_a_test_judging_its_own_checks_alone_is_found() -> None:
    source = "def test_x(measure, judge, spec):\n    judge(c.evaluate(measure(p)) for c in spec.for_family('baseline'))\n"
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef) and not calls(node) & ENTRY_POINTS
