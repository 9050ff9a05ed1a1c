"""ONTAP driver, contract depth: netapp-ontap against a fake cluster whose every
request and response is checked against the ONTAP Swagger 2.0 description."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from iogate.arrays import ontap, vendor_base
from iogate.arrays.base import ArraySample, Capability, Unsupported, lacking, samples_evidence
from iogate.arrays.exports import IscsiExport, NvmeTcpExport
from iogate.errors import ArrayError
from iogate.run import Run
from selftests.vendors.conftest import INITIATORS, PASSWORD_ENV, make_lab
from selftests.vendors.contract_openapi import OpenApiContract, load_spec
from selftests.vendors.failures import failed_mapping_test
from selftests.vendors.fake_ontap import FakeOntap
from selftests.vendors.refusals import assert_refusals
from selftests.vendors.server import ContractServer, Fault, Request

pytestmark = pytest.mark.vendors
pytest.importorskip("netapp_ontap", reason="vendor SDK not installed: pip install -r requirements-vendors.txt")
SPEC = Path("/work/shared/specs/netapp-ontap/swagger_full.yaml")
# ONTAP 9.10+ added the efficiency scanner to volume PATCH; the 9.8-era swagger here predates it.
NEWER_FIELDS = {
    "efficiency.": {"scanner"},
    "efficiency.scanner.": {"state", "scan_old_data"},
    "response.efficiency.": {"scanner"},
    "response.efficiency.scanner.": {"state"},
    "response.records[].efficiency.": {"scanner"},
    "response.records[].efficiency.scanner.": {"state"},
}


def contract() -> OpenApiContract:
    # Next links carry start.<key> query keys: the swagger's paging notes ("?start.aggregate=aggr25&max_records=25").
    return OpenApiContract(load_spec(SPEC), "/api", NEWER_FIELDS, next_link_prefix="start.")


@pytest.fixture
def array(canary: str) -> FakeOntap:
    return FakeOntap("iogate", canary)


@pytest.fixture
def server(tmp_path: Path, array: FakeOntap) -> Iterator[ContractServer]:
    with ContractServer(array, contract(), tmp_path) as srv:
        yield srv
    assert srv.violations == [], "requests or responses outside the ONTAP swagger:\n" + "\n".join(srv.violations)


def options(server: ContractServer, **extra: Any) -> dict[str, Any]:
    return {
        "management": server.address,
        "username": "iogate",
        "password": f"${{env:{PASSWORD_ENV}}}",
        "verify_tls": str(server.cert),
        "timeout_s": 30,
        "retry_backoff_s": 0,
        "svm": "svm1",
        "flexvol": "iogate_vol",
        "iscsi_portal": "192.0.2.20:3260",
        "nvme_traddr": "192.0.2.21",
        "snapmirror": True,
        **extra,
    }


def make_driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, **extra: Any) -> ontap.Ontap:
    monkeypatch.setattr(vendor_base, "read_initiator_ids", lambda lab: INITIATORS)
    drv = ontap.Ontap(make_lab(tmp_path, "ontap", options(server, **extra)), run)
    drv.setup()
    return drv


@pytest.fixture
def driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch) -> ontap.Ontap:
    return make_driver(tmp_path, server, run, monkeypatch)


def test_wwn_of_a_lun_serial_is_netapp_naa() -> None:
    # Worked example: serial "wD9Kp?JxP0ib" -> 3600a0980 + 77443... as multipath shows the WWID.
    assert ontap.wwn_of_serial("wD9Kp?JxP0ib") == "naa.600a0980" + "77443" + "94b703f4a78503069" + "62"


def test_capabilities_come_from_the_licences(driver: ontap.Ontap, array: FakeOntap) -> None:
    assert driver.capabilities == {Capability.SNAPSHOT, Capability.REPLICATE, Capability.DEDUPE, Capability.METRICS}
    facts = driver.facts()
    assert facts["array.firmware"] == "NetApp Release 9.8.0" and facts["array.serial"] == "721900001, 721900002"
    assert facts["array.model"] == "NetApp AFF-A400 (cluster cluster1, 2 nodes)"


def test_lun_lifecycle_igroup_with_the_hosts_iqn_and_identity(driver: ontap.Ontap, array: FakeOntap) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="iscsi")
    (lun,) = array.objects["luns"].values()
    assert lun["name"] == f"/vol/iogate_vol/{driver.prefix}vol0" and lun["space"]["size"] == 1 << 30
    assert volume.identity.wwn == ontap.wwn_of_serial(lun["serial_number"])
    (group,) = array.objects["igroups"].values()
    assert group["initiators"] == [{"name": INITIATORS["h1"]["iscsi"]}]
    iscsi = volume.export_of(IscsiExport)
    assert array.lun_maps and iscsi is not None and iscsi.target_iqn.startswith("iqn.1992-08.com.netapp")
    snap = driver.snapshot_create(volume, "s1")
    assert len(array.snapshots) == 1
    driver.snapshot_delete(snap)
    driver.teardown()
    assert array.objects["luns"] == {} and array.objects["igroups"] == {} and array.lun_maps == [] and array.snapshots == {}


def test_a_5xx_on_create_names_the_call_and_cleanup_removes_the_half_done_lun(
    driver: ontap.Ontap, array: FakeOntap, server: ContractServer, run: Run
) -> None:
    from iogate.run.resources import release_all

    server.inject(Fault("POST", r"/api/storage/luns$", status=500, after_app=True))
    with pytest.raises(ArrayError, match=r"POST /storage/luns lun /vol/iogate_vol/\S+vol0: HTTP 500"):
        driver.create_volume("vol0", 1 << 30)
    assert len(array.objects["luns"]) == 1
    release_all(run.ledger)
    assert array.objects["luns"] == {}


def test_the_canary_password_never_leaks(
    driver: ontap.Ontap, server: ContractServer, run: Run, canary: str, all_logs: pytest.LogCaptureFixture
) -> None:
    server.inject(Fault("POST", r"/api/protocols/san/igroups$", status=503))
    with pytest.raises(ArrayError) as failed:
        driver.create_volume("vol0", 1 << 30)
    text = "\n".join([str(failed.value), *(r.getMessage() for r in all_logs.records), run.ledger.path.read_text()])
    assert "POST /protocols/san/igroups" in str(failed.value) and canary not in text


def test_the_contract_check_fails_a_deviating_request() -> None:
    check = contract()
    assert check.check_request(Request("POST", "/api/storage/luns", {}, {}, {"name": "/vol/v/l", "thin": True})) == [
        "field thin is not defined by the spec"
    ]
    assert check.check_request(Request("GET", "/api/storage/lunz", {}, {}, None)) == ["no such path in the spec"]
    assert check.check_request(Request("POST", "/api/storage/luns", {}, {}, {"serial_number": "x"})) == [
        "field serial_number is readOnly in the spec"
    ]


def test_nvme_namespace_in_a_subsystem_with_the_hosts_nqn(driver: ontap.Ontap, array: FakeOntap) -> None:
    volume = driver.create_volume("ns0", 1 << 30, export="nvme-tcp")
    (namespace,) = array.objects["namespaces"].values()
    (subsystem,) = array.objects["subsystems"].values()
    assert namespace["name"] == f"/vol/iogate_vol/{driver.prefix}ns0"
    assert subsystem["hosts"] == [{"nqn": INITIATORS["h1"]["nvme-tcp"]}] and len(array.ns_maps) == 1
    nvme = volume.export_of(NvmeTcpExport)
    assert volume.identity.nguid == namespace["uuid"] and nvme is not None and nvme.subsys_nqn == subsystem["target_nqn"]
    driver.teardown()
    assert array.objects["namespaces"] == {} and array.objects["subsystems"] == {} and array.ns_maps == []


def test_snapmirror_transfer_is_waited_for(driver: ontap.Ontap, array: FakeOntap, server: ContractServer) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    evidence = driver.replicate(volume)
    assert evidence["relationship"] == array.relationships[0]["uuid"] and evidence["bytes_transferred"] == 1 << 20
    assert any(c.endswith("/transfers") for c in server.calls())
    driver.teardown()


def test_dedupe_runs_the_efficiency_scanner_until_idle(driver: ontap.Ontap, array: FakeOntap, server: ContractServer) -> None:
    evidence = driver.dedupe_run()
    assert evidence["scanner_state"] == "idle"
    (patch,) = [r for r, _ in server.log if r.method == "PATCH"]
    assert patch.body == {"efficiency": {"scanner": {"state": "active", "scan_old_data": True}}}
    assert len([r for r, _ in server.log if r.method == "GET" and r.path.endswith(array.flexvol["uuid"])]) >= 3


def test_no_snapmirror_licence_no_replicate(
    tmp_path: Path, server: ContractServer, array: FakeOntap, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    array.licences.remove("snapmirror")
    array.flexvol["efficiency"]["dedupe"] = "none"
    monkeypatch.setattr(vendor_base, "read_initiator_ids", lambda lab: INITIATORS)
    drv = ontap.Ontap(make_lab(tmp_path, "ontap", options(server)), run)
    drv.setup()
    assert drv.capabilities == {Capability.SNAPSHOT, Capability.METRICS}
    assert drv.refusal(Capability.REPLICATE) == "the cluster lists no compliant snapmirror licence"
    with pytest.raises(Unsupported, match="does not support replicate: the cluster lists no compliant snapmirror licence"):
        drv.replicate(drv.create_volume("vol0", 1 << 30))
    drv.teardown()


def test_replicate_needs_the_arrays_relationship_not_only_the_labs_word(
    tmp_path: Path, server: ContractServer, array: FakeOntap, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    array.relationships.clear()  # licensed, `snapmirror: true` in the lab, but the FlexVol is no SnapMirror source
    drv = make_driver(tmp_path, server, run, monkeypatch)
    assert Capability.REPLICATE not in drv.capabilities
    assert "GET /api/snapmirror/relationships" in server.calls()  # asked of the array at setup
    assert drv.refusal(Capability.REPLICATE) == "no SnapMirror relationship has svm1:iogate_vol as its source"


@pytest.mark.parametrize("state", ["noncompliant", None])
def test_a_licence_counts_only_when_the_cluster_says_compliant(
    state: str | None, tmp_path: Path, server: ContractServer, array: FakeOntap, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    array.licence_states["snapmirror"] = state  # None: the package is listed without a state
    drv = make_driver(tmp_path, server, run, monkeypatch)
    assert Capability.REPLICATE not in drv.capabilities


def test_a_cluster_without_the_efficiency_scanner_offers_no_dedupe(
    tmp_path: Path, server: ContractServer, array: FakeOntap, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    del array.flexvol["efficiency"]["scanner"]  # as a 9.8 cluster answers
    drv = make_driver(tmp_path, server, run, monkeypatch)
    assert Capability.DEDUPE not in drv.capabilities and Capability.REPLICATE in drv.capabilities
    with pytest.raises(Unsupported, match="does not support dedupe: the cluster reports no efficiency scanner"):
        drv.dedupe_run()


def test_a_timeout_names_the_call(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    driver = make_driver(tmp_path, server, run, monkeypatch, timeout_s=5)  # the answer never comes: any timeout will do
    server.inject(Fault("POST", r"/api/protocols/san/lun-maps$", hang=True))
    with pytest.raises(ArrayError, match=r"POST /protocols/san/lun-maps lun \S+ igroup \S+: no answer: timed out"):
        driver.create_volume("vol0", 1 << 30)


def test_rejected_credentials_name_the_call_without_the_password(driver: ontap.Ontap, array: FakeOntap, canary: str) -> None:
    array.auth = "Basic changed"  # the password was rotated under the run
    with pytest.raises(ArrayError, match=r"POST /storage/luns lun \S+: HTTP 401") as failed:
        driver.create_volume("vol0", 1 << 30)
    assert canary not in str(failed.value)


def test_reads_are_retried_through_5xx(driver: ontap.Ontap, server: ContractServer) -> None:
    server.inject(Fault("GET", r"/api/protocols/san/iscsi/services$", status=503, times=2))
    volume = driver.create_volume("vol0", 1 << 30)
    iscsi = volume.export_of(IscsiExport)
    assert iscsi is not None and iscsi.target_iqn
    assert server.calls().count("GET /api/protocols/san/iscsi/services") == 3
    driver.teardown()


def test_array_metrics_of_a_lun_are_the_samples_of_the_window_oldest_first_with_units(driver: ontap.Ontap, array: FakeOntap) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    (lun_uuid,) = array.lun_born
    now = datetime.now(UTC)
    array.lun_born[lun_uuid] = now - timedelta(minutes=10)
    start, end = now - timedelta(minutes=5), now - timedelta(minutes=1)
    samples = driver.volume_metrics(volume, start, end)
    assert array.metrics_intervals == ["1h"]  # the finest ONTAP keeps: 15 s samples of the last hour
    assert 15 <= len(samples) <= 17 and all(start <= s.time <= end for s in samples)
    assert [s.time for s in samples] == sorted(s.time for s in samples)
    first = samples[0]
    assert isinstance(first, ArraySample) and first.interval_s == 15.0 and first.note == ""
    assert first.read_iops == 1000 + int(first.time.timestamp()) // 15 % 100 and first.write_iops == 500.0
    assert (first.read_latency_us, first.write_latency_us) == (250.0, 400.0)  # ONTAP's latency is in microseconds
    driver.teardown()


def test_a_window_reaching_further_back_asks_the_next_interval(driver: ontap.Ontap, array: FakeOntap) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    (lun_uuid,) = array.lun_born
    now = datetime.now(UTC)
    array.lun_born[lun_uuid] = now - timedelta(days=2)
    samples = driver.volume_metrics(volume, now - timedelta(hours=3), now)
    assert array.metrics_intervals == ["1d"] and {s.interval_s for s in samples} == {300.0} and 35 <= len(samples) <= 37
    array.metric_status = "backfilled_data"
    marked = driver.volume_metrics(volume, now - timedelta(hours=3), now - timedelta(hours=2))
    assert marked and {s.note for s in marked} == {"backfilled_data"}  # the array's remark stays with its figures
    assert samples_evidence(marked)["notes"] == ["backfilled_data"]  # type: ignore[index]
    driver.teardown()


def test_a_window_without_samples_is_no_data_not_zeros(driver: ontap.Ontap, array: FakeOntap, server: ContractServer) -> None:
    volume = driver.create_volume("vol0", 1 << 30)  # the LUN was created just now: it has no samples from before
    now = datetime.now(UTC)
    samples = driver.volume_metrics(volume, now - timedelta(minutes=30), now - timedelta(minutes=20))
    assert samples == [] and samples_evidence(samples) is None
    assert any(r.path.endswith("/metrics") for r, _ in server.log)  # the array was asked, and answered nothing for it
    with pytest.raises(ValueError, match="timezone-aware"):
        driver.volume_metrics(volume, datetime(2026, 1, 1), datetime(2026, 1, 2))
    driver.teardown()


def test_a_namespace_has_no_metrics_in_the_ontap_9_8_description(driver: ontap.Ontap) -> None:
    namespace = driver.create_volume("ns0", 1 << 30, export="nvme-tcp")
    now = datetime.now(UTC)
    with pytest.raises(Unsupported, match="namespace metrics"):
        driver.volume_metrics(namespace, now - timedelta(minutes=5), now)
    driver.teardown()


NEWER_PATHS = Path("/work/shared/specs/netapp-ontap/paths-from-trident-HEAD-go-client-71dd716.txt")


def test_every_path_the_driver_calls_is_still_in_the_ontap_9_19_path_list(driver: ontap.Ontap, server: ContractServer) -> None:
    # The schemas above are 9.8-era; the 9.19 client's path list says the calls still exist on current ONTAP.
    import re

    templates = [line.strip().replace("//", "/") for line in NEWER_PATHS.read_text().splitlines() if line.strip()]
    patterns = [re.compile("^/api" + "[^/]+".join(re.escape(p) for p in re.split(r"\{[^}]+\}", t)) + "$") for t in templates]
    lun = driver.create_volume("vol0", 1 << 30, export="iscsi")
    driver.create_volume("ns0", 1 << 30, export="nvme-tcp")
    driver.snapshot_delete(driver.snapshot_create(lun, "s1"))
    driver.replicate(lun)
    driver.dedupe_run()
    driver.volume_metrics(lun, datetime.now(UTC) - timedelta(minutes=5), datetime.now(UTC))
    driver.teardown()
    called = sorted({r.path for r, _ in server.log})
    assert len(called) > 15
    missing = [path for path in called if not any(p.match(path) for p in patterns)]
    assert missing == []


# -- paging: collections are read through every _links.next, each page holding what it says, or refused ----------
def test_a_licence_on_a_later_page_still_counts(
    tmp_path: Path, server: ContractServer, array: FakeOntap, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    array.max_page = 2  # snapmirror is the fourth of five licences: on the second page
    drv = make_driver(tmp_path, server, run, monkeypatch)
    assert Capability.REPLICATE in drv.capabilities
    licence_pages = [first for path, first, _ in array.pages_served if path.endswith("/licenses")]
    assert licence_pages == [0, 2, 4]
    assert any("start.record" in r.query for r, _ in server.log)  # the next link was followed, as the cluster gave it


def _lun_with_samples(driver: ontap.Ontap, array: FakeOntap) -> tuple[Any, datetime, datetime]:
    """A LUN 10 minutes old on a cluster whose sample clock stands still on a whole 15 s step: the samples and
    their pages are the same however long the calls take (a step passing between two pages shifts the records)."""
    volume = driver.create_volume("vol0", 1 << 30)
    (lun_uuid,) = array.lun_born
    now = datetime.fromtimestamp(int(datetime.now(UTC).timestamp()) // 15 * 15, UTC)
    array.metrics_now = now
    array.lun_born[lun_uuid] = now - timedelta(minutes=10)
    return volume, now - timedelta(minutes=5), now - timedelta(minutes=1)


def test_metrics_longer_than_a_page_are_read_to_the_last_page(driver: ontap.Ontap, array: FakeOntap) -> None:
    volume, start, end = _lun_with_samples(driver, array)
    whole = driver.volume_metrics(volume, start, end)
    array.max_page = 7
    paged = driver.volume_metrics(volume, start, end)
    # 15 s samples stamped from the LUN's birth (now - 600 s) to now: 41 records, newest first; the window
    # [now - 300 s, now - 60 s] holds the 17 stamped now - 300, now - 285, ..., now - 60.
    assert len(whole) == 17 and paged == whole
    assert [s.time for s in whole] == [start + timedelta(seconds=15 * i) for i in range(17)]
    metric_pages = [first for path, first, _ in array.pages_served if path.endswith("/metrics")][1:]
    assert metric_pages == [0, 7, 14, 21, 28, 35]  # 41 records, 7 a page: the last page holds 6
    driver.teardown()


@pytest.mark.parametrize(
    ("lie", "says"),
    [("num_records_off", r"page 2 says num_records 8 but holds 7 records"), ("next_loops", r"the next link \S+ came round again")],
)
def test_a_collection_whose_pages_do_not_add_up_fails_naming_the_call(driver: ontap.Ontap, array: FakeOntap, lie: str, says: str) -> None:
    volume, start, end = _lun_with_samples(driver, array)
    array.max_page, array.paging_lie = 7, lie
    with pytest.raises(ArrayError, match=rf"GET /storage/luns/\{{uuid\}}/metrics lun \S+vol0: incomplete list after 3 attempts: {says}"):
        driver.volume_metrics(volume, start, end)
    array.paging_lie = None
    driver.teardown()


def test_the_clusters_clock_is_read_from_the_nodes_date(driver: ontap.Ontap, array: FakeOntap, server: ContractServer) -> None:
    array.clock_ahead = timedelta(seconds=90)  # the nodes run 90 s ahead, in a -04:00 time zone
    before = datetime.now(UTC)
    got = driver.array_clock()
    took = (datetime.now(UTC) - before).total_seconds()
    assert got.offset_s is not None and got.uncertainty_s is not None and got.source == "GET /cluster/nodes date"
    # The nodes' date is 90 s ahead cut to whole seconds, read somewhere within the call: the offset can be off by
    # at most that second and the call's duration, and the driver's stated uncertainty must cover as much.
    assert 90 - 1 - took <= got.offset_s <= 90 + took and got.uncertainty_s >= 1.0
    assert any(r.query.get("fields") == ["name,date"] for r, _ in server.log if r.path == "/api/cluster/nodes")


def test_what_the_driver_does_not_offer_is_refused_naming_driver_operation_and_why(driver: ontap.Ontap) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    reasons = assert_refusals(driver, volume)
    assert [r.split(":")[0] for r in reasons] == ["restore", "mirror", "qos"]
    assert "rolls back every LUN and namespace of the FlexVol" in reasons[0]
    driver.teardown()


def test_dedupe_off_on_the_flexvol_is_the_reason_given(
    tmp_path: Path, server: ContractServer, array: FakeOntap, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    array.flexvol["efficiency"]["dedupe"] = "none"
    drv = make_driver(tmp_path, server, run, monkeypatch)
    with pytest.raises(Unsupported, match=r"array driver ontap does not support dedupe: FlexVol iogate_vol has dedupe off"):
        drv.dedupe_run()


# -- half-done provisioning: the host mapping fails after the LUN was made -----------------------------------------
test_a_failed_mapping_names_the_call_is_not_repeated_and_leaks_nothing = failed_mapping_test(
    make_driver,
    r"/api/protocols/san/lun-maps$",
    error=r"POST /protocols/san/lun-maps lun \S+vol0 igroup \S+h1_iscsi",
    leftovers=lambda fake: {"luns": fake.objects["luns"], "igroups": fake.objects["igroups"], "lun_maps": fake.lun_maps},
)


def test_the_emulated_flexvol_offers_no_dedupe(tmp_path: Path, canary: str, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    # The lab VM's emulated ONTAP (backed_ontap.py) keeps its LUNs on LVM thin LVs, which share no blocks: a
    # scanner there saves nothing, so the driver must refuse dedupe with ONTAP's own reason, not run a no-op pass.
    from selftests.vendors.backed_ontap import BackedOntap

    with ContractServer(BackedOntap("iogate", canary, backing=None), contract(), tmp_path) as srv:  # type: ignore[arg-type]
        drv = make_driver(tmp_path, srv, run, monkeypatch)
        assert Capability.DEDUPE not in drv.capabilities
        # The tests' skip reason names the driver's reason, not only the capability.
        assert lacking(drv, "ontap", [Capability.SNAPSHOT, Capability.DEDUPE]) == (
            "array driver ontap lacks capability dedupe: FlexVol iogate_vol has dedupe off (efficiency.dedupe none)"
        )
        with pytest.raises(Unsupported, match=r"does not support dedupe: FlexVol iogate_vol has dedupe off"):
            drv.dedupe_run()
    assert srv.violations == []
