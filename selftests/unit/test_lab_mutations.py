"""Mutated example labs are either loaded or refused with file:line, never a traceback.

Hypothesis takes the example labs (labs/examples/*.yaml, their secret references made
resolvable so a mutant is judged on its own content) and changes one thing: a key
deleted, renamed or added, a value replaced by one of another type or a tricky string
("false", "200", "${env:UNSET}"), an item of a list dropped or doubled, or the text itself
cut, a line dropped or doubled, or a character put in. load_lab must then return a Lab or
raise LabFileError whose every line names the file and a line; any other exception (a
KeyError, a TypeError, an AttributeError from a cross-check that trusted its input) fails.
The fixed-seed profile of selftests/conftest.py draws the same 2,000 mutants on every run.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iogate.errors import LabFileError
from iogate.lab import Lab, load_lab

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "labs" / "examples").glob("*.yaml"))
SECRET_VALUE = "mutation-secret-value"

TRICKY = ["false", "true", "200", "0", "-1", "100GiB", "4k", "1e400", "", " ", "${env:IOGATE_MUTATION_UNSET}",
          "${file:/nonexistent/secret}", "${env:}", "ssh://root:pw@h", "ssh://root@192.0.2.11", "local://", "/", "/etc",
          "iscsi", "nvme-tcp", "nfs", "block", "nbd", "fc", "multipath", "ontap", "pure", "local", "static", "chap_user",
          "curl -u admin:secret https://a/", "Bearer abc", "../..", "~", "null", "[]", "{}", "é", "\x00"]
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**15), 10**18), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.sampled_from(TRICKY),
    st.lists(st.sampled_from(TRICKY), max_size=3),
    st.dictionaries(st.sampled_from(["name", "connector", "size", "count", "chap_password", "x"]), st.sampled_from(TRICKY), max_size=3),
)
INSERTS = [":", "-", " ", "\t", "{", "[", "'", '"', "#", "&a", "*a", "!!python/object x", "\n"]
KEYS = st.one_of(st.text(min_size=1, max_size=10),
                 st.sampled_from(["name", "adress", "volumse", "verify_tls", "chap_password", "qos", "options", "size", "1", "true"]))


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    """(a directory for mutants, the example labs' texts with resolvable secret references)."""
    workdir = tmp_path_factory.mktemp("lab-mutations")
    secret = workdir / "secret"
    secret.write_text(SECRET_VALUE + "\n")
    texts = []
    with pytest.MonkeyPatch.context() as patch:
        for path in EXAMPLES:
            text = path.read_text()
            for name in re.findall(r"\$\{env:([^}]+)\}", text):
                patch.setenv(name, SECRET_VALUE)
            texts.append(re.sub(r"\$\{file:[^}]+\}", f"${{file:{secret}}}", text))
        yield workdir, texts


def _nodes(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _nodes(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _nodes(value, (*path, index))
    return found


def _parent(tree: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        tree = tree[part]
    return tree


def mutate_tree(data: st.DataObject, tree: dict[str, Any]) -> str:
    tree = copy.deepcopy(tree)
    path = data.draw(st.sampled_from(_nodes(tree)[1:]))
    parent, last = _parent(tree, path), path[-1]
    action = data.draw(st.sampled_from(["replace", "delete", "rename", "add", "double"]))
    if action == "replace":
        parent[last] = data.draw(VALUES)
    elif action == "delete":
        del parent[last]
    elif action == "rename" and isinstance(parent, dict):
        parent[data.draw(KEYS)] = parent.pop(last)
    elif action == "add" and isinstance(parent[last], dict):
        parent[last][data.draw(KEYS)] = data.draw(VALUES)
    elif action == "double" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    else:
        parent[last] = data.draw(VALUES)
    return yaml.safe_dump(tree, allow_unicode=True, sort_keys=False)


def mutate_text(data: st.DataObject, text: str) -> str:
    lines = text.splitlines(keepends=True)
    index = data.draw(st.integers(0, len(lines) - 1))
    action = data.draw(st.sampled_from(["cut", "drop", "double", "insert"]))
    if action == "cut":
        return text[: data.draw(st.integers(0, len(text)))]
    if action == "drop":
        return "".join(lines[:index] + lines[index + 1:])
    if action == "double":
        return "".join(lines[: index + 1] + lines[index:])
    at = data.draw(st.integers(0, len(text)))
    return text[:at] + data.draw(st.sampled_from(INSERTS)) + text[at:]


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_mutated_example_lab_loads_or_is_refused_with_file_and_line(bases: tuple[Path, list[str]], data: st.DataObject) -> None:
    workdir, texts = bases
    text = data.draw(st.sampled_from(texts))
    mutant = mutate_text(data, text) if data.draw(st.integers(0, 3)) == 0 else mutate_tree(data, yaml.safe_load(text))
    path = workdir / "mutant.yaml"
    path.write_text(mutant)
    try:
        lab = load_lab(path)
    except LabFileError as exc:
        for line in str(exc).split("\n"):
            assert re.match(rf"{re.escape(str(path))} line \d+: ", line), f"{line!r}\nmutant:\n{mutant}"
        return
    assert isinstance(lab, Lab)
