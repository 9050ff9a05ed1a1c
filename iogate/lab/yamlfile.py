"""Load YAML validated by a pydantic model; errors name file, line and field.

Shared by lab files, criteria specs and workload catalogs, so every malformed
file a user writes fails the same way: "labs/x.yaml line 12: hosts.0.transport:
...", before anything is provisioned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from iogate.errors import LabFileError

Model = TypeVar("Model", bound=BaseModel)
Loc = tuple[str | int, ...]


def _walk(node: yaml.Node, loc: Loc, lines: dict[Loc, int], loader: yaml.SafeLoader) -> Any:
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise LabFileError(f"line {key_node.start_mark.line + 1}: a mapping key must be a plain value, not {key!r}")
            if key in out:
                # YAML keeps the last of two equal keys silently: half of what the user wrote would vanish.
                raise LabFileError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r} (first on line {lines[(*loc, key)]})")
            out[key] = _walk(value_node, (*loc, key), lines, loader)
            lines[(*loc, key)] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_walk(item, (*loc, index), lines, loader) for index, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


def load_yaml(path: Path) -> tuple[Any, dict[Loc, int]]:
    """Parse a YAML file into plain data plus a map from field path to line number."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise LabFileError(f"{path}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise LabFileError(f"{path}: not a text file (byte {exc.start} is not UTF-8)") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise LabFileError(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from exc
    lines: dict[Loc, int] = {}
    try:
        data = _walk(root, (), lines, yaml.SafeLoader("")) if root is not None else {}
    except LabFileError as exc:
        raise LabFileError(f"{path} {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise LabFileError(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from exc
    return data, lines


def line_of(lines: dict[Loc, int], loc: Loc) -> int | None:
    """The line of the deepest part of loc the file has (a missing key: its parent)."""
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in lines:
            return lines[loc[:cut]]
    return None


def format_validation_error(path: Path, exc: ValidationError, lines: dict[Loc, int], prefix: Loc = ()) -> str:
    messages = []
    for error in exc.errors():
        loc = (*prefix, *[part for part in error["loc"] if not (isinstance(part, str) and part.startswith("function-"))])
        line = line_of(lines, loc)
        field = ".".join(str(part) for part in loc) or "(top level)"
        messages.append(f"{path}{f' line {line}' if line else ''}: {field}: {error['msg']}")
    return "\n".join(messages)


def validate(model: type[Model], data: Any, path: Path, lines: dict[Loc, int], prefix: Loc = ()) -> Model:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise LabFileError(format_validation_error(path, exc, lines, prefix)) from None


def load_model(model: type[Model], path: Path) -> Model:
    data, lines = load_yaml(path)
    return validate(model, data, path, lines)
