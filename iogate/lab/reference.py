"""The lab-file reference (docs/lab-reference.md) and JSON Schema (labs/lab.schema.json), both from the models.

One source: the pydantic models of the lab (iogate.lab.model), of every array driver's
options and of every connector's options. A field's one-line meaning is its
`Field(description=...)`, else the comment on its line or the comment lines right above
it in the model's source, else its note in iogate.lab.field_notes (driver and connector
options whose modules give none). tools/lab_reference.py writes both files; a self-test holds the committed files
equal to these and fails on a field without a meaning.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import json
import textwrap
import tokenize
import types
from functools import cache
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from iogate.lab import model
from iogate.lab.field_notes import EXAMPLES, NOTES
from iogate.lab.registry import ARRAY_DRIVERS, CONNECTORS

ROOT = Path(__file__).resolve().parents[2]
MARKDOWN = ROOT / "docs" / "lab-reference.md"
SCHEMA = ROOT / "labs" / "lab.schema.json"
LAB_MODELS: tuple[type[BaseModel], ...] = (model.Lab, model.ArrayConfig, model.HostConfig, model.HostSet, model.ProtocolConfig,
                                           model.VolumeSet, model.QoS, model.DeviceIdentity, model.HostLiveness)
# Where a driver's example options come from (the example column), beside the field's own examples.
EXAMPLE_LABS = {"local": "labs/local.yaml", "linux_target": "labs/labvm.yaml", "static": "labs/examples/static.yaml",
                "ontap": "labs/examples/ontap.yaml", "pure": "labs/examples/pure.yaml", "powerstore": "labs/examples/powerstore.yaml"}


def _load(spec: str) -> Any:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def driver_options() -> dict[str, type[BaseModel]]:
    return {name: _load(spec).Options for name, spec in ARRAY_DRIVERS.items()}


def connector_options() -> dict[str, type[BaseModel]]:
    return {name: _load(spec).Options for name, spec in CONNECTORS.items()}


@cache
def _source_comments(cls: type) -> dict[str, str]:
    """field name -> the comment on its line, else the comment lines right above it, in cls's own source."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
    lines = source.splitlines()
    found: dict[str, str] = {}
    (node,) = ast.parse(source).body
    assert isinstance(node, ast.ClassDef)
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            end = statement.end_lineno or statement.lineno
            text = next((comments[n] for n in range(statement.lineno, end + 1) if n in comments), "")
            if not text:
                above, number = [], statement.lineno - 1
                while number in comments and lines[number - 1].strip().startswith("#"):
                    above.insert(0, comments[number])
                    number -= 1
                text = " ".join(above)
            if text:
                found[statement.target.id] = text
    return found


def description(cls: type[BaseModel], name: str) -> str:
    """The field's one-line meaning: its Field description, else its source comment (the class that declares it)."""
    field = cls.model_fields[name]
    if field.description:
        return " ".join(field.description.split())
    for klass in cls.__mro__:
        if name in getattr(klass, "__annotations__", {}):
            return _source_comments(klass).get(name, "") or NOTES.get(f"{klass.__name__}.{name}", "")
    return ""


def declaring_class(cls: type[BaseModel], name: str) -> type:
    return next(klass for klass in cls.__mro__ if name in getattr(klass, "__annotations__", {}))


def orphan_notes() -> list[str]:
    """Notes in field_notes.NOTES whose field no model declares any more."""
    declared = {f"{declaring_class(cls, name).__name__}.{name}"
                for cls in [*driver_options().values(), *connector_options().values()] for name in cls.model_fields}
    return sorted((set(NOTES) | set(EXAMPLES)) - declared)


def missing_descriptions(models: list[type[BaseModel]] | None = None) -> list[str]:
    """Every model field a user can write that has no meaning: `module.Model.field` each."""
    models = models if models is not None else [*LAB_MODELS, *driver_options().values(), *connector_options().values()]
    return [f"{cls.__module__}.{cls.__name__}.{name}" for cls in models for name in _fields(cls) if not description(cls, name)]


def _fields(cls: type[BaseModel]) -> list[str]:
    hidden = getattr(cls, "internal_fields", frozenset())
    return [name for name in cls.model_fields if name not in hidden]


def type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return " | ".join(type_name(a) for a in get_args(annotation))
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in get_args(annotation))
    if origin in (list, dict, tuple):
        return f"{origin.__name__}[{', '.join(type_name(a) for a in get_args(annotation))}]"
    if annotation is type(None):
        return "null"
    if annotation is Any:
        return "any"
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _value(value: Any) -> str:
    if isinstance(value, BaseModel):
        return json.dumps(value.model_dump(mode="json", exclude_none=True))
    return json.dumps(value)


def default_text(cls: type[BaseModel], name: str) -> str:
    field = cls.model_fields[name]
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        return _value(field.default_factory())  # type: ignore[call-arg]
    return _value(field.default) if field.default is not PydanticUndefined else "required"


