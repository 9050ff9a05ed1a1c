"""Contract from a published Swagger 2.0 (ONTAP) or OpenAPI 3 (Pure) description.

A request is valid when the spec has its path (templates match one segment per
{parameter}) and method, each query key is a declared query parameter, and each
JSON body field (nested too) is a property of the request schema and not
readOnly. A response is valid when its status is declared (or `default` for an
error, or the spec's generic error schema when the operations declare no error
status) and each field of its body is a property of that response's schema.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import yaml

from selftests.vendors.server import Reply, Request


@functools.cache
def load_spec(path: Path) -> dict[str, Any]:
    with path.open() as handle:
        return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


class OpenApiContract:
    def __init__(
        self,
        spec: dict[str, Any],
        base_path: str = "",
        extra_fields: dict[str, set[str]] | None = None,
        error_schema: str | None = None,
        next_link_prefix: str | None = None,
    ) -> None:
        self.spec = spec
        # Query keys of a GET that a description's paging notes give its next links (ONTAP: "start.<key>"), not its parameters.
        self.next_link_prefix = next_link_prefix
        # A spec that declares no error statuses per operation (Pure: only 200/207) still defines the error body.
        self.error_schema = {"$ref": error_schema} if error_schema else None
        self.base = base_path
        self.swagger2 = "swagger" in spec
        # Fields the driver sends that a newer API version added (documented in the report), keyed by schema path.
        self.extra_fields = extra_fields or {}
        self.templates = []
        for template in spec["paths"]:
            pattern = "^" + "[^/]+".join(re.escape(p) for p in re.split(r"\{[^}]+\}", self.base + template)) + "$"
            literal = len(re.sub(r"\{[^}]+\}", "", template))
            self.templates.append((literal, template, re.compile(pattern)))
        self.templates.sort(key=lambda t: -t[0])  # the most literal match wins (/luns/{uuid} vs /luns/{uuid}/metrics)

    def _ref(self, node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            target: Any = self.spec
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    def _operation(self, request: Request) -> tuple[str, dict[str, Any]] | None:
        for _, template, regex in self.templates:
            if regex.match(request.path):
                item = self.spec["paths"][template]
                op = item.get(request.method.lower())
                return (template, op) if op is not None else (template, {})
        return None

    def _params(self, template: str, op: dict[str, Any]) -> list[dict[str, Any]]:
        shared = self.spec["paths"][template].get("parameters", [])
        return [self._ref(p) for p in shared + op.get("parameters", [])]

    def _properties(self, schema: Any) -> tuple[dict[str, Any], bool]:
        """Properties of a schema (allOf merged) and whether it is open (additionalProperties)."""
        schema = self._ref(schema) or {}
        props: dict[str, Any] = dict(schema.get("properties", {}))
        open_ = bool(schema.get("additionalProperties")) or (
            not props and not schema.get("allOf") and schema.get("type") in (None, "object") and "items" not in schema
        )
        for part in schema.get("allOf", []):
            more, more_open = self._properties(part)
            props.update(more)
            open_ = open_ or more_open
        return props, open_

    def _check_body(self, schema: Any, body: Any, where: str, request: bool) -> list[str]:
        schema = self._ref(schema) or {}
        problems: list[str] = []
        if isinstance(body, list):
            items = schema.get("items", {})
            for item in body:
                problems += self._check_body(items, item, where.rstrip(".") + "[].", request)
            return problems
        if not isinstance(body, dict):
            return problems
        props, open_ = self._properties(schema)
        if open_:
            return problems
        allowed_extra = self.extra_fields.get(where, set())
        for key, value in body.items():
            if key not in props:
                if key not in allowed_extra:
                    problems.append(f"field {where}{key} is not defined by the spec")
                continue
            prop = self._ref(props[key])
            if request and prop.get("readOnly"):
                problems.append(f"field {where}{key} is readOnly in the spec")
            problems += self._check_body(prop, value, f"{where}{key}.", request)
        return problems

    def check_request(self, request: Request) -> list[str]:
        found = self._operation(request)
        if found is None:
            return ["no such path in the spec"]
        template, op = found
        if not op:
            return [f"the spec has no {request.method} on {template}"]
        params = self._params(template, op)
        query = {p["name"] for p in params if p.get("in") == "query"}
        paging = self.next_link_prefix if request.method == "GET" else None
        problems = [
            f"query parameter {key!r} is not declared for {request.method} {template}"
            for key in request.query
            if key not in query and not (paging and key.startswith(paging))
        ]
        # netapp-ontap sends {} as the body of every DELETE: an empty object names no field, so it is no body.
        if request.body is not None and request.body != {}:
            if self.swagger2:
                schema = next((p.get("schema") for p in params if p.get("in") == "body"), None)
            else:
                schema = self._ref(op.get("requestBody", {})).get("content", {}).get("application/json", {}).get("schema")
            if schema is None:
                problems.append(f"{request.method} {template} takes no JSON body")
            else:
                problems += self._check_body(schema, request.body, "", True)
        return problems

    def check_response(self, request: Request, reply: Reply) -> list[str]:
        found = self._operation(request)
        if found is None or not found[1]:
            return []
        template, op = found
        responses = op.get("responses", {})
        declared = responses.get(str(reply.status)) or responses.get(reply.status)
        if declared is None:
            if reply.status >= 400 and "default" in responses:
                declared = responses["default"]
            elif reply.status >= 400 and self.error_schema is not None:
                return self._check_body(self.error_schema, reply.body, "response.", False)
            else:
                return [f"status {reply.status} is not declared for {request.method} {template} ({sorted(map(str, responses))})"]
        declared = self._ref(declared)
        if self.swagger2:
            schema = declared.get("schema")
        else:
            schema = declared.get("content", {}).get("application/json", {}).get("schema")
        if reply.body is None or schema is None:
            return [] if reply.body is None else [f"status {reply.status} of {request.method} {template} has no body in the spec"]
        return self._check_body(schema, reply.body, "response.", False)
