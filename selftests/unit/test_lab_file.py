"""A malformed lab file fails with file, line and field, before anything is provisioned."""

import re
from pathlib import Path

import pytest

from iogate.errors import LabFileError
from iogate.lab import DEFAULT_LAB, load_lab

GOOD = DEFAULT_LAB.read_text()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lab.yaml"
    path.write_text(text)
    return path


def test_default_lab_loads() -> None:
    lab = load_lab()
    assert lab.name == "local"
    assert lab.baseline == "block"
    assert [p.name for p in lab.protocols] == ["block", "nbd"]


def test_wrong_type_names_file_line_and_field(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("  count: 2", "  count: two"))
    with pytest.raises(LabFileError) as info:
        load_lab(path)
    line = GOOD.splitlines().index("  count: 2") + 1
    assert f"{path} line {line}: volumes.count:" in str(info.value)


def test_unknown_driver_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("driver: local", "driver: netapp9000"))
    with pytest.raises(LabFileError, match=r"line \d+: array.driver: unknown array driver 'netapp9000'"):
        load_lab(path)


def test_bad_driver_option_is_caught_at_load(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("pool_fs: xfs", "pool_fs: ntfs"))
    line = GOOD.splitlines().index("    pool_fs: xfs") + 1
    with pytest.raises(LabFileError, match=rf"line {line}: array.options.pool_fs:"):
        load_lab(path)


def test_missing_key_points_at_parent(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("  - name: localhost\n", "  - transport_typo: 1\n"))
    with pytest.raises(LabFileError, match=r"hosts.0.name: Field required"):
        load_lab(path)


def test_yaml_syntax_error_has_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "hosts: [unclosed\n")
    with pytest.raises(LabFileError, match=r"line \d+: not valid YAML"):
        load_lab(path)


def test_baseline_must_be_a_protocol(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("baseline_protocol: block", "baseline_protocol: fc"))
    with pytest.raises(LabFileError, match="baseline_protocol 'fc' is not one of the protocols"):
        load_lab(path)


def test_malformed_lab_rejected_by_pytest_before_provisioning(tmp_path: Path) -> None:
    """The pytest layer turns the error into a usage error: no run directory is created."""
    import subprocess
    import sys

    work = tmp_path / "work"
    path = write(tmp_path, GOOD.replace("  count: 2", "  count: -1").replace("/var/tmp/iogate", str(work)))
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_baseline.py", "--lab", str(path), "-q", "-p", "no:cacheprovider"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert f"{path} line" in done.stderr and "volumes.count" in done.stderr
    assert not work.exists()


def test_flow_mapping_without_value_has_line(tmp_path: Path) -> None:
    text = re.sub(r"  qos:[^\n]*\n(    [^\n]*\n)*", "  qos: {read_iops: 100, 200}\n", GOOD)
    path = write(tmp_path, text)
    with pytest.raises(LabFileError, match=r"line \d+: volumes.qos"):
        load_lab(path)


def test_secrets_never_in_host_errors() -> None:
    from iogate.errors import HostError
    from iogate.hosts.initiator import Initiator
    from iogate.lab import HostConfig

    host = Initiator.from_config(HostConfig(name="localhost"))
    with pytest.raises(HostError) as info:
        host.run("echo %s >&2; false", "s3cret-chap", secrets=["s3cret-chap"])
    assert "s3cret" not in str(info.value) and "***" in str(info.value)
