"""allure-results/environment.properties: the run's lab, array, versions as a table.

Written in Java properties syntax (what both Allure 2 and Allure 3 read):
separators and specials in keys escaped, values' backslashes and line breaks
escaped, anything outside ASCII as \\uXXXX so the file is the same under any
reader charset.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

_KEY_SPECIALS = {" ": "\\ ", "=": "\\=", ":": "\\:", "#": "\\#", "!": "\\!"}
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f"}


def _escape(text: str, *, key: bool) -> str:
    out = []
    for index, char in enumerate(text):
        if char == "\\":
            out.append("\\\\")
        elif char in _CONTROL:
            out.append(_CONTROL[char])
        elif key and char in _KEY_SPECIALS:
            out.append(_KEY_SPECIALS[char])
        elif not key and index == 0 and char in " #!":
            # A leading space would be eaten as separator padding; #/! only matter at line start of a key.
            out.append("\\" + char)
        elif ord(char) > 0x7E:
            out.append("".join(f"\\u{unit:04x}" for unit in _utf16_units(char)))
        else:
            out.append(char)
    return "".join(out)


def _utf16_units(char: str) -> list[int]:
    data = char.encode("utf-16-be")
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]


def properties_text(values: Mapping[str, Any]) -> str:
    """The properties file body; values become str (None -> empty)."""
    lines = []
    for key, value in values.items():
        if not str(key):
            raise ValueError("environment.properties: empty key")
        text = "" if value is None else str(value)
        lines.append(f"{_escape(str(key), key=True)}={_escape(text, key=False)}")
    return "\n".join(lines) + "\n"


def write_environment(results_dir: Path | str, values: Mapping[str, Any]) -> Path:
    """Write allure-results/environment.properties from a dict; returns its path."""
    path = Path(results_dir) / "environment.properties"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(properties_text(values), encoding="ascii")
    return path
