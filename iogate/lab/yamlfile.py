"""Load YAML validated by a pydantic model; errors name file, line and field.

Shared by lab files, criteria specs and workload catalogs, so every malformed
file a user writes fails the same way: "labs/x.yaml line 12: hosts.0.transport:
...", before anything is provisioned.
"""

from __future__ import annotations

import difflib
import types
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin

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


def field_path(loc: Loc) -> str:
    """hosts.0.name; a key that would not print as itself (a control character, a line break) is quoted."""
    return ".".join(str(part) if str(part).isprintable() and str(part) else repr(part) for part in loc) or "(top level)"


def line_of(lines: dict[Loc, int], loc: Loc) -> int | None:
    """The line of the deepest part of loc the file has (a missing key: its parent)."""
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in lines:
            return lines[loc[:cut]]
    return None


def _unwrap(annotation: Any) -> Any:
    """X | None -> X; list[X] and dict[str, X] stay (the walk below steps into them)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        return members[0] if len(members) == 1 else annotation
    return annotation


def allowed_keys(model: type[BaseModel], loc: Loc) -> list[str] | None:
    """The keys the model takes in the mapping at loc (None where loc is not a model's mapping)."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                return None
            current = field.annotation
        elif get_origin(current) is list and isinstance(part, int):
            current = get_args(current)[0]
        elif get_origin(current) is dict:
            current = get_args(current)[1]
        else:
            return None
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        hidden = getattr(current, "internal_fields", frozenset())
        return [name for name in current.model_fields if name not in hidden]
    return None


def unknown_key_message(key: object, allowed: list[str] | None) -> str:
    """`Extra inputs are not permitted: unknown key 'volumse'; did you mean 'volumes'? allowed here: ...`
    (the nearest match by difflib)."""
    if not allowed:
        return f"Extra inputs are not permitted: unknown key {key!r}"
    nearest = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
    hint = f"; did you mean {nearest[0]!r}?" if nearest else ""
    return f"Extra inputs are not permitted: unknown key {key!r}{hint} (allowed here: {', '.join(allowed)})"


def _message(error: Any, model: type[BaseModel] | None, loc: Loc) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return unknown_key_message(loc[-1], allowed_keys(model, loc[:-1]) if model else None)
    name = str(loc[-1]) if loc else ""
    given = error.get("input")
    if kind == "string_type" and "size" in name and isinstance(given, int | float) and not isinstance(given, bool):
        return f"{given!r} has no unit: a size needs one, e.g. {given}GiB (units k/KiB, m/MiB, g/GiB, t/TiB; valid string required)"
    if kind == "missing":
        return "Field required (this key must be given)"
    return str(error["msg"]).removeprefix("Value error, ")  # the model's own sentence says what is wrong


def format_validation_error(path: Path, exc: ValidationError, lines: dict[Loc, int], prefix: Loc = (),
                            model: type[BaseModel] | None = None) -> str:
    messages = []
    for error in exc.errors():
        inner = tuple(part for part in error["loc"] if not (isinstance(part, str) and part.startswith("function-")))
        loc = (*prefix, *inner)
        line = line_of(lines, loc)
        field = field_path(loc)
        messages.append(f"{path}{f' line {line}' if line else ''}: {field}: {_message(error, model, inner)}")
    return "\n".join(messages)


def validate(model: type[Model], data: Any, path: Path, lines: dict[Loc, int], prefix: Loc = ()) -> Model:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise LabFileError(format_validation_error(path, exc, lines, prefix, model)) from None


def load_model(model: type[Model], path: Path) -> Model:
    data, lines = load_yaml(path)
    return validate(model, data, path, lines)
