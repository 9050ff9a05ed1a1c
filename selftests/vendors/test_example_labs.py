"""The example vendor labs load through the lab loader; mistakes name file and line."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from iogate.errors import ArrayError, LabFileError
from iogate.lab import load_lab

pytestmark = pytest.mark.vendors
EXAMPLES = Path(__file__).resolve().parents[2] / "labs" / "examples"
VENDORS = ("hitachi", "huawei", "ontap", "powerstore", "pure", "vast")
VENDOR_LABS = sorted(p for p in EXAMPLES.glob("*.yaml") if p.stem in VENDORS)


def test_every_vendor_driver_has_an_example_lab() -> None:
    assert [p.stem for p in VENDOR_LABS] == list(VENDORS)


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


# driver -> (the SDK's import name, the package to install, options beyond management and password)
SDKS = {
    "pure": ("pypureclient", "py-pure-client", {}),
    "ontap": ("netapp_ontap", "netapp-ontap", {"svm": "svm1", "flexvol": "vol1"}),
    "powerstore": ("PyPowerStore", "PyPowerStore", {"username": "u", "iscsi_portal": "192.0.2.2:3260", "iscsi_target_iqn": "iqn.x"}),
}


def _sdk_connect(driver: str, monkeypatch: pytest.MonkeyPatch) -> Callable[[], object]:
    """The connect the driver's setup() and `iogate cleanup` use, with the lab's options (no array answers)."""
    module = importlib.import_module(f"iogate.arrays.{driver}")
    cls = getattr(module, {"pure": "Pure", "ontap": "Ontap", "powerstore": "PowerStore"}[driver])
    monkeypatch.setenv("IOGATE_SDK_TEST_SECRET", "sdk-test-secret")
    base = {"management": "192.0.2.1", "username": "iogate", "password": "${env:IOGATE_SDK_TEST_SECRET}"}
    options = cls.Options.model_validate({**base, **SDKS[driver][2]})
    return lambda: cls.sdk.connect(options, f"{driver}-1")


@pytest.mark.parametrize("driver", sorted(SDKS))
def test_a_missing_sdk_is_an_array_error_naming_the_package_and_the_driver(driver: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module, package, _ = SDKS[driver]
    connect = _sdk_connect(driver, monkeypatch)
    monkeypatch.setitem(sys.modules, module, None)  # as if the SDK were not installed: importing it raises ModuleNotFoundError
    with pytest.raises(ArrayError) as failed:
        connect()
    assert str(failed.value) == (
        f"array driver {driver} (the lab's array.driver) needs the vendor SDK {package}, which is not installed:"
        f" pip install -r requirements-vendors.txt (or pip install {package})"
    )  # not "login failed": nothing was sent


def test_an_sdk_that_is_installed_but_does_not_import_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    connect = _sdk_connect("pure", monkeypatch)
    real_import = importlib.import_module

    def broken(name: str, package: str | None = None) -> object:
        if name == "pypureclient":
            raise ModuleNotFoundError("No module named 'urllib3'", name="urllib3")  # one of the SDK's own dependencies
        return real_import(name, package)

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ArrayError, match=r"^array driver pure: the vendor SDK py-pure-client is installed but does not import: No module"):
        connect()


def test_an_unresolved_credential_reference_is_not_reported_as_a_login_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pypureclient", reason="vendor SDK not installed: pip install -r requirements-vendors.txt")
    connect = _sdk_connect("pure", monkeypatch)
    monkeypatch.delenv("IOGATE_SDK_TEST_SECRET")
    with pytest.raises(ArrayError, match=r"^array credentials: .*IOGATE_SDK_TEST_SECRET") as failed:
        connect()
    assert "login" not in str(failed.value)
