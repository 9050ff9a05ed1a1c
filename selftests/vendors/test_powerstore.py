"""PowerStore driver, contract depth: PyPowerStore against a fake array whose every
request and response is checked against endpoints.md."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from iogate.arrays import powerstore, vendor_base
from iogate.arrays.base import Capability, Unsupported
from iogate.arrays.exports import IscsiExport
from iogate.errors import ArrayError
from iogate.run import Run
from iogate.run.ledger import Ledger
from selftests.vendors.conftest import INITIATORS, PASSWORD_ENV, make_lab
from selftests.vendors.contract_md import PowerStoreContract
from selftests.vendors.failures import failed_mapping_test
from selftests.vendors.fake_powerstore import FakePowerStore
from selftests.vendors.refusals import assert_refusals
from selftests.vendors.server import ContractServer, Fault, Reply, Request

pytestmark = pytest.mark.vendors
pytest.importorskip("PyPowerStore", reason="vendor SDK not installed: pip install -r requirements-vendors.txt")
POLICY = "pp-replicating"


@pytest.fixture
def array(tmp_path: Path, canary: str) -> FakePowerStore:
    fake = FakePowerStore("iogate", canary)
    fake.replicating_policies.add(POLICY)
    return fake


@pytest.fixture
def server(tmp_path: Path, array: FakePowerStore) -> Iterator[ContractServer]:
    with ContractServer(array, PowerStoreContract(), tmp_path) as srv:
        yield srv
    assert srv.violations == [], "requests or responses outside endpoints.md"


def options(server: ContractServer, **extra: Any) -> dict[str, Any]:
    return {
        "management": server.address,
        "username": "iogate",
        "password": f"${{env:{PASSWORD_ENV}}}",
        "verify_tls": str(server.cert),
        "timeout_s": 30,
        "retry_backoff_s": 0,
        "iscsi_portal": "192.0.2.10:3260",
        "iscsi_target_iqn": "iqn.2015-10.com.dell:dellemc-powerstore-fnm00000000000-a-1",
        "nvme_traddr": "192.0.2.11",
        "nvme_subsys_nqn": "nqn.1988-11.com.dell:powerstore:00:a1b2c3",
        **extra,
    }


def make_driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, **extra: Any) -> powerstore.PowerStore:
    monkeypatch.setattr(vendor_base, "read_initiator_ids", lambda lab: INITIATORS)
    drv = powerstore.PowerStore(make_lab(tmp_path, "powerstore", options(server, protection_policy_id=POLICY, **extra)), run)
    drv.setup()
    return drv


@pytest.fixture
def driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch) -> powerstore.PowerStore:
    return make_driver(tmp_path, server, run, monkeypatch)


def test_volume_lifecycle_maps_the_hosts_initiator_and_reports_the_wwn(driver: powerstore.PowerStore, array: FakePowerStore) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="iscsi")
    (stored,) = array.volumes.values()
    assert stored["name"].startswith(driver.prefix) and stored["size"] == 1 << 30
    assert volume.identity.wwn == stored["wwn"]
    (host,) = array.hosts.values()
    assert host["initiators"] == [{"port_name": INITIATORS["h1"]["iscsi"], "port_type": "iSCSI"}]
    assert [m["volume_id"] for m in array.mappings] == [stored["id"]]
    iscsi = volume.export_of(IscsiExport)
    assert iscsi is not None and iscsi.target_iqn.startswith("iqn.2015-10.com.dell") and iscsi.lun == 1
    driver.teardown()
    assert array.volumes == {} and array.hosts == {} and array.mappings == []


def test_nvme_volume_is_identified_by_its_nguid(driver: powerstore.PowerStore, array: FakePowerStore) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="nvme-tcp")
    (stored,) = array.volumes.values()
    assert "nguid." + str(volume.identity.nguid) == stored["nguid"] and volume.identity.wwn is None
    assert next(iter(array.hosts.values()))["initiators"][0]["port_type"] == "NVMe"
    driver.teardown()


def test_snapshot_and_replication_sync(driver: powerstore.PowerStore, array: FakePowerStore, server: ContractServer) -> None:
    assert Capability.REPLICATE in driver.capabilities
    volume = driver.create_volume("vol0", 1 << 30)
    snap = driver.snapshot_create(volume, "s1")
    assert [v["type"] for v in array.volumes.values()] == ["Primary", "Snapshot"]
    evidence = driver.replicate(volume)
    assert evidence["last_sync_timestamp"] and "POST /api/rest/replication_session/" in " ".join(server.calls())
    driver.snapshot_delete(snap)
    assert [v["type"] for v in array.volumes.values()] == ["Primary"]
    driver.teardown()
    assert array.volumes == {}


def test_metrics_are_not_offered_the_reference_table_has_no_metrics_call(driver: powerstore.PowerStore, server: ContractServer) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    assert Capability.METRICS not in driver.capabilities
    now = datetime.now(UTC)
    with pytest.raises(Unsupported, match=r"POST /metrics/generate is not in \S+endpoints.md"):
        driver.volume_metrics(volume, now - timedelta(minutes=5), now)
    assert not any("metrics" in call for call in server.calls())
    driver.teardown()


def test_replicate_is_not_offered_without_a_protection_policy(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vendor_base, "read_initiator_ids", lambda lab: INITIATORS)
    drv = powerstore.PowerStore(make_lab(tmp_path, "powerstore", options(server)), run)
    drv.setup()
    assert drv.capabilities == frozenset({Capability.SNAPSHOT})
    assert drv.refusal(Capability.REPLICATE) == "the lab names no protection_policy_id whose volumes get a replication session"
    assert drv.refusal(Capability.SNAPSHOT) == ""


def test_a_volume_without_a_replication_session_fails_naming_the_call(driver: powerstore.PowerStore, array: FakePowerStore) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    array.sessions.clear()
    with pytest.raises(ArrayError, match="has no replication session"):
        driver.replicate(volume)
    driver.teardown()


def test_reads_are_retried_on_5xx_writes_are_not(driver: powerstore.PowerStore, array: FakePowerStore, server: ContractServer) -> None:
    server.inject(Fault("GET", r"/api/rest/volume$", status=503, times=2))
    driver.create_volume("vol0", 1 << 30)  # the GET after the POST is retried through two 503s
    server.inject(Fault("POST", r"/api/rest/volume$", status=503))
    with pytest.raises(ArrayError, match=r"POST /volume volume \S+vol1: HTTP 503"):
        driver.create_volume("vol1", 1 << 30)
    assert len([c for c in server.calls() if c == "POST /api/rest/volume"]) == 2  # once each: no retry of a write
    driver.teardown()
    assert array.volumes == {} and array.hosts == {}


def test_a_timeout_names_the_call_and_the_object(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    driver = make_driver(tmp_path, server, run, monkeypatch, timeout_s=5)  # the answer never comes: any timeout will do
    server.inject(Fault("POST", r"/attach$", hang=True))
    with pytest.raises(ArrayError, match=r"POST /volume/\{id\}/attach volume \S+vol0 host \S+: no answer: timed out"):
        driver.create_volume("vol0", 1 << 30)


def test_an_expired_session_is_renewed_once(driver: powerstore.PowerStore, array: FakePowerStore, server: ContractServer) -> None:
    array.expire_sessions()
    driver.create_volume("vol0", 1 << 30)
    assert server.calls().count("GET /api/rest/login_session") >= 2
    driver.teardown()


def test_half_done_provisioning_leaks_nothing_after_cleanup_in_a_fresh_process(
    driver: powerstore.PowerStore, array: FakePowerStore, server: ContractServer, run: Run, canary: str
) -> None:
    # The array creates the volume but the answer is lost: the driver fails, the journal knows the name.
    driver.create_volume("vol0", 1 << 30)
    server.inject(Fault("POST", r"/api/rest/volume$", status=500, after_app=True))
    with pytest.raises(ArrayError, match="POST /volume"):
        driver.create_volume("vol1", 1 << 30)
    assert len(array.volumes) == 2 and array.mappings
    env = {**os.environ, PASSWORD_ENV: canary}
    done = subprocess.run(
        [sys.executable, "-m", "iogate", "cleanup", "--include-live", "--workdir", str(run.run_dir.parent.parent)],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert array.volumes == {} and array.hosts == {} and array.mappings == []
    ledger, _ = Ledger.load(run.ledger.path)
    assert ledger.open_entries() == []
    assert canary not in done.stdout + done.stderr


def test_cleanup_refuses_an_object_without_the_run_prefix(driver: powerstore.PowerStore) -> None:
    attrs = {"type": "volume", "name": "production-db", "prefix": driver.prefix}
    with pytest.raises(ArrayError, match="refusing to delete volume production-db"):
        powerstore.delete_object(driver.api, driver._conn, attrs)


def test_the_canary_password_never_leaks(
    driver: powerstore.PowerStore, server: ContractServer, run: Run, canary: str, all_logs: pytest.LogCaptureFixture
) -> None:
    for name in ("PyPowerStore.client", "PyPowerStore.provisioning"):
        __import__("logging").getLogger(name).disabled = False  # even with the SDK's own logging on
    messages = []
    server.inject(Fault("POST", r"/api/rest/host$", status=500))
    with pytest.raises(ArrayError) as failed:
        driver.create_volume("vol0", 1 << 30)
    messages.append(str(failed.value))
    assert failed.value.__cause__ is None and failed.value.__suppress_context__  # the SDK's exception is not chained
    messages += [r.getMessage() for r in all_logs.records]
    messages.append(run.ledger.path.read_text())
    assert canary not in "\n".join(messages)
    assert any("Basic " in r.headers.get("authorization", "") for r, _ in server.log)  # it was sent, to the array only


def test_an_inline_password_is_refused_without_echoing_it(tmp_path: Path) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as refused:
        powerstore.PowerStoreOptions.model_validate(
            {"management": "a", "username": "u", "password": "hunter2-inline", "iscsi_portal": "p", "iscsi_target_iqn": "i"}
        )
    assert "by reference" in str(refused.value) and "hunter2-inline" not in str(refused.value).split("input_value")[0]


def test_the_contract_check_fails_a_request_the_spec_does_not_have(server: ContractServer) -> None:
    contract = PowerStoreContract()
    bad_field = Request("POST", "/api/rest/volume", {}, {}, {"name": "v", "size": 1, "thin": True})
    bad_path = Request("POST", "/api/rest/volume/v1/expand", {}, {}, None)
    bad_query = Request("GET", "/api/rest/volume", {"limit": ["5"]}, {}, None)
    assert contract.check_request(bad_field) == ["body field 'thin' is not one endpoints.md gives for volume create"]
    assert contract.check_request(bad_path) == ["no such call in endpoints.md"]
    assert (
        contract.check_request(bad_query) and contract.check_request(Request("GET", "/api/rest/volume", {"name": ["eq.x"]}, {}, None)) == []
    )


def test_a_driver_call_outside_the_spec_is_caught_by_the_server(driver: powerstore.PowerStore, server: ContractServer) -> None:
    # The SDK's own get_cluster_list() calls GET /cluster, which endpoints.md does not list: the contract flags it.
    try:
        driver._conn.provisioning.get_cluster_list()
    except Exception:
        pass
    assert server.violations == ["GET /api/rest/cluster: no such call in endpoints.md"]
    server.violations.clear()


def test_a_host_without_an_initiator_name_fails_naming_the_file(
    tmp_path: Path, server: ContractServer, run: Run, array: FakePowerStore
) -> None:
    # The lab host is this machine (local://): its ids are read for real, and it has no NVMe host NQN.
    if Path("/etc/nvme/hostnqn").exists():
        pytest.skip("this machine has an NVMe host NQN")
    drv = powerstore.PowerStore(make_lab(tmp_path, "powerstore", options(server)), run)
    drv.setup()
    with pytest.raises(ArrayError, match=r"host\(s\) h1 have no nvme-tcp initiator name \(/etc/nvme/hostnqn\)"):
        drv.create_volume("vol0", 1 << 30, export="nvme-tcp")
    assert array.volumes == {}  # refused before anything was created


# -- paging: lists are read to their last page (Range / 206 / content-range), or refused naming the call ------------
def _mapped_among_others(driver: powerstore.PowerStore, array: FakePowerStore) -> tuple[dict[str, Any], dict[str, Any]]:
    """A volume of the run whose own mapping comes third in the array's list of its mappings."""
    driver.create_volume("vol0", 1 << 30)
    (stored,) = array.volumes.values()
    others = [
        {"id": f"map-x{i}", "host_id": f"host-x{i}", "host_group_id": None, "volume_id": stored["id"], "logical_unit_number": 9 + i}
        for i in range(2)
    ]
    array.mappings[:0] = others  # someone else's hosts mapped the volume too, listed first
    (owned,) = driver._volumes.values()
    return stored, owned.maps[0].attrs