@cache
def _example_options(driver: str) -> dict[str, Any]:
    path = ROOT / EXAMPLE_LABS.get(driver, f"labs/examples/{driver}.yaml")  # a vendor driver: its example lab
    data = yaml.safe_load(path.read_text()) if path.exists() else {}
    return dict((data or {}).get("array", {}).get("options", {}) or {})


def example_text(cls: type[BaseModel], name: str, driver: str | None = None) -> str:
    field = cls.model_fields[name]
    if field.examples:
        return _value(field.examples[0])
    noted = f"{declaring_class(cls, name).__name__}.{name}"
    if noted in EXAMPLES:
        return _value(EXAMPLES[noted])
    if driver and name in _example_options(driver):
        return _value(_example_options(driver)[name])
    default = default_text(cls, name)
    return default if default not in ("required", "null", "[]", "{}", '""') else "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(cls: type[BaseModel], driver: str | None = None) -> list[str]:
    rows = ["| key | type | default | meaning | example |", "|---|---|---|---|---|"]
    for name in _fields(cls):
        field = cls.model_fields[name]
        rows.append(f"| `{name}` | {_cell(type_name(field.annotation))} | `{_cell(default_text(cls, name))}` | "
                    f"{_cell(description(cls, name))} | `{_cell(example_text(cls, name, driver))}` |")
    return rows


def render_markdown() -> str:
    out = [
        "# Lab file reference",
        "",
        "Generated from the models by `python tools/lab_reference.py` (do not edit by hand; a self-test compares).",
        "A lab file is YAML; `iogate lab check FILE` validates it and prints the run's plan. Editors that speak the",
        "YAML language server check a lab as it is typed when its first line is",
        "`# yaml-language-server: $schema=<path to>/labs/lab.schema.json`. Credentials are always references,",
        "`${env:NAME}` or `${file:PATH}`, never the secret itself. Sizes carry a unit (`100GiB`, `512MiB`).",
        "",
    ]
    for cls in LAB_MODELS:
        title = "Lab (top level)" if cls is model.Lab else cls.__name__
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
        out += [f"## {title}", "", *([doc, ""] if doc else []), *_table(cls), ""]
    out += ["## Array drivers: `array.options`", "", "`array.driver` picks one of these tables for `array.options`.", ""]
    for name, options in driver_options().items():
        out += [f"### driver `{name}`", "", *_table(options, name), ""]
    out += ["## Connectors: `protocols[].options`", "", "`protocols[].connector` picks one of these tables for its `options`.", ""]
    for name, options in connector_options().items():
        out += [f"### connector `{name}`", "", *_table(options), ""]
    return "\n".join(out).rstrip() + "\n"


def _describe(schema: dict[str, Any], cls: type[BaseModel]) -> dict[str, Any]:
    for name, prop in schema.get("properties", {}).items():
        if name in cls.model_fields and "description" not in prop:
            text = description(cls, name)
            if text:
                prop["description"] = text
    return schema


def _model_schema(cls: type[BaseModel]) -> dict[str, Any]:
    schema = cls.model_json_schema(ref_template="#/$defs/{model}")
    defs = schema.pop("$defs", {})
    for sub in defs.values():
        match = next((m for m in _all_models() if m.__name__ == sub.get("title")), None)
        if match is not None:
            _describe(sub, match)
    return {**_describe(schema, cls), "$defs": defs} if defs else _describe(schema, cls)


@cache
def _all_models() -> tuple[type[BaseModel], ...]:
    found: list[type[BaseModel]] = [*LAB_MODELS, *driver_options().values(), *connector_options().values()]
    for cls in list(found):
        for field in cls.model_fields.values():
            for arg in [field.annotation, *get_args(field.annotation)]:
                for inner in [arg, *get_args(arg)]:
                    if isinstance(inner, type) and issubclass(inner, BaseModel) and inner not in found:
                        found.append(inner)
    return tuple(found)


def render_schema() -> str:
    schema = _model_schema(model.Lab)
    schema["properties"].pop("path", None)
    defs = schema.setdefault("$defs", {})
    branches = {"ArrayConfig": ("driver", driver_options()), "ProtocolConfig": ("connector", connector_options())}
    for holder, (key, tables) in branches.items():
        rules = []
        for name, options in tables.items():
            sub = _model_schema(options)
            for def_name, definition in sub.pop("$defs", {}).items():
                defs.setdefault(def_name, definition)
            ref = f"{key}_{name}_options"
            defs[ref] = sub
            rules.append({"if": {"properties": {key: {"const": name}}, "required": [key]},
                          "then": {"properties": {"options": {"$ref": f"#/$defs/{ref}"}}}})
        defs[holder]["allOf"] = rules
    # `hosts` is a list or, on a netns lab, a HostSet the loader expands (Lab's before-validator): both are valid.
    hostset = _model_schema(model.HostSet)
    defs.update(hostset.pop("$defs", {}))
    defs["HostSet"] = hostset
    schema["properties"]["hosts"] = {"description": schema["properties"]["hosts"].get("description", ""),
                                     "anyOf": [{k: v for k, v in schema["properties"]["hosts"].items() if k != "description"},
                                               {"$ref": "#/$defs/HostSet"}]}
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    schema["title"] = "IOGate lab file"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
