"""Pure driver, contract depth: py-pure-client against a fake FlashArray whose every
request and response is checked against the FA 2.56 OpenAPI 3 description."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from iogate.arrays import pure, vendor_base
from iogate.arrays.base import ArraySample, Capability, Unsupported, samples_evidence
from iogate.arrays.exports import IscsiExport
from iogate.errors import ArrayError, IOGateError
from iogate.lab import QoS
from iogate.run import Run
from iogate.run.resources import release_all
from selftests.vendors.conftest import INITIATORS, PASSWORD_ENV, make_lab
from selftests.vendors.contract_openapi import OpenApiContract, load_spec
from selftests.vendors.failures import failed_mapping_test
from selftests.vendors.fake_pure import FakePure
from selftests.vendors.refusals import assert_refusals
from selftests.vendors.server import ContractServer, Fault, Request

pytestmark = pytest.mark.vendors
pytest.importorskip("pypureclient", reason="vendor SDK not installed: pip install -r requirements-vendors.txt")
SPEC = Path("/work/shared/specs/pure-flasharray/FA2.56.spec.yaml")


def contract() -> OpenApiContract:
    return OpenApiContract(load_spec(SPEC), error_schema="#/components/schemas/_errorContextResponse")


@pytest.fixture
def array(canary: str) -> FakePure:
    return FakePure(canary)


@pytest.fixture
def server(tmp_path: Path, array: FakePure) -> Iterator[ContractServer]:
    with ContractServer(array, contract(), tmp_path) as srv:
        yield srv
    assert srv.violations == [], "requests or responses outside the FA 2.56 spec:\n" + "\n".join(srv.violations)


def options(server: ContractServer, **extra: Any) -> dict[str, Any]:
    return {
        "management": server.address,
        "password": f"${{env:{PASSWORD_ENV}}}",
        "verify_tls": str(server.cert),
        "timeout_s": 30,
        "retry_backoff_s": 0,
        "iscsi_portal": "192.0.2.30:3260",
        "iscsi_target_iqn": "iqn.2010-06.com.purestorage:flasharray.12345abc",
        "nvme_traddr": "192.0.2.31",
        "nvme_subsys_nqn": "nqn.2010-06.com.purestorage:flasharray.12345abc",
        "protection_group": "pg-dr",
        **extra,
    }


def make_driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, **extra: Any) -> pure.Pure:
    monkeypatch.setattr(vendor_base, "read_initiator_ids", lambda lab: INITIATORS)
    drv = pure.Pure(make_lab(tmp_path, "pure", options(server, **extra)), run)
    drv.setup()
    return drv


@pytest.fixture
def driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch) -> pure.Pure:
    return make_driver(tmp_path, server, run, monkeypatch)


def test_identity_from_the_serial_follows_pures_documented_shape() -> None:
    serial = "F4252922ADE248CF000113E6"
    assert pure.wwn_of_serial(serial) == "naa.624a9370f4252922ade248cf000113e6"
    assert pure.nguid_of_serial(serial) == "00" + "f4252922ade248" + "24a937" + "cf000113e6"


def test_facts_and_capabilities_come_from_the_array(driver: pure.Pure) -> None:
    assert driver.facts()["array.model"] == "Pure Storage FA-X70R4" and driver.facts()["array.firmware"] == "Purity//FA 6.7.1"
    assert driver.capabilities == {Capability.SNAPSHOT, Capability.RESTORE, Capability.REPLICATE, Capability.METRICS}
    assert driver.facts()["array.serial"] == "PCHFL2110000A"


def test_volume_lifecycle_host_connection_identity(driver: pure.Pure, array: FakePure) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="iscsi")
    (stored,) = array.volumes.values()
    assert stored["name"] == f"{driver.prefix}vol0" and stored["provisioned"] == 1 << 30
    assert volume.identity.wwn == pure.wwn_of_serial(stored["serial"])
    (host,) = array.hosts.values()
    iscsi = volume.export_of(IscsiExport)
    assert host["iqns"] == [INITIATORS["h1"]["iscsi"]] and iscsi is not None and iscsi.lun == 1
    snap = driver.snapshot_create(volume, "s1")
    assert list(array.snapshots) == [f"{stored['name']}.s1"]
    driver.snapshot_delete(snap)
    driver.teardown()
    assert array.volumes == {} and array.hosts == {} and array.connections == [] and array.snapshots == {}


def test_nvme_volume_is_identified_by_the_nguid_of_its_serial(driver: pure.Pure, array: FakePure) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="nvme-tcp")
    (stored,) = array.volumes.values()
    assert volume.identity.nguid == pure.nguid_of_serial(stored["serial"])
    assert next(iter(array.hosts.values()))["nqns"] == [INITIATORS["h1"]["nvme-tcp"]]
    driver.teardown()


def test_replicate_now_is_followed_to_completion_and_cleaned_up(driver: pure.Pure, array: FakePure) -> None:
    array.transfer_polls_until_done = 2
    volume = driver.create_volume("vol0", 1 << 30)
    evidence = driver.replicate(volume)
    assert evidence["data_transferred_bytes"] == 1 << 20
    assert array.pgroups["pg-dr"]["members"] == [f"{driver.prefix}vol0"] and len(array.pgroup_snapshots) == 1
    driver.teardown()
    assert array.pgroups["pg-dr"]["members"] == [] and array.pgroup_snapshots == {} and array.volumes == {}


def test_no_connected_target_no_replicate(
    tmp_path: Path, server: ContractServer, array: FakePure, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    array.array_connections[0]["status"] = "disconnected"
    monkeypatch.setattr(vendor_base, "read_initiator_ids", lambda lab: INITIATORS)
    drv = pure.Pure(make_lab(tmp_path, "pure", options(server)), run)
    drv.setup()
    assert drv.capabilities == {Capability.SNAPSHOT, Capability.RESTORE, Capability.METRICS}
    assert drv.refusal(Capability.REPLICATE) == "protection group pg-dr lists no target as allowed and connected"


@pytest.mark.parametrize("how", ["target disallowed", "target is not the connected array"])
def test_replicate_needs_a_target_of_the_group_that_is_allowed_and_connected(
    how: str, tmp_path: Path, server: ContractServer, array: FakePure, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    if how == "target disallowed":
        array.pgroups["pg-dr"]["targets"][0]["allowed"] = False
    else:
        array.pgroups["pg-dr"]["targets"][0]["name"] = "fa-old"  # the group replicates to an array no longer connected
    drv = make_driver(tmp_path, server, run, monkeypatch)
    assert drv.capabilities == {Capability.SNAPSHOT, Capability.RESTORE, Capability.METRICS}
    assert "GET /api/2.56/protection-groups/targets" in server.calls()


def test_a_write_is_not_retried_and_the_half_done_volume_is_cleaned_up(
    driver: pure.Pure, array: FakePure, server: ContractServer, run: Run
) -> None:
    server.inject(Fault("POST", r"/volumes$", status=503, after_app=True))
    with pytest.raises(ArrayError, match=r"POST /volumes volume \S+vol0: HTTP 503"):
        driver.create_volume("vol0", 1 << 30)
    assert server.calls().count("POST /api/2.56/volumes") == 1 and len(array.volumes) == 1
    release_all(run.ledger)
    assert array.volumes == {}


def test_an_expired_session_is_renewed_once(driver: pure.Pure, array: FakePure, server: ContractServer) -> None:
    array.expire_sessions()
    driver.create_volume("vol0", 1 << 30)
    assert server.calls().count("POST /api/2.56/login") == 2
    driver.teardown()


def test_a_timeout_names_the_call(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    driver = make_driver(tmp_path, server, run, monkeypatch, timeout_s=5)  # the answer never comes: any timeout will do
    server.inject(Fault("POST", r"/connections$", hang=True))
    with pytest.raises(ArrayError, match=r"POST /connections volume \S+ host \S+: no answer: timed out"):
        driver.create_volume("vol0", 1 << 30)


def test_the_canary_token_never_leaks(
    driver: pure.Pure, server: ContractServer, run: Run, canary: str, all_logs: pytest.LogCaptureFixture
) -> None:
    server.inject(Fault("POST", r"/hosts$", status=500))
    with pytest.raises(ArrayError) as failed:
        driver.create_volume("vol0", 1 << 30)
    text = "\n".join([str(failed.value), *(r.getMessage() for r in all_logs.records), run.ledger.path.read_text()])
    assert "POST /hosts" in str(failed.value) and canary not in text
    assert any(r.headers.get("api-token") == canary for r, _ in server.log)  # sent, to the array only


def test_the_contract_check_fails_a_deviating_request() -> None:
    check = contract()
    assert check.check_request(Request("POST", "/api/2.56/volumes", {"names": ["v"]}, {}, {"provisioned": 1, "thin": True})) == [
        "field thin is not defined by the spec"
    ]
    assert check.check_request(Request("POST", "/api/2.56/volumes", {"name": ["v"]}, {}, {"provisioned": 1})) == [
        "query parameter 'name' is not declared for POST /api/2.56/volumes"
    ]
    assert check.check_request(Request("GET", "/api/2.57/volumes", {}, {}, None)) == ["no such path in the spec"]


def test_array_metrics_of_a_volume_are_the_samples_of_the_window_oldest_first_with_units(driver: pure.Pure, array: FakePure) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    (name,) = array.volume_born_ms
    now = datetime.now(UTC)
    array.volume_born_ms[name] -= 10 * 60_000
    start, end = now - timedelta(minutes=5), now - timedelta(minutes=1)
    samples = driver.volume_metrics(volume, start, end)
    query = array.performance_queries[-1]
    assert query["resolution"] == ["30000"]  # the finest a volume has
    assert query["start_time"] == [str(int(start.timestamp() * 1000))] and query["end_time"] == [str(int(end.timestamp() * 1000))]
    assert 7 <= len(samples) <= 9 and all(start <= s.time <= end for s in samples)
    assert [s.time for s in samples] == sorted(s.time for s in samples)
    first = samples[0]
    assert isinstance(first, ArraySample) and first.interval_s == 30.0
    assert first.read_iops == 2000 + int(first.time.timestamp()) // 30 % 100 and first.write_iops == 1000.0
    assert (first.read_latency_us, first.write_latency_us) == (180.0, 220.0)  # usec_per_read_op / usec_per_write_op
    driver.teardown()


def test_a_longer_window_asks_a_coarser_resolution(driver: pure.Pure, array: FakePure) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    (name,) = array.volume_born_ms
    array.volume_born_ms[name] -= 3 * 86_400_000
    now = datetime.now(UTC)
    samples = driver.volume_metrics(volume, now - timedelta(days=2), now)  # 5760 samples at 30 s: 576 at 5 min
    assert array.performance_queries[-1]["resolution"] == ["300000"] and {s.interval_s for s in samples} == {300.0}
    assert pure.resolution_ms(now - timedelta(days=30), now) == 1_800_000
    assert pure.resolution_ms(now - timedelta(days=9000), now) == 86_400_000  # beyond every step's MAX_SAMPLES: the coarsest
    driver.teardown()


def test_a_window_without_samples_is_no_data_not_zeros(driver: pure.Pure, array: FakePure) -> None:
    volume = driver.create_volume("vol0", 1 << 30)  # created just now: no samples from before
    now = datetime.now(UTC)
    samples = driver.volume_metrics(volume, now - timedelta(minutes=30), now - timedelta(minutes=20))
    assert samples == [] and samples_evidence(samples) is None and len(array.performance_queries) == 1
    with pytest.raises(ValueError, match="not after the start"):
        driver.volume_metrics(volume, now, now - timedelta(minutes=1))
    driver.teardown()


# -- paging: a list longer than the array's page is read to its last page, or refused naming the call --------------
def _window_with_samples(driver: pure.Pure, array: FakePure) -> tuple[Any, datetime, datetime]:
    volume = driver.create_volume("vol0", 1 << 30)
    (name,) = array.volume_born_ms
    array.volume_born_ms[name] -= 10 * 60_000
    now = datetime.now(UTC)
    return volume, now - timedelta(minutes=5), now - timedelta(minutes=1)


def test_a_list_longer_than_the_arrays_page_is_read_to_its_last_page(driver: pure.Pure, array: FakePure) -> None:
    volume, start, end = _window_with_samples(driver, array)
    whole = driver.volume_metrics(volume, start, end)  # one page: the fake's default page holds them all
    array.max_page = 3
    paged = driver.volume_metrics(volume, start, end)
    assert len(whole) >= 7 and paged == whole
    pages = [p for p in array.pages_served if p[0].endswith("/volumes/performance")][1:]  # the paged call's pages
    assert [first for _, first, _ in pages] == list(range(0, len(whole), 3))  # every page, each from where the last ended
    assert any("continuation_token" in q for q in array.performance_queries)
    assert all(q.get("total_item_count") == ["true"] for q in array.performance_queries)  # the array's count is asked
    driver.teardown()


def test_teardown_finds_what_it_removes_on_later_pages(driver: pure.Pure, array: FakePure) -> None:
    driver.create_volume("vol0", 1 << 30)
    array.max_page = 1
    driver.teardown()
    assert array.volumes == {} and array.hosts == {} and array.connections == []


@pytest.mark.parametrize(
    ("lie", "says"),
    [
        ("no_more_flag", r"held 3 of the \d+ items"),
        ("empty_page", r"held 3 of the \d+ items"),
        ("total_short_of_items", r"held \d+ of the \d+ items"),
    ],
)
def test_a_list_whose_pages_do_not_add_up_fails_naming_the_call(driver: pure.Pure, array: FakePure, lie: str, says: str) -> None:
    volume, start, end = _window_with_samples(driver, array)
    array.max_page, array.paging_lie = 3, lie
    with pytest.raises(ArrayError, match=rf"GET /volumes/performance volume \S+vol0: incomplete list after 3 attempts: the pages {says}"):
        driver.volume_metrics(volume, start, end)
    array.paging_lie = None
    driver.teardown()


def test_the_sdk_alone_ends_a_list_quietly_on_a_first_page_without_more_items_remaining(driver: pure.Pure, array: FakePure) -> None:
    # Why the driver counts: py-pure-client 1.96 reads more_items_remaining of the first page as `or False`.
    _, start, _ = _window_with_samples(driver, array)
    array.max_page, array.paging_lie = 3, "no_more_flag"
    name = f"{driver.prefix}vol0"
    response = driver._conn.get_volumes_performance(names=[name], start_time=int(start.timestamp() * 1000), resolution=30000)
    assert response.continuation_token and len(list(response.items)) == 3  # a token to more, and three items: silently
    array.paging_lie = None
    driver.teardown()


def test_a_cleanup_lookup_on_a_lying_list_fails_and_keeps_the_ledger_entry(driver: pure.Pure, array: FakePure, run: Run) -> None:
    driver.create_volume("vol0", 1 << 30)
    array.max_page, array.paging_lie = 1, "total_short_of_items"
    with pytest.raises(IOGateError, match=r"GET /volumes volume \S+vol0: incomplete list"):
        release_all(run.ledger)
    assert array.volumes and array.connections  # nothing taken for gone on a partial answer
    assert run.ledger.open_entries()
    array.paging_lie = None
    release_all(run.ledger)
    assert array.volumes == {} and array.hosts == {} and array.connections == []


def test_samples_the_array_sends_outside_the_window_are_left_out(driver: pure.Pure, array: FakePure) -> None:
    volume, start, end = _window_with_samples(driver, array)
    array.performance_slop_ms = 120_000  # the array answers two minutes either side of the window asked
    samples = driver.volume_metrics(volume, start, end)
    assert array.sent_outside_window and samples and all(start <= s.time <= end for s in samples)
    driver.teardown()


def test_the_arrays_clock_is_said_to_be_unread_and_why(driver: pure.Pure) -> None:
    got = driver.array_clock()
    assert got.offset_s is None and "no field with the array's current time" in got.describe()


# -- what the driver does and does not offer -------------------------------------------------------------------
def test_restore_copies_the_snapshot_over_the_volume_which_keeps_its_identity(
    driver: pure.Pure, array: FakePure, server: ContractServer
) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    snap = driver.snapshot_create(volume, "s1")
    (stored,) = array.volumes.values()
    serial = stored["serial"]
    driver.snapshot_restore(volume, snap)
    assert array.restores == [(stored["name"], f"{stored['name']}.s1")]
    (restore,) = [r for r, _ in server.log if r.method == "POST" and r.query.get("overwrite")]
    assert restore.query["overwrite"] == ["true"] and restore.body == {"source": {"name": f"{stored['name']}.s1"}}
    assert array.volumes[stored["name"]]["serial"] == serial and array.connections  # same volume, still connected
    driver.teardown()


def test_a_restore_that_fails_is_not_repeated_and_names_the_call(driver: pure.Pure, array: FakePure, server: ContractServer) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    snap = driver.snapshot_create(volume, "s1")
    server.inject(Fault("POST", r"/volumes$", status=503))
    with pytest.raises(ArrayError, match=r"POST /volumes volume \S+vol0 from snapshot \S+vol0\.s1: HTTP 503"):
        driver.snapshot_restore(volume, snap)
    assert len([r for r, _ in server.log if r.method == "POST" and r.query.get("overwrite")]) == 1
    with pytest.raises(ArrayError, match="no snapshot vol0@s2 of this run"):
        driver.snapshot_restore(volume, pure.Snapshot("s2", "vol0"))
    driver.teardown()


def test_what_the_driver_does_not_offer_is_refused_naming_driver_operation_and_why(driver: pure.Pure, run: Run) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    reasons = assert_refusals(driver, volume)
    assert [r.split(":")[0] for r in reasons] == ["dedupe", "mirror", "qos"]
    entries = len(run.ledger.entries)
    with pytest.raises(Unsupported, match="does not support qos: FlashArray caps a volume's total IOPS"):
        driver.create_volume("vol1", 1 << 30, qos=QoS(write_iops=500))
    assert len(run.ledger.entries) == entries  # refused before anything was journalled or asked of the array
    driver.teardown()


# -- half-done provisioning: the host mapping fails after the volume was made --------------------------------------
test_a_failed_mapping_names_the_call_is_not_repeated_and_leaks_nothing = failed_mapping_test(
    make_driver,
    r"/connections$",
    error=r"POST /connections volume \S+vol0 host \S+h1-iscsi",
    leftovers=lambda fake: {"volumes": fake.volumes, "hosts": fake.hosts, "connections": fake.connections},
)


def test_a_session_that_ends_between_two_pages_is_renewed_and_the_list_read_whole(
    driver: pure.Pure, array: FakePure, server: ContractServer
) -> None:
    volume, start, end = _window_with_samples(driver, array)
    whole = driver.volume_metrics(volume, start, end)
    array.max_page, array.expire_after_first_page = 3, True
    assert driver.volume_metrics(volume, start, end) == whole
    assert server.calls().count("POST /api/2.56/login") == 2  # logged in again, once
    driver.teardown()