def test_the_sdks_own_mapping_list_stops_at_the_first_page(driver: powerstore.PowerStore, array: FakePowerStore) -> None:
    # Why the driver pages itself: PyPowerStore's get_host_volume_mapping returns a 206's first page as the list.
    stored, _ = _mapped_among_others(driver, array)
    array.default_page = 1
    assert len(driver._conn.provisioning.get_host_volume_mapping(stored["id"])) == 1  # of 3, silently
    array.mappings = [m for m in array.mappings if not m["id"].startswith("map-x")]
    driver.teardown()


def test_cleanup_finds_its_mapping_on_a_later_page(driver: powerstore.PowerStore, array: FakePowerStore) -> None:
    _, attrs = _mapped_among_others(driver, array)
    array.max_page = 1
    assert powerstore.delete_object(driver.api, driver._conn, attrs) is not None
    assert [m["id"] for m in array.mappings] == ["map-x0", "map-x1"]  # ours found on page 3 and removed; theirs kept
    mapping_ranges = [r for p, r in array.ranges_asked if p.endswith("/host_volume_mapping")]
    assert mapping_ranges[-3:] == ["0-1999", "1-2000", "2-2001"]  # each page asked from where the last one ended
    array.mappings.clear()
    driver.teardown()
    assert array.volumes == {} and array.hosts == {}


