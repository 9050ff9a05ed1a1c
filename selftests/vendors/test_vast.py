"""VAST driver, contract depth: vastpy against a fake VMS whose every request and response is checked against
the VMS 5.5 OpenAPI description (selftests/vendors/fake_vast.py)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iogate.arrays import vast, vendor_base
from iogate.arrays.base import Capability
from iogate.arrays.exports import NfsExport, NvmeTcpExport
from iogate.errors import ArrayError, IOGateError
from iogate.lab import load_lab
from iogate.lab.support import served_connectors
from iogate.run import Run
from iogate.run.resources import release_all
from selftests.vendors.conftest import INITIATORS, PASSWORD_ENV, make_lab
from selftests.vendors.fake_vast import BASE, SPEC_530, FakeVast, VastContract
from selftests.vendors.refusals import assert_refusals
from selftests.vendors.server import ContractServer, Fault, Reply, Request

pytestmark = pytest.mark.vendors
pytest.importorskip("vastpy", reason="vendor SDK not installed: pip install -r requirements-vendors.txt")
EXAMPLE = Path(__file__).resolve().parents[2] / "labs" / "examples" / "vast.yaml"
NQN = INITIATORS["h1"]["nvme-tcp"]


@pytest.fixture
def array(canary: str) -> FakeVast:
    return FakeVast(canary)


@pytest.fixture
def server(tmp_path: Path, array: FakeVast) -> Iterator[ContractServer]:
    with ContractServer(array, VastContract(), tmp_path) as srv:
        yield srv
    assert srv.violations == [], "requests or responses outside the VMS 5.5 description:\n" + "\n".join(srv.violations)


def options(server: ContractServer, **extra: Any) -> dict[str, Any]:
    return {
        "management": server.address,
        "password": f"${{env:{PASSWORD_ENV}}}",
        "verify_tls": str(server.cert),
        "timeout_s": 30,
        "retry_backoff_s": 0,
        "vip_pool": "protocols",
        "task_poll_s": 0,
        **extra,
    }


def make_driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, **extra: Any) -> vast.Vast:
    monkeypatch.setattr(vendor_base, "read_initiator_ids", lambda lab: INITIATORS)
    drv = vast.Vast(make_lab(tmp_path, "vast", options(server, **extra), connector="nvme-tcp"), run)
    drv.setup()
    return drv


@pytest.fixture
def driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch) -> vast.Vast:
    return make_driver(tmp_path, server, run, monkeypatch)


def nothing_left(array: FakeVast) -> dict[str, Any]:
    return {kind: left for kind, left in array.leftovers().items() if left}


def sent(server: ContractServer, method: str, pattern: str) -> list[str]:
    return [c for c in server.calls() if c.startswith(f"{method} ") and re.search(pattern, c.split(" ", 1)[1])]


# -- facts, provisioning, connect-export, snapshot, teardown -----------------------------------------------------
def test_facts_come_from_the_cluster_and_the_vip_pool(driver: vast.Vast) -> None:
    facts = driver.facts()
    assert facts["array.model"] == "VAST Data cluster vast-lab" and facts["array.firmware"] == "VAST OS 5.5.0-sp10"
    assert facts["array.serial"] == "VA2241001" and facts["array.drr_at_setup"] == "1:3.2"
    assert facts["array.data_reduction_ratio"] == "1:3.2 (cluster-wide, GET /clusters/ drr)"
    assert driver.capabilities == {Capability.SNAPSHOT}
    assert driver._data_address == "192.0.2.50"  # the first address of pool "protocols", not of pool "other"


def test_a_block_volume_is_a_subsystem_view_with_one_volume_mapped_to_the_hosts_nqn(
    driver: vast.Vast, array: FakeVast, server: ContractServer
) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="nvme-tcp")
    ((view_id, view),) = array.views.items()
    assert view["path"] == f"/iogate/{driver.prefix}vol0" and view["protocols"] == ["BLOCK"] and view["create_dir"] is True
    (policy,) = array.policies.values()
    assert view["policy_id"] == policy["id"] and policy["vip_pools"] == [7] and policy["nfs_read_write"] == ["*"]
    ((vol_id, stored),) = array.volumes.items()
    assert stored["name"] == f"{driver.prefix}vol0" and stored["size"] == 1 << 30 and stored["view_id"] == view_id
    (host,) = array.hosts.values()
    assert host["nqn"] == NQN and host["tenant_id"] == 1 and array.mappings == [(vol_id, host["id"])]
    assert volume.identity.nguid == stored["nguid"]
    export = volume.export_of(NvmeTcpExport)
    assert export == NvmeTcpExport(traddr="192.0.2.50", subsys_nqn=view["nqn"], trsvcid="4420")
    (patch,) = [r for r, _ in server.log if r.method == "PATCH"]
    assert patch.path == f"{BASE}/volumes/{vol_id}/update_hosts" and patch.body == {"ids_to_add": [host["id"]]}
    assert sent(server, "GET", r"/vtasks/\d+/$")  # the mapping's task was followed to its end
    driver.teardown()
    assert nothing_left(array) == {}


def test_an_nfs_volume_is_a_view_with_a_quota_mounted_through_the_pool(driver: vast.Vast, array: FakeVast) -> None:
    volume = driver.create_volume("vol1", 10 << 30, export="nfs")
    (view,) = array.views.values()
    path = f"/iogate/{driver.prefix}vol1"
    assert view["path"] == path and view["protocols"] == ["NFS", "NFS4"] and "nqn" not in view
    (quota,) = array.quotas.values()
    assert quota["path"] == path and quota["hard_limit"] == 10 << 30
    assert volume.export_of(NfsExport) == NfsExport(server="192.0.2.50", path=path)
    assert volume.identity.nfs_export == f"192.0.2.50:{path}" and array.hosts == {}  # NFS needs no block host
    snap = driver.snapshot_create(volume, "s1")
    (stored,) = array.snapshots.values()
    assert stored["path"] == path and stored["name"] == f"{driver.prefix}vol1-s1" and snap.evidence["id"] == stored["id"]
    driver.snapshot_delete(snap)
    assert array.snapshots == {}
    driver.teardown()
    assert nothing_left(array) == {}  # the directory under the view is removed too


def test_two_volumes_share_the_policy_and_the_host_and_teardown_removes_all(driver: vast.Vast, array: FakeVast) -> None:
    a = driver.create_volume("a", 1 << 30)  # default_protocol: nvme-tcp
    driver.create_volume("b", 1 << 30, export="nfs")
    driver.snapshot_create(a, "s1")
    assert len(array.policies) == 1 and len(array.hosts) == 1 and len(array.views) == 2 and len(array.snapshots) == 1
    driver.teardown()
    assert nothing_left(array) == {}


def test_a_volume_without_its_nguid_yet_is_looked_at_until_the_array_has_it(
    driver: vast.Vast, array: FakeVast, server: ContractServer
) -> None:
    array.nguid_later = True
    volume = driver.create_volume("vol0", 1 << 30)
    (stored,) = array.volumes.values()
    assert volume.identity.nguid == stored["nguid"] and sent(server, "GET", rf"/volumes/{stored['id']}/$")
    driver.teardown()


def test_the_data_reduction_ratio_after_the_run_is_a_fact(driver: vast.Vast, array: FakeVast) -> None:
    array.cluster |= {"drr_text": "1:4.5"}
    assert driver.facts_at_end() == {"array.data_reduction_ratio_at_end": "1:4.5 (cluster-wide, GET /clusters/ drr)"}
    del array.cluster["drr_text"], array.cluster["drr"]
    assert driver.facts_at_end() == {"array.data_reduction_ratio_at_end": "not reported (GET /clusters/ has no drr)"}
    array.credentials_valid = False  # a read that fails is the fact's text, never raised: the teardown still runs
    assert driver.facts_at_end()["array.data_reduction_ratio_at_end"].startswith("not read: ")


def test_the_data_reduction_ratio_is_evidence_of_the_cluster_and_of_each_view(driver: vast.Vast, array: FakeVast) -> None:
    driver.create_volume("vol0", 1 << 30, export="nfs")
    (view,) = array.views.values()
    view["logical_capacity"], view["physical_capacity"] = 4 << 30, 1 << 30
    evidence = driver.data_reduction()
    assert evidence["scope"] == "cluster" and evidence["drr"] == 3.2 and evidence["drr_text"] == "1:3.2"
    assert evidence["logical_space_in_use_bytes"] == 32 << 40 and evidence["physical_space_in_use_bytes"] == 10 << 40
    assert evidence["views"] == {"vol0": {"logical_bytes": 4 << 30, "physical_bytes": 1 << 30}}
    driver.teardown()


def test_every_call_of_a_lifecycle_is_described_in_vms_5_3_0_too(
    tmp_path: Path, canary: str, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    array = FakeVast(canary, version="5.3.0")  # its Volume has no state or full_path
    with ContractServer(array, VastContract(SPEC_530), tmp_path) as older:
        driver = make_driver(tmp_path, older, run, monkeypatch)
        volume = driver.create_volume("vol0", 1 << 30)
        driver.snapshot_create(volume, "s1")
        driver.create_volume("vol1", 1 << 30, export="nfs")
        driver.data_reduction()
        driver.teardown()
    assert nothing_left(array) == {} and len(older.log) > 20
    assert older.violations == [], "requests or responses outside the VMS 5.3.0 description:\n" + "\n".join(older.violations)


# -- refusals ----------------------------------------------------------------------------------------------------
def test_what_the_api_cannot_do_is_refused_naming_driver_operation_and_why(driver: vast.Vast, run: Run) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    reasons = assert_refusals(driver, volume)
    assert [r.split(":")[0] for r in reasons] == ["restore", "dedupe", "replicate", "mirror", "qos", "metrics"]
    assert any("no in-place revert" in r for r in reasons) and any("without a schema" in r for r in reasons)
    entries = len(run.ledger.entries)
    for protocol in ("iscsi", "fc"):
        with pytest.raises(ArrayError, match="maps over nvme-tcp, not"):
            driver.create_volume(f"v-{protocol}", 1 << 30, export=protocol)
    assert len(run.ledger.entries) == entries  # refused before anything was journalled or asked of the array
    driver.teardown()


def test_the_lab_check_refuses_iscsi_and_fc_and_accepts_nfs_and_nvme() -> None:
    served = served_connectors("vast", vast.Vast)
    assert served is not None and {"nfs", "nvme-tcp"} <= served and not {"iscsi", "fc", "multipath"} & served


# -- paging ------------------------------------------------------------------------------------------------------
def test_a_list_longer_than_the_arrays_page_is_read_to_its_last_page(driver: vast.Vast, array: FakeVast) -> None:
    for i in range(5):
        driver.create_volume(f"v{i}", 1 << 30, export="nfs")
    array.max_page = 2
    whole = vast.list_all(driver.api, driver._conn, "views", "every view")
    assert sorted(v["path"] for v in whole) == sorted(v["path"] for v in array.views.values()) and len(whole) == 5
    pages = [(page, n) for path, page, n in array.pages_served if path.endswith("/views/")][-3:]
    assert pages == [(1, 2), (2, 2), (3, 1)]
    driver.teardown()  # every lookup of the teardown pages too
    assert nothing_left(array) == {}


@pytest.mark.parametrize(("lie", "says"), [("lost_page", r"held 4 of the 5 items"), ("count_short", r"hold more than the 4 items")])
def test_a_list_whose_pages_do_not_add_up_fails_naming_the_call(driver: vast.Vast, array: FakeVast, lie: str, says: str) -> None:
    for i in range(5):
        driver.create_volume(f"v{i}", 1 << 30, export="nfs")
    array.max_page, array.paging_lie = 2, lie
    with pytest.raises(ArrayError, match=rf"GET /views/ every view: incomplete list after 3 attempts: the pages {says}"):
        vast.list_all(driver.api, driver._conn, "views", "every view")
    array.paging_lie = None
    driver.teardown()


def test_a_cleanup_lookup_on_a_lying_list_fails_and_keeps_the_ledger_entry(driver: vast.Vast, array: FakeVast, run: Run) -> None:
    driver.create_volume("vol0", 1 << 30)
    array.paging_lie = "count_short"
    with pytest.raises(IOGateError, match=r"incomplete list"):
        release_all(run.ledger)
    assert array.volumes and array.views and run.ledger.open_entries()  # nothing taken for gone on a partial answer
    array.paging_lie = None
    release_all(run.ledger)
    assert nothing_left(array) == {} and run.ledger.open_entries() == []


# -- failures ----------------------------------------------------------------------------------------------------
def test_refused_credentials_fail_closed_naming_the_call_without_the_secret(
    tmp_path: Path, server: ContractServer, array: FakeVast, run: Run, monkeypatch: pytest.MonkeyPatch, canary: str,
    all_logs: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    driver = make_driver(tmp_path, server, run, monkeypatch)
    array.credentials_valid = False  # the password changed, or the API token expired
    with pytest.raises(ArrayError, match=r"POST /viewpolicies/ view policy \S+: HTTP 401: the array refused the credentials") as failed:
        driver.create_volume("vol0", 1 << 30)
    assert len(sent(server, "POST", r"/viewpolicies/$")) == 1  # not repeated: no session to renew
    text = "\n".join([str(failed.value), *(r.getMessage() for r in all_logs.records), run.ledger.path.read_text()])
    assert canary not in text
    array.credentials_valid = True
    release_all(run.ledger)
    assert nothing_left(array) == {}


def test_an_api_token_is_sent_as_api_token(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, canary: str
) -> None:
    driver = make_driver(tmp_path, server, run, monkeypatch, auth="api_token")
    assert driver.facts()["array.model"].startswith("VAST Data")
    assert all(r.headers.get("authorization") == f"Api-Token {canary}" for r, _ in server.log)


def test_a_failed_mapping_task_names_the_task_and_leaks_nothing(driver: vast.Vast, array: FakeVast, run: Run) -> None:
    array.fail_tasks = True
    with pytest.raises(
        ArrayError, match=r"PATCH /volumes/\{id\}/update_hosts volume \S+vol0 host \S+h1: task \d+ ended FAILED: .*unreachable"
    ):
        driver.create_volume("vol0", 1 << 30)
    assert array.mappings == [] and array.volumes  # nothing mapped, the volume made
    release_all(run.ledger)  # what `iogate cleanup` runs on the journal
    assert nothing_left(array) == {} and run.ledger.open_entries() == []


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        (Fault("PATCH", r"/update_hosts$", status=503, after_app=True), "HTTP 503"),  # mapped on the array, the answer lost
        (Fault("PATCH", r"/update_hosts$", status=500), "HTTP 500"),
        (Fault("PATCH", r"/update_hosts$", hang=True), "no answer: timed out"),
    ],
    ids=["lost-answer", "refused", "timeout"],
)
def test_a_failed_mapping_call_names_the_call_is_not_repeated_and_leaks_nothing(
    tmp_path: Path, server: ContractServer, array: FakeVast, run: Run, monkeypatch: pytest.MonkeyPatch, fault: Fault, says: str
) -> None:
    driver = make_driver(tmp_path, server, run, monkeypatch, timeout_s=5)  # the timeout case: any timeout will do
    array.task_polls = 0
    server.inject(fault)
    with pytest.raises(ArrayError, match=rf"PATCH /volumes/\{{id\}}/update_hosts volume \S+vol0 host \S+h1: {says}"):
        driver.create_volume("vol0", 1 << 30)
    assert len(sent(server, "PATCH", r"/update_hosts$")) == 1  # a write is not repeated
    if fault.after_app:  # the array ran the task of the lost answer: it maps once looked at (here, by the cleanup's lookups)
        next(iter(array.tasks.values()))["apply"]()
        assert array.mappings
    release_all(run.ledger)
    assert nothing_left(array) == {} and run.ledger.open_entries() == []


def test_a_lost_answer_to_a_create_is_not_repeated_and_cleanup_finds_it_by_name(
    driver: vast.Vast, array: FakeVast, server: ContractServer, run: Run
) -> None:
    server.inject(Fault("POST", r"/volumes/$", status=503, after_app=True))
    with pytest.raises(ArrayError, match=r"POST /volumes/ volume /iogate/\S+vol0/\S+vol0: HTTP 503"):
        driver.create_volume("vol0", 1 << 30)
    assert len(sent(server, "POST", r"/volumes/$")) == 1 and len(array.volumes) == 1
    release_all(run.ledger)
    assert nothing_left(array) == {} and run.ledger.open_entries() == []


def test_a_read_that_fails_once_is_retried(driver: vast.Vast, array: FakeVast, server: ContractServer) -> None:
    driver.create_volume("vol0", 1 << 30, export="nfs")
    server.inject(Fault("GET", r"/clusters/$", status=503))
    assert driver.data_reduction()["drr"] == 3.2
    assert len(sent(server, "GET", r"/clusters/$")) == 3  # setup's, the failed one, the retry
    driver.teardown()


# -- the contract itself -----------------------------------------------------------------------------------------
def test_the_contract_check_fails_a_deviating_request() -> None:
    check = VastContract()
    good = Request("POST", f"{BASE}/volumes/", {}, {}, {"name": "v", "size": 1, "view_id": 3})
    assert check.check_request(good) == []
    assert check.check_request(Request("POST", f"{BASE}/volumes/", {}, {}, {"name": "v", "size": 1, "view_id": 3, "nguid": "x"})) == [
        "field nguid is not defined by the spec"
    ]
    assert check.check_request(Request("GET", f"{BASE}/viewpolicies/", {"page_size": ["10"]}, {}, None)) == [
        "query parameter 'page_size' is not declared for GET /viewpolicies/"
    ]
    assert check.check_request(Request("PATCH", f"{BASE}/volumes/3/update_hosts/", {}, {}, {"ids_to_add": [1]})) == [
        "no such path in the spec"
    ]
    assert check.check_request(Request("POST", f"{BASE}/iscsitargets/", {}, {}, {"iqn": "iqn.x"})) == ["no such path in the spec"]


def test_the_contract_check_fails_a_deviating_answer() -> None:
    check = VastContract()
    listing = Request("GET", f"{BASE}/views/", {"page": ["1"], "page_size": ["2"]}, {}, None)
    ok = Reply(200, {"count": 1, "next": None, "previous": None, "results": [{"id": 1, "path": "/a", "policy_id": 2}]})
    assert check.check_response(listing, ok) == []
    bad = Reply(200, {"count": 1, "next": None, "results": [{"id": 1, "path": "/a", "policy_id": 2, "iqn": "x"}], "total": 1})
    assert check.check_response(listing, bad) == [
        "field response.total is not in the paged envelope",
        "field response[].iqn is not defined by the spec",
    ]


# -- the example lab ---------------------------------------------------------------------------------------------
def test_the_example_lab_loads_with_nfs_and_nvme_tcp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAST_PASSWORD", "example-secret-value")
    lab = load_lab(EXAMPLE)
    assert lab.array.driver == "vast" and lab.array.options["password"] == "${env:VAST_PASSWORD}"
    assert [p.connector for p in lab.protocols] == ["nfs", "nvme-tcp"] and len(lab.hosts) == 2
    assert EXAMPLE.read_text().startswith("# yaml-language-server: $schema=../lab.schema.json\n")


def test_an_iscsi_protocol_in_a_vast_lab_is_refused_at_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAST_PASSWORD", "example-secret-value")
    broken = tmp_path / "vast.yaml"
    broken.write_text(EXAMPLE.read_text().replace("connector: nvme-tcp}", "connector: iscsi}"))
    with pytest.raises(IOGateError, match=r"cannot export volumes over 'iscsi'"):
        load_lab(broken)


# -- a run killed after provisioning: `iogate cleanup` in a fresh process removes it all ---------------------------
CHILD = """
import json, sys, time
from iogate.arrays import vast, vendor_base
from iogate.lab import ArrayConfig, HostConfig, Lab, ProtocolConfig
from iogate.run import Run
options, initiators, workdir = json.loads(sys.argv[1])
vendor_base.read_initiator_ids = lambda lab: initiators
lab = Lab(name="crash", array=ArrayConfig(name="crash", driver="vast", options=options), hosts=[HostConfig(name="h1")],
          protocols=[ProtocolConfig(name="nvme-tcp", connector="nvme-tcp")], workdir=workdir)
array = vast.Vast(lab, Run.start(workdir, "crash"))
array.setup()
volume = array.create_volume("vol0", 1 << 30)
array.create_volume("vol1", 1 << 30, export="nfs")
array.snapshot_create(volume, "s1")
print("provisioned", flush=True)
time.sleep(600)
"""


def test_cleanup_after_sigkill_leaves_nothing_on_the_array(tmp_path: Path, server: ContractServer, array: FakeVast, canary: str) -> None:
    repo, workdir = Path(__file__).resolve().parents[2], tmp_path / "work"
    env = {**os.environ, PASSWORD_ENV: canary}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, json.dumps([options(server), INITIATORS, str(workdir)])],
        cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = child.stdout.readline() if child.stdout else ""
        assert line.strip() == "provisioned", child.stderr.read() if child.stderr else ""
        assert array.views and array.volumes and array.mappings and array.snapshots and array.quotas
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    done = subprocess.run(
        [sys.executable, "-m", "iogate", "cleanup", "--workdir", str(workdir)],
        cwd=repo, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert nothing_left(array) == {}
    assert canary not in done.stdout + done.stderr
