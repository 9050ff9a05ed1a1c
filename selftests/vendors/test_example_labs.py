"""The example vendor labs load through the lab loader; mistakes name file and line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from iogate.errors import LabFileError
from iogate.lab import load_lab

pytestmark = pytest.mark.vendors
EXAMPLES = Path(__file__).resolve().parents[2] / "labs" / "examples"
VENDOR_LABS = sorted(p for p in EXAMPLES.glob("*.yaml") if p.stem in ("powerstore", "ontap", "pure"))


def test_every_vendor_driver_has_an_example_lab() -> None:
    assert [p.stem for p in VENDOR_LABS] == ["ontap", "powerstore", "pure"]


def with_secrets_present(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example whose secret references resolve: the loader refuses one that does not
    (env variables set for the test, ${file:...} pointed at a file in tmp_path)."""
    text = path.read_text()
    for name in re.findall(r"\$\{env:([^}]+)\}", text):
        monkeypatch.setenv(name, "example-secret-value")
    for index, target in enumerate(re.findall(r"\$\{file:([^}]+)\}", text)):
        stand_in = tmp_path / f"secret-{index}"
        stand_in.write_text("example-secret-value\n")
        text = text.replace(f"${{file:{target}}}", f"${{file:{stand_in}}}")
    copy = tmp_path / path.name
    copy.write_text(text)
    return copy


@pytest.mark.parametrize("path", VENDOR_LABS, ids=lambda p: p.stem)
def test_example_lab_loads(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lab = load_lab(with_secrets_present(path, tmp_path, monkeypatch))
    assert lab.array.driver == path.stem
    assert lab.array.options["password"].startswith("${")


@pytest.mark.parametrize("path", VENDOR_LABS, ids=lambda p: p.stem)
def test_an_inline_password_is_refused_with_file_and_line(path: Path, tmp_path: Path) -> None:
    lines = path.read_text().splitlines()
    (number,) = [i for i, line in enumerate(lines) if line.strip().startswith("password:")]
    lines[number] = lines[number].split("password:")[0] + "password: Sup3rSecret-inline"
    broken = tmp_path / path.name
    broken.write_text("\n".join(lines) + "\n")
    with pytest.raises(LabFileError) as refused:
        load_lab(broken)
    message = str(refused.value)
    assert f"{broken} line {number + 1}" in message and "password" in message and "by reference" in message
    assert "Sup3rSecret-inline" not in message


@pytest.mark.parametrize("path", VENDOR_LABS, ids=lambda p: p.stem)
def test_an_unknown_option_is_refused_with_file_and_line(path: Path, tmp_path: Path) -> None:
    text = path.read_text().replace("    management:", "    managment_typo: x\n    management:", 1)
    broken = tmp_path / path.name
    broken.write_text(text)
    with pytest.raises(LabFileError, match=rf"{broken} line \d+.*managment_typo"):
        load_lab(broken)


def test_a_missing_sdk_is_an_array_error_naming_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from iogate.arrays import pure
    from iogate.errors import ArrayError

    monkeypatch.setitem(sys.modules, "pypureclient", None)  # as if py-pure-client were not installed
    options = pure.PureOptions.model_validate({"management": "192.0.2.1", "password": "${env:UNSET_FOR_THIS_TEST}"})
    with pytest.raises(ArrayError, match=r"array driver pure needs the vendor SDK py-pure-client: pip install -r requirements-vendors.txt"):
        pure.connect(options)