@pytest.mark.parametrize(
    ("lie", "says"),
    [("total_inflated", r"HTTP 416"), ("skips_one", r"asked from item 1, the array's page says 2-2/3")],
)
def test_a_mapping_list_that_does_not_add_up_fails_naming_the_call(
    driver: powerstore.PowerStore, array: FakePowerStore, lie: str, says: str
) -> None:
    _, attrs = _mapped_among_others(driver, array)
    array.max_page, array.paging_lie = 1, lie
    with pytest.raises(ArrayError, match=rf"GET /host_volume_mapping volume \S+vol0: .*{says}"):
        powerstore.delete_object(driver.api, driver._conn, attrs)
    assert len(array.mappings) == 3  # nothing taken for unmapped on a partial answer
    array.paging_lie = None
    array.mappings = [m for m in array.mappings if not m["id"].startswith("map-x")]
    driver.teardown()


def test_the_contract_check_fails_a_partial_answer_that_does_not_say_its_range() -> None:
    contract = PowerStoreContract()
    ranged = Request("GET", "/api/rest/host", {"select": ["id,name"]}, {"Range": "0-99"}, None)
    assert contract.check_response(ranged, Reply(206, [], {"content-range": "0-99/250"})) == []
    assert contract.check_response(ranged, Reply(206, [], {})) == ["206 without a content-range a-b/<total> ('')"]


