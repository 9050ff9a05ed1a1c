"""The static driver: hands out listed volumes, never creates; events are timed user hooks."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from iogate.arrays.base import Capability, Unsupported, lacking
from iogate.arrays.exports import BlockExport, FcExport, IscsiExport, NfsExport, NvmeTcpExport
from iogate.arrays.static import StaticArray, StaticOptions
from iogate.errors import ArrayError, GuardRefused, LabFileError
from iogate.hosts.connectors.scan import find_devices
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, HostConfig, Lab, load_lab
from iogate.run import Run
from selftests.exports import block_device

EXAMPLE = Path(__file__).resolve().parents[2] / "labs" / "examples" / "static.yaml"


@pytest.fixture
def loop_devices(tmp_path: Path) -> Iterator[list[tuple[str, str]]]:
    """Two real loop devices: (device, backing file) — the 'pre-provisioned LUNs'."""
    made = []
    try:
        for index in range(2):
            backing = tmp_path / f"lun{index}.img"
            with backing.open("wb") as handle:
                handle.truncate(64 << 20)
            device = subprocess.run(
                ["losetup", "--find", "--show", str(backing)], capture_output=True, text=True, check=True
            ).stdout.strip()
            made.append((device, str(backing)))
        yield made
    finally:
        for device, _ in made:
            subprocess.run(["losetup", "-d", device], check=False)


def make_lab(volumes: list[dict[str, Any]], hooks: dict[str, Any] | None = None) -> Lab:
    return Lab.model_validate(
        {
            "name": "static-test",
            "array": {"name": "legacy", "driver": "static", "options": {"volumes": volumes, "hooks": hooks or {}}},
            "hosts": [{"name": "localhost"}],
            "protocols": [{"name": "block", "connector": "block"}],
        }
    )


def block_volumes(loops: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [
        {"name": f"lun{i}", "size": "64MiB", "protocol": "block", "identity": {"backing_file": backing}, "export": {"device": device}}
        for i, (device, backing) in enumerate(loops)
    ]


def test_hands_out_listed_volumes_then_runs_out(loop_devices: list[tuple[str, str]], tmp_path: Path) -> None:
    array = StaticArray(make_lab(block_volumes(loop_devices)), Run.start(tmp_path, "static"))
    first = array.create_volume("v0", 32 << 20)
    second = array.create_volume("v1", 32 << 20)
    assert {array.template_values(first)["array_volume"], array.template_values(second)["array_volume"]} == {"lun0", "lun1"}
    with pytest.raises(ArrayError, match="no free pre-provisioned volume for v2"):
        array.create_volume("v2", 32 << 20)
    array.delete_volume(first)
    again = array.create_volume("v2", 32 << 20)
    assert again.identity == first.identity
    assert len(array.list_volumes()) == 2


def test_filters_by_size_and_protocol(loop_devices: list[tuple[str, str]], tmp_path: Path) -> None:
    array = StaticArray(make_lab(block_volumes(loop_devices)), Run.start(tmp_path, "static"))
    with pytest.raises(ArrayError):
        array.create_volume("big", 128 << 20)
    with pytest.raises(ArrayError):
        array.create_volume("other", 1 << 20, export="iscsi")
    assert array.create_volume("ok", 1 << 20, export="block").exports == (BlockExport(device=loop_devices[0][0]),)


def test_handed_out_identity_is_the_real_device(loop_devices: list[tuple[str, str]], tmp_path: Path) -> None:
    """The identity in the lab file is what the guard and the device scan see in sysfs."""
    array = StaticArray(make_lab(block_volumes(loop_devices)), Run.start(tmp_path, "static"))
    volume = array.create_volume("v0", 1 << 20)
    host = Initiator.from_config(HostConfig(name="localhost"))
    guard = Guard()
    guard.admit(volume.identity)
    device = block_device(volume)
    guard.check_device(host, device, volume.identity)
    other_device = next(d for d, _ in loop_devices if d != device)
    with pytest.raises(GuardRefused):
        guard.check_device(host, other_device)
    # loop devices carry no WWN: a scan for one that does not exist finds nothing
    assert find_devices(host, DeviceIdentity(wwn="naa.6001405" + "f" * 25)) == []


def test_capabilities_follow_the_configured_hooks(loop_devices: list[tuple[str, str]], tmp_path: Path) -> None:
    lab = make_lab(block_volumes(loop_devices), {"snapshot_create": {"command": "true"}, "dedupe": {"command": "true"}})
    array = StaticArray(lab, Run.start(tmp_path, "static"))
    assert array.capabilities == frozenset({Capability.SNAPSHOT, Capability.DEDUPE})
    assert array.refusal(Capability.DEDUPE) == ""
    assert lacking(array, "static", [Capability.SNAPSHOT, Capability.REPLICATE, Capability.MIRROR]) == (
        "array driver static lacks capability replicate: the lab configures no `replicate` hook (array.options.hooks); "
        "mirror: the lab configures no `mirror_attach` hook (array.options.hooks)"
    )
    volume = array.create_volume("v0", 1 << 20)
    with pytest.raises(Unsupported, match="mirror_attach"):
        array.mirror_attach(volume)


def test_command_hook_is_templated_and_timed(loop_devices: list[tuple[str, str]], tmp_path: Path) -> None:
    log = tmp_path / "hook.log"
    hooks = {"snapshot_create": {"command": f"echo $array_volume $snapshot $backing_file >> {log}"}}
    array = StaticArray(make_lab(block_volumes(loop_devices), hooks), Run.start(tmp_path, "static"))
    volume = array.create_volume("v0", 1 << 20)
    snapshot = array.snapshot_create(volume, "before-load")
    assert log.read_text().split() == ["lun0", "before-load", loop_devices[0][1]]
    event = array.events[-1]
    assert event["event"] == "snapshot_create" and event["ok"]
    assert event["ended_at"] >= event["started_at"] and event["duration_s"] >= 0
    assert snapshot.evidence["hook"]["exit"] == 0


def test_failing_hook_raises_and_is_still_recorded(loop_devices: list[tuple[str, str]], tmp_path: Path) -> None:
    array = StaticArray(
        make_lab(block_volumes(loop_devices), {"dedupe": {"command": "echo busy >&2; exit 3"}}), Run.start(tmp_path, "static")
    )
    with pytest.raises(ArrayError, match="exited 3: busy"):
        array.dedupe_run()
    assert array.events[-1]["ok"] is False


def test_unknown_placeholder_names_the_known_ones(loop_devices: list[tuple[str, str]], tmp_path: Path) -> None:
    array = StaticArray(make_lab(block_volumes(loop_devices), {"replicate": {"command": "echo $nope"}}), Run.start(tmp_path, "static"))
    volume = array.create_volume("v0", 1 << 20)
    with pytest.raises(ArrayError, match="nope.*known:.*array_volume"):
        array.replicate(volume)


class _Recorder(BaseHTTPRequestHandler):
    calls: ClassVar[list[tuple[str, str, str]]] = []
    status = 200

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        _Recorder.calls.append((self.command, self.path, body))
        self.send_response(_Recorder.status)
        self.end_headers()
        self.wfile.write(b'{"job": 7}')

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Recorder.calls.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_http_hook_posts_the_rendered_body(loop_devices: list[tuple[str, str]], tmp_path: Path, http_server: str) -> None:
    hooks = {
        "mirror_attach": {"http": {"url": f"{http_server}/mirror/$array_volume", "body": '{"volume": "$volume", "size": $size_bytes}'}}
    }
    array = StaticArray(make_lab(block_volumes(loop_devices), hooks), Run.start(tmp_path, "static"))
    volume = array.create_volume("v0", 1 << 20)
    evidence = array.mirror_attach(volume)
    method, path, body = _Recorder.calls[-1]
    assert (method, path) == ("POST", "/mirror/lun0")
    assert json.loads(body) == {"volume": "v0", "size": 64 << 20}
    assert evidence["status"] == 200 and evidence["output"] == '{"job": 7}'
    _Recorder.status = 500
    try:
        with pytest.raises(ArrayError, match="HTTP 500"):
            array.mirror_attach(volume)
    finally:
        _Recorder.status = 200


def test_hook_must_be_command_or_http() -> None:
    volumes = [{"name": "x", "size": "1GiB", "protocol": "fc", "identity": {"wwn": "naa.1"}}]
    with pytest.raises(ValueError, match="exactly one"):
        StaticOptions.model_validate({"volumes": volumes, "hooks": {"dedupe": {"command": "true", "http": {"url": "http://127.0.0.1/"}}}})
    with pytest.raises(ValueError, match="exactly one"):
        StaticOptions.model_validate({"volumes": volumes, "hooks": {"dedupe": {}}})
    assert StaticOptions.model_validate({"volumes": volumes, "hooks": {"dedupe": {"command": "true"}}}).hooks


def test_example_lab_file_is_valid() -> None:
    lab = load_lab(EXAMPLE)
    assert lab.array.driver == "static"


def test_example_lab_errors_name_file_and_line(tmp_path: Path) -> None:
    broken = tmp_path / "static.yaml"
    broken.write_text(EXAMPLE.read_text().replace("protocol: iscsi", "protocol: iscsi\n        bogus: 1", 1))
    with pytest.raises(LabFileError, match=r"static.yaml line \d+: array.options.volumes.0.bogus"):
        load_lab(broken)


def test_listed_exports_become_typed_records() -> None:
    """The lab's `export` of a listed volume is checked when the lab loads and becomes the connector's record."""
    options = StaticOptions.model_validate(load_lab(EXAMPLE).array.options)
    by_protocol = {volume.protocol: volume.exports() for volume in options.volumes}
    assert by_protocol["iscsi"] == (IscsiExport(portal="192.0.2.10:3260", target_iqn="iqn.2001-01.com.example:array.tgt1"),)
    assert by_protocol["nvme-tcp"] == (NvmeTcpExport(traddr="192.0.2.10", subsys_nqn="nqn.2001-01.com.example:array.sub1"),)
    assert by_protocol["nfs"] == (NfsExport(server="192.0.2.20", path="/export/iogate"),)
    fc = StaticOptions.model_validate({"volumes": [{"name": "x", "size": "1GiB", "protocol": "fc", "identity": {"wwn": "naa.1"}}]})
    assert fc.volumes[0].exports() == (FcExport(),)
    incomplete = {"name": "x", "size": "1GiB", "protocol": "iscsi", "identity": {"wwn": "naa.1"}, "export": {"portal": "10.0.0.5:3260"}}
    assert StaticOptions.model_validate({"volumes": [incomplete]}).volumes[0].exports() == ()  # the connector names what is missing
    typo = {**incomplete, "export": {"portal": "10.0.0.5:3260", "target-iqn": "iqn.x"}}
    with pytest.raises(ValueError, match="target-iqn"):
        StaticOptions.model_validate({"volumes": [typo]})
    nfs = {"name": "n", "size": "1GiB", "protocol": "nfs", "identity": {"nfs_export": "10.0.0.7:/a"},
           "export": {"server": "10.0.0.7", "path": "/b"}}
    with pytest.raises(ValueError, match="is not identity.nfs_export"):
        StaticOptions.model_validate({"volumes": [nfs]})
