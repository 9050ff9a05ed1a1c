"""The lab-file reference and JSON Schema are generated from the models, and every field has a meaning."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel, Field

from iogate.lab import reference
from iogate.lab.model import Lab

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "labs" / "examples").glob("*.yaml"))


def test_committed_reference_is_the_generated_one() -> None:
    assert reference.MARKDOWN.read_text() == reference.render_markdown(), "run: python tools/lab_reference.py"


def test_committed_schema_is_the_generated_one() -> None:
    assert reference.SCHEMA.read_text() == reference.render_schema(), "run: python tools/lab_reference.py"


def test_every_field_has_a_meaning_and_every_note_a_field() -> None:
    assert reference.missing_descriptions() == []
    assert reference.orphan_notes() == []


def test_a_field_without_a_meaning_is_caught() -> None:
    class Undocumented(BaseModel):
        documented: int = Field(default=1, description="has one")
        bare: int = 2

    assert reference.missing_descriptions([Undocumented]) == [f"{__name__}.Undocumented.bare"]


def test_a_source_comment_is_a_meaning() -> None:
    class Commented(BaseModel):
        after: int = 1  # the comment on its line
        # the comment above it
        below: int = 2

    assert reference.description(Commented, "after") == "the comment on its line"
    assert reference.description(Commented, "below") == "the comment above it"


def test_reference_covers_every_key_users_asked_about() -> None:
    text = reference.MARKDOWN.read_text()
    for key in ("chap_user", "node_settings", "hostnqn", "datapath_limit_bytes_per_s", "tiles", "verify_tls", "nvme_traddr"):
        assert re.search(rf"^\| `{key}` \|", text, re.MULTILINE), key
    lab_rows = text.split("## Lab (top level)")[1].split("\n## ")[0]
    assert {m for m in re.findall(r"^\| `(\w+)` \|", lab_rows, re.MULTILINE)} == set(Lab.model_fields) - {"path"}


def test_schema_names_every_lab_key_and_each_driver_and_connector() -> None:
    schema = json.loads(reference.SCHEMA.read_text())
    assert set(schema["properties"]) == set(Lab.model_fields) - {"path"}
    assert schema["additionalProperties"] is False
    drivers = {rule["if"]["properties"]["driver"]["const"] for rule in schema["$defs"]["ArrayConfig"]["allOf"]}
    assert drivers == {"local", "linux_target", "static", "ontap", "pure", "powerstore", "vast", "huawei", "hitachi"}
    iscsi = schema["$defs"]["connector_iscsi_options"]["properties"]
    assert "chap_user" in iscsi and iscsi["chap_user"]["description"]


def test_example_labs_name_the_schema() -> None:
    assert len(EXAMPLES) >= 4
    for path in EXAMPLES:
        first = path.read_text().splitlines()[0]
        match = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
        assert match, f"{path.name}: first line {first!r}"
        assert (path.parent / match.group(1)).resolve() == reference.SCHEMA


def test_tool_check_passes_on_the_committed_files() -> None:
    done = subprocess.run([sys.executable, "tools/lab_reference.py", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