def test_the_arrays_clock_is_said_to_be_unread_and_why(driver: powerstore.PowerStore) -> None:
    assert driver.array_clock().describe() == (
        "array clock not read: powerstore: endpoints.md lists no call that gives the array's current time"
    )


def test_what_the_driver_does_not_offer_is_refused_naming_driver_operation_and_why(driver: powerstore.PowerStore) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    reasons = assert_refusals(driver, volume)
    assert [r.split(":")[0] for r in reasons] == ["restore", "dedupe", "mirror", "qos", "metrics"]
    assert all("endpoints.md" in r for r in reasons)  # each refusal says where the API's description stops
    driver.teardown()


# -- half-done provisioning: the host mapping fails after the volume was made --------------------------------------
test_a_failed_mapping_names_the_call_is_not_repeated_and_leaks_nothing = failed_mapping_test(
    make_driver,
    r"/attach$",
    error=r"POST /volume/\{id\}/attach volume \S+vol0 host \S+h1-iscsi",
    leftovers=lambda fake: {"volumes": fake.volumes, "hosts": fake.hosts, "mappings": fake.mappings},
)


def test_a_session_that_ends_between_two_pages_is_renewed_and_the_list_read_whole(
    driver: powerstore.PowerStore, array: FakePowerStore, server: ContractServer
) -> None:
    _, attrs = _mapped_among_others(driver, array)
    array.max_page, array.expire_after_first_page = 1, True
    logins = server.calls().count("GET /api/rest/login_session")
    assert powerstore.delete_object(driver.api, driver._conn, attrs) is not None  # its mapping, on the third page
    assert server.calls().count("GET /api/rest/login_session") == logins + 1
    array.mappings.clear()
    driver.teardown()
