"""Hitachi VSP driver, contract depth: requests against a fake CMREST array whose every request
and response is checked against ../shared/specs/hitachi/endpoints.md."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iogate.arrays import hitachi, vendor_base
from iogate.arrays.base import Capability, Unsupported
from iogate.arrays.exports import FcExport, IscsiExport, NfsExport, NvmeTcpExport
from iogate.errors import ArrayError
from iogate.lab import HostConfig, ProtocolConfig
from iogate.run import Run
from iogate.run.ledger import Ledger
from iogate.run.resources import release_all
from selftests.vendors.conftest import INITIATORS, PASSWORD_ENV, make_lab
from selftests.vendors.failures import failed_mapping_test
from selftests.vendors.fake_hitachi import FakeHitachi, HitachiContract, JobRule
from selftests.vendors.refusals import assert_refusals
from selftests.vendors.server import ContractServer, Fault, Reply, Request

pytestmark = pytest.mark.vendors
WWPNS = {"h1": ["10000090fa1b2c3d", "10000090FA1B2C3E"]}
NQN = INITIATORS["h1"]["nvme-tcp"]
IQN = INITIATORS["h1"]["iscsi"]
FIRST_LDEV = 4096


@pytest.fixture
def array(canary: str) -> FakeHitachi:
    return FakeHitachi("iogate", canary)


@pytest.fixture
def server(tmp_path: Path, array: FakeHitachi) -> Iterator[ContractServer]:
    with ContractServer(array, HitachiContract(), tmp_path) as srv:
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
        "pool_id": 10,
        "ldev_id_first": FIRST_LDEV,
        "ldev_id_last": FIRST_LDEV + 63,
        "snapshot_pool_id": 20,
        "fc_ports": ["CL1-A", "CL2-A"],
        "fc_wwpns": WWPNS,
        "iscsi_port": "CL1-B",
        "nvm_subsystem_id": 5,
        "nvme_traddr": "192.0.2.82",
        "nvme_subsys_nqn": "nqn.1994-04.jp.co.hitachi:nvme:storage-subsystem-sn.2-22b3f1-nvmssid.00005",
        "job_poll_s": 0,
        "hnas_management": server.address,  # the same test server plays the SMU (its paths are /v7/storage/...)
        "hnas_api_key": f"${{env:{PASSWORD_ENV}}}",
        "hnas_virtual_server_id": "2",
        "hnas_storage_pool_id": "sp1",
        "nfs_server": "192.0.2.85",
        **extra,
    }


def make_driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, **extra: Any) -> hitachi.Hitachi:
    monkeypatch.setattr(vendor_base, "read_initiator_ids", lambda lab: {h: dict(ids) for h, ids in INITIATORS.items()})
    drv = hitachi.Hitachi(make_lab(tmp_path, "hitachi", options(server, **extra)), run)
    drv.setup()
    return drv


@pytest.fixture
def driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch) -> hitachi.Hitachi:
    return make_driver(tmp_path, server, run, monkeypatch)


def nothing_left(array: FakeHitachi) -> dict[str, Any]:
    """What the run could have left on the fake array, by kind (all empty: nothing)."""
    left = {
        "ldevs": array.ldevs, "host groups": array.host_groups, "luns": array.luns, "host nqns": array.host_nqns,
        "namespaces": array.namespaces, "namespace paths": array.namespace_paths, "snapshots": array.snapshots,
        "file systems": array.filesystems, "nfs exports": array.nfs_exports,
    }
    return {kind: items for kind, items in left.items() if items}


# -- provisioning over each protocol -----------------------------------------------------------------
def test_an_iscsi_volume_is_an_ldev_in_the_pool_mapped_through_one_iscsi_target(driver: hitachi.Hitachi, array: FakeHitachi) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="iscsi")
    assert list(array.ldevs) == [FIRST_LDEV]  # the first id of the lab's range
    ldev = array.ldevs[FIRST_LDEV]
    assert ldev["label"] == f"{driver.prefix}vol0" and ldev["poolId"] == 10 and ldev["blockCapacity"] == 2097152  # 1 GiB / 512
    assert ldev["dataReductionMode"] == "disabled"
    ((port, number), group), = array.host_groups.items()
    assert (port, group["hostGroupName"], group["hostMode"]) == ("CL1-B", f"{driver.prefix}iscsi", "LINUX/IRIX")
    assert array.host_iscsis == [{"iscsiName": IQN, "portId": "CL1-B", "hostGroupNumber": number}]
    assert array.luns == {("CL1-B", number, 0): FIRST_LDEV}
    assert volume.identity.wwn == f"naa.60060e8022b3f10000{FIRST_LDEV:014x}"
    assert volume.export_of(IscsiExport) == IscsiExport(portal="192.0.2.81:3260", target_iqn=group["iscsiName"], lun=0)
    driver.teardown()
    assert nothing_left(array) == {}


def test_an_fc_volume_is_mapped_on_every_fc_port_with_the_hosts_wwpns(driver: hitachi.Hitachi, array: FakeHitachi) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="fc")
    assert sorted(p for p, _ in array.host_groups) == ["CL1-A", "CL2-A"]
    assert sorted((w["portId"], w["hostWwn"]) for w in array.host_wwns) == [
        ("CL1-A", "10000090fa1b2c3d"), ("CL1-A", "10000090fa1b2c3e"), ("CL2-A", "10000090fa1b2c3d"), ("CL2-A", "10000090fa1b2c3e"),
    ]
    assert sorted(array.luns.values()) == [FIRST_LDEV, FIRST_LDEV]
    assert volume.export_of(FcExport) == FcExport(lun=0) and volume.identity.wwn
    second = driver.create_volume("vol1", 1 << 30, export="fc")  # the host groups are made once per run
    assert len(array.host_groups) == 2 and second.export_of(FcExport) == FcExport(lun=1)
    driver.teardown()
    assert nothing_left(array) == {} and array.host_wwns == []


def test_an_nvme_volume_is_a_namespace_of_the_labs_subsystem_with_a_path_per_host(driver: hitachi.Hitachi, array: FakeHitachi) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="nvme-tcp")
    assert array.host_nqns == [NQN] and array.namespaces == {1: FIRST_LDEV} and array.namespace_paths == {(NQN, 1)}
    assert volume.identity.nguid == f"60060e8022b3f10000{FIRST_LDEV:014x}"
    export = volume.export_of(NvmeTcpExport)
    assert export is not None and (export.traddr, export.nsid, export.subsys_nqn) == ("192.0.2.82", 1, options_nqn())
    driver.teardown()
    assert nothing_left(array) == {}


def options_nqn() -> str:
    return "nqn.1994-04.jp.co.hitachi:nvme:storage-subsystem-sn.2-22b3f1-nvmssid.00005"


def test_a_host_nqn_registered_before_the_run_is_used_and_left_alone(driver: hitachi.Hitachi, array: FakeHitachi) -> None:
    array.host_nqns.append(NQN)  # the array's admin registered the host already
    driver.create_volume("vol0", 1 << 30, export="nvme-tcp")
    driver.teardown()
    assert array.host_nqns == [NQN] and array.namespaces == {} and array.ldevs == {}


def test_the_labs_data_reduction_mode_is_set_and_the_ratios_are_evidence(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, array: FakeHitachi
) -> None:
    drv = make_driver(tmp_path, server, run, monkeypatch, data_reduction_mode="compression_deduplication")
    assert Capability.COMPRESSION in drv.capabilities and Capability.DEDUPE not in drv.capabilities
    drv.create_volume("vol0", 1 << 30)
    assert array.ldevs[FIRST_LDEV]["dataReductionMode"] == "compression_deduplication"
    evidence = drv.data_reduction_evidence()
    assert evidence == {
        "pool_id": 10, "data_reduction_mode": "compression_deduplication",
        "pool_data_reduction_rate": 3, "pool_compression_rate": 2, "pool_duplication_rate": 45,
        "pool_data_reduction_capacity": 300, "pool_data_reduction_before_capacity": 900,
        "array_efficiency_calculated": True, "array_total_ratio": "4.20", "array_compression_ratio": "1.90",
        "array_dedupe_ratio": "1.80", "array_dedupe_and_compression_ratio": "2.70", "array_calculation_end": "2026-11-27T22:10:00Z",
    }
    drv.teardown()


def test_a_ratio_the_array_does_not_give_is_none_not_zero(driver: hitachi.Hitachi, array: FakeHitachi) -> None:
    del array.pools[10]["dataReductionRate"]
    array.efficiency = {"isCalculated": False}
    evidence = driver.data_reduction_evidence()
    assert evidence["pool_data_reduction_rate"] is None and evidence["array_total_ratio"] is None and evidence["array_dedupe_ratio"] is None


def test_the_facts_name_model_firmware_and_serial(driver: hitachi.Hitachi) -> None:
    assert driver.facts() == {
        "array.driver": "hitachi", "array.model": "Hitachi VSP E990", "array.firmware": "93-06-21-80/00",
        "array.serial": str(0x22B3F1), "array.id": "886000420211", "array.data_reduction_mode": "disabled",
        "array.data_reduction_ratio": "pool 10 dataReductionRate 3; array totalRatio 4.20, dedupeAndCompression 2.70"
                                      " (calculated True, 2026-11-27T22:10:00Z)",
    }


def test_the_data_reduction_after_the_run_is_a_fact_as_the_array_reports_it(driver: hitachi.Hitachi, array: FakeHitachi) -> None:
    array.pools[10]["dataReductionRate"] = 5
    array.efficiency = {"isCalculated": False}
    assert driver.facts_at_end() == {
        "array.data_reduction_ratio_at_end": "pool 10 dataReductionRate 5; array totalRatio None, dedupeAndCompression None"
                                             " (calculated False, None)",
    }


def test_a_configuration_manager_server_is_addressed_through_the_arrays_storage_id(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, array: FakeHitachi
) -> None:
    drv = make_driver(tmp_path, server, run, monkeypatch, storage_device_id="886000420211")
    drv.create_volume("vol0", 1 << 30)
    drv.teardown()
    calls = [c for c in server.calls() if "/sessions" not in c and not c.endswith("/objects/storages")]
    assert calls and all("/objects/storages/886000420211/" in c for c in calls), calls
    assert nothing_left(array) == {}


def test_an_array_the_configuration_manager_does_not_front_is_refused(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ArrayError, match=r"POST /sessions: login failed: KART30013-E The specified object \(storage 999999\)"):
        make_driver(tmp_path, server, run, monkeypatch, storage_device_id="999999")


def test_no_free_ldev_id_in_the_labs_range_fails_before_anything_is_made(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, array: FakeHitachi
) -> None:
    drv = make_driver(tmp_path, server, run, monkeypatch, ldev_id_last=FIRST_LDEV)
    drv.create_volume("vol0", 1 << 30)
    with pytest.raises(ArrayError, match=rf"no free LDEV id in the lab's range {FIRST_LDEV}..{FIRST_LDEV}"):
        drv.create_volume("vol1", 1 << 30)
    assert list(array.ldevs) == [FIRST_LDEV]
    drv.teardown()


# -- HNAS: file systems exported over NFS -----------------------------------------------------------------
def test_an_nfs_volume_is_an_hnas_file_system_exported_from_the_labs_evs(driver: hitachi.Hitachi, array: FakeHitachi) -> None:
    volume = driver.create_volume("fs0", 1 << 30, export="nfs")
    (fs,) = array.filesystems.values()
    label = f"{driver.prefix}fs0"
    assert (fs["label"], fs["capacity"], fs["virtualServerId"], fs["storagePoolId"], fs["isMounted"]) == (label, 1 << 30, "2", "sp1", True)
    (share,) = array.nfs_exports.values()
    assert (share["name"], share["filesystemId"], share["filesystemPath"]) == (f"/{label}", fs["objectId"], "/")
    assert volume.export_of(NfsExport) == NfsExport(server="192.0.2.85", path=f"/{label}")
    assert volume.identity.nfs_export == f"192.0.2.85:/{label}"
    assert array.ldevs == {}  # no LDEV for a file volume
    driver.teardown()
    assert nothing_left(array) == {}


@pytest.mark.parametrize("call", [r"/filesystems$", r"/filesystem-shares/nfs$"])
def test_a_file_system_or_export_made_but_its_answer_lost_is_found_by_name(
    driver: hitachi.Hitachi, array: FakeHitachi, server: ContractServer, run: Run, call: str
) -> None:
    server.inject(Fault("POST", call, status=503, after_app=True))
    with pytest.raises(ArrayError, match=r"POST /filesystem\S* (file system |nfs export /)\S+fs0: HTTP 503"):
        driver.create_volume("fs0", 1 << 30, export="nfs")
    assert array.filesystems and len([c for c in server.calls() if c.startswith("POST") and re.search(call, c)]) == 1
    release_all(run.ledger)
    assert nothing_left(array) == {} and run.ledger.open_entries() == []


def test_an_hnas_snapshot_is_refused_its_api_is_the_cli(driver: hitachi.Hitachi, array: FakeHitachi) -> None:
    volume = driver.create_volume("fs0", 1 << 30, export="nfs")
    with pytest.raises(Unsupported, match="does not support snapshot: HNAS snapshots are CLI-only in public clients"):
        driver.snapshot_create(volume, "s1")
    driver.teardown()


def test_the_hnas_api_key_is_refused_inline_and_never_leaks(
    driver: hitachi.Hitachi, server: ContractServer, run: Run, canary: str, all_logs: pytest.LogCaptureFixture
) -> None:
    from pydantic import ValidationError

    base = {"management": "vsp", "username": "u", "password": "${env:X}", "pool_id": 1, "ldev_id_first": 0, "ldev_id_last": 9}
    with pytest.raises(ValidationError, match="hnas_api_key: give it by reference") as refused:
        hitachi.HitachiOptions.model_validate({**base, "hnas_api_key": "key-inline-123"})
    assert "key-inline-123" not in str(refused.value).split("input_value")[0]
    server.inject(Fault("POST", r"/filesystem-shares/nfs$", status=500))
    with pytest.raises(ArrayError) as failed:
        driver.create_volume("fs0", 1 << 30, export="nfs")
    text = "\n".join([str(failed.value), *(r.getMessage() for r in all_logs.records), run.ledger.path.read_text()])
    assert canary not in text and any(r.headers.get("X-Api-Key") == canary for r, _ in server.log)
    driver.teardown()


def test_the_lab_check_lets_the_hitachi_driver_serve_nfs(tmp_path: Path) -> None:
    from iogate.lab.support import served_connectors

    assert served_connectors("hitachi", hitachi.Hitachi) == {"fc", "iscsi", "multipath", "nvme-tcp", "nvme_tcp", "nfs"}
    base = {"management": "vsp", "username": "u", "password": "${env:X}", "pool_id": 1, "ldev_id_first": 0, "ldev_id_last": 9}
    lab = make_lab(tmp_path, "hitachi", base, connector="nfs")
    assert hitachi.Hitachi.lab_problems(lab, hitachi.HitachiOptions.model_validate({**base, "nfs_server": "192.0.2.85"})) == [
        (("protocols", 0, "connector"), "nfs on the hitachi driver needs array.options hnas_management and hnas_api_key and"
                                        " hnas_virtual_server_id and hnas_storage_pool_id (HNAS / VSP One File)"),
    ]


def test_the_contract_fails_an_hnas_request_that_deviates() -> None:
    contract = HitachiContract()
    key = {"X-Api-Key": "k", "Content-Type": "application/json"}
    good = Request("POST", "/v7/storage/filesystems", {}, key, {"label": "a", "virtualServerId": "2", "storagePoolId": "1", "capacity": 1})
    assert contract.check_request(good) == []
    bad = Request("POST", "/v7/storage/filesystems", {}, key, {"label": "a", "dedupe": True})
    assert contract.check_request(bad) == ["body field 'dedupe' is not one endpoints.md gives for filesystem"]
    assert contract.check_request(Request("POST", "/v7/storage/filesystem-snapshots", {}, key, {})) == [
        "no such call in endpoints.md (HNAS)"
    ]
    assert contract.check_request(Request("GET", "/v8/storage/filesystems", {"label": ["a"]}, {}, None)) == [
        "neither X-Api-Key nor X-Subsystem-User and X-Subsystem-Password"
    ]
    listed = Request("GET", "/v7/storage/filesystems", {}, key, None)
    assert contract.check_response(listed, Reply(202, {})) == ["status 202 is not one of section C's [200, 201, 204]"]


# -- snapshots and restore ------------------------------------------------------------------------------
def test_a_thin_image_snapshot_restores_the_volume_and_is_deleted(driver: hitachi.Hitachi, array: FakeHitachi) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    array.contents[FIRST_LDEV] = "before"
    snap = driver.snapshot_create(volume, "s1")
    ((pvol, mu), pair), = array.snapshots.items()
    assert (pvol, pair["snapshotGroupName"], pair["snapshotPoolId"], pair["status"]) == (FIRST_LDEV, f"{driver.prefix}vol0.s1", 20, "PSUS")
    assert snap.location == f"{FIRST_LDEV},{mu}"
    array.contents[FIRST_LDEV] = "after"
    driver.snapshot_restore(volume, snap)
    assert array.contents[FIRST_LDEV] == "before" and array.restores == [f"{FIRST_LDEV},{mu}"]
    driver.snapshot_delete(snap)
    assert array.snapshots == {}
    driver.teardown()
    assert nothing_left(array) == {}


def test_teardown_deletes_a_volumes_snapshots_before_the_volume(driver: hitachi.Hitachi, array: FakeHitachi) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    driver.snapshot_create(volume, "s1")
    driver.snapshot_create(volume, "s2")
    driver.teardown()  # the fake refuses to delete an LDEV that is still a pair member
    assert nothing_left(array) == {}


def test_snapshots_are_not_offered_without_a_thin_image_pool(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    drv = make_driver(tmp_path, server, run, monkeypatch, snapshot_pool_id=None)
    assert drv.capabilities == frozenset()
    assert drv.refusal(Capability.RESTORE) == "the lab names no snapshot_pool_id (a Thin Image pool)"
    assert drv.refusal(Capability.COMPRESSION) == "the lab sets data_reduction_mode: disabled"
    volume = drv.create_volume("vol0", 1 << 30)
    with pytest.raises(Exception, match="does not support snapshot: the lab names no snapshot_pool_id"):
        drv.snapshot_create(volume, "s1")
    drv.teardown()


# -- jobs ---------------------------------------------------------------------------------------------
def test_every_write_waits_for_its_job(driver: hitachi.Hitachi, array: FakeHitachi, server: ContractServer) -> None:
    array.polls_until_done = 3
    driver.create_volume("vol0", 1 << 30)
    writes = [c for c in server.calls() if c.split()[0] in ("POST", "PUT", "DELETE") and not c.endswith("/sessions")]
    polls = [c for c in server.calls() if "/jobs/" in c]
    assert len(polls) == 3 * len(writes)  # each job read until it says Completed
    assert all(entry["job"]["status"] == "Completed" for entry in array.jobs.values())
    driver.teardown()


def test_a_failed_job_names_the_call_the_object_the_job_and_the_arrays_error(
    driver: hitachi.Hitachi, array: FakeHitachi, run: Run, server: ContractServer
) -> None:
    array.job_rules.append(JobRule("POST", r"/luns$", fail=("B958", "0947")))
    with pytest.raises(ArrayError) as failed:
        driver.create_volume("vol0", 1 << 30)
    job_id = max(array.jobs)
    assert str(failed.value) == (
        f"array hitachi-test: POST /luns ldev {FIRST_LDEV} on CL1-B,1: job {job_id} ended 'Failed':"
        " KART40022-E The operation failed on the storage system. (SSB1 B958, SSB2 0947)"
    )
    assert len([c for c in server.calls() if c.endswith("/luns") and c.startswith("POST")]) == 1  # not repeated
    release_all(run.ledger)
    assert nothing_left(array) == {} and run.ledger.open_entries() == []


def test_a_job_that_never_ends_is_an_error_naming_the_job(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, array: FakeHitachi
) -> None:
    drv = make_driver(tmp_path, server, run, monkeypatch, job_timeout_s=0.2)
    array.job_rules.append(JobRule("POST", r"/ldevs$", stuck=True))
    with pytest.raises(ArrayError, match=rf"POST /ldevs ldev {FIRST_LDEV} \(\S+vol0\): job \d+ still 'Initializing' after 0.2 s"):
        drv.create_volume("vol0", 1 << 30)


# -- sessions -----------------------------------------------------------------------------------------
def test_an_expired_session_logs_in_again_once(driver: hitachi.Hitachi, array: FakeHitachi, server: ContractServer) -> None:
    array.expire_sessions()
    driver.create_volume("vol0", 1 << 30)
    assert array.logins == 2
    expired = [r for r, reply in server.log if reply.status == 401]
    assert len(expired) == 1 and expired[0].method == "GET"  # the call that found it expired, asked again after the login
    driver.teardown()
    assert nothing_left(array) == {}


def test_a_session_that_expires_during_a_job_is_renewed_and_the_job_read_to_its_end(
    driver: hitachi.Hitachi, array: FakeHitachi, server: ContractServer
) -> None:
    array.polls_until_done = 2
    server.inject(Fault("GET", r"/jobs/\d+$", status=401))
    driver.create_volume("vol0", 1 << 30)
    assert array.logins == 2 and len([c for c in server.calls() if c.endswith("/ldevs") and c.startswith("POST")]) == 1
    driver.teardown()


def test_a_wrong_password_is_a_login_failure_without_the_password(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, canary: str
) -> None:
    monkeypatch.setattr(vendor_base, "read_initiator_ids", lambda lab: INITIATORS)
    monkeypatch.setenv("IOGATE_HITACHI_WRONG", "not-the-password")
    drv = hitachi.Hitachi(make_lab(tmp_path, "hitachi", options(server, password="${env:IOGATE_HITACHI_WRONG}")), run)
    with pytest.raises(ArrayError, match=r"POST /sessions: login failed: KART40047-E authentication failed") as failed:
        drv.setup()
    assert "not-the-password" not in str(failed.value) and canary not in str(failed.value)


# -- answers lost after a write, timeouts, cleanup ------------------------------------------------------
def test_an_ldev_made_but_its_answer_lost_is_not_made_again_and_cleanup_removes_it(
    driver: hitachi.Hitachi, array: FakeHitachi, server: ContractServer, run: Run
) -> None:
    server.inject(Fault("POST", r"/ldevs$", status=503, after_app=True))
    with pytest.raises(ArrayError, match=rf"POST /ldevs ldev {FIRST_LDEV} \(\S+vol0\): HTTP 503"):
        driver.create_volume("vol0", 1 << 30)
    assert len([c for c in server.calls() if c.startswith("POST") and c.endswith("/ldevs")]) == 1
    assert array.ldevs[FIRST_LDEV]["label"] == ""  # made, never named: only the journalled id says it is ours
    release_all(run.ledger)
    assert nothing_left(array) == {} and run.ledger.open_entries() == []


def test_a_snapshot_made_but_its_answer_lost_is_found_by_its_group_name(
    driver: hitachi.Hitachi, array: FakeHitachi, server: ContractServer, run: Run
) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    server.inject(Fault("POST", r"/snapshots$", status=503, after_app=True))
    with pytest.raises(ArrayError, match=r"POST /snapshots snapshot \S+vol0.s1 of ldev \d+: HTTP 503"):
        driver.snapshot_create(volume, "s1")
    assert len(array.snapshots) == 1
    release_all(run.ledger)
    assert nothing_left(array) == {} and run.ledger.open_entries() == []


def test_a_namespace_made_but_its_answer_lost_is_found_through_its_ldev(
    driver: hitachi.Hitachi, array: FakeHitachi, server: ContractServer, run: Run
) -> None:
    server.inject(Fault("POST", r"/namespaces$", status=503, after_app=True))
    with pytest.raises(ArrayError, match=r"POST /namespaces namespace of ldev \d+ \(\S+vol0\) in NVM subsystem 5: HTTP 503"):
        driver.create_volume("vol0", 1 << 30, export="nvme-tcp")
    assert array.namespaces == {1: FIRST_LDEV}
    release_all(run.ledger)
    assert nothing_left(array) == {} and run.ledger.open_entries() == []


test_a_failed_mapping_names_the_call_is_not_repeated_and_leaks_nothing = failed_mapping_test(
    make_driver,
    r"/luns$",
    error=rf"POST /luns ldev {FIRST_LDEV} on CL1-B,1",
    leftovers=nothing_left,
)


def test_half_done_provisioning_leaks_nothing_after_cleanup_in_a_fresh_process(
    driver: hitachi.Hitachi, array: FakeHitachi, server: ContractServer, run: Run, canary: str
) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="nvme-tcp")
    driver.snapshot_create(volume, "s1")
    server.inject(Fault("POST", r"/luns$", status=500, after_app=True))
    with pytest.raises(ArrayError, match="POST /luns"):
        driver.create_volume("vol1", 1 << 30, export="iscsi")
    assert len(array.ldevs) == 2 and array.luns and array.snapshots and array.namespace_paths
    done = subprocess.run(
        [sys.executable, "-m", "iogate", "cleanup", "--include-live", "--workdir", str(run.run_dir.parent.parent)],
        capture_output=True,
        text=True,
        env={**os.environ, PASSWORD_ENV: canary},
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert nothing_left(array) == {}
    ledger, _ = Ledger.load(run.ledger.path)
    assert ledger.open_entries() == []
    assert canary not in done.stdout + done.stderr


def test_an_ldev_id_another_run_took_first_is_not_cleaned_up_as_ours(driver: hitachi.Hitachi, array: FakeHitachi, run: Run) -> None:
    array.job_rules.append(JobRule("POST", r"/ldevs$", fail=("2E22", "0001")))  # LDEV already defined
    with pytest.raises(ArrayError, match=r"POST /ldevs ldev 4096 \(\S+vol0\): job \d+ ended 'Failed': .*SSB1 2E22, SSB2 0001"):
        driver.create_volume("vol0", 1 << 30)
    array.ldevs[FIRST_LDEV] = {"ldevId": FIRST_LDEV, "label": "", "poolId": 10, "emulationType": "OPEN-V-CVS"}  # the other run's
    assert run.ledger.open_entries() == []  # refused by the array: nothing of ours to clean up
    assert release_all(run.ledger) == [] and FIRST_LDEV in array.ldevs


def test_teardown_logs_out_and_cleanup_uses_one_session(
    driver: hitachi.Hitachi, array: FakeHitachi, server: ContractServer, run: Run
) -> None:
    driver.create_volume("vol0", 1 << 30, export="fc")
    driver.create_volume("vol1", 1 << 30, export="nvme-tcp")
    logins = array.logins
    release_all(run.ledger)  # what `iogate cleanup` runs: many entries, one login
    assert nothing_left(array) == {} and array.logins == logins + 1
    driver._volumes.clear()
    driver._hosts.clear()
    driver.teardown()
    assert any(c.startswith("DELETE") and "/sessions/" in c for c in server.calls())


def test_a_list_answer_without_its_data_list_is_refused_not_taken_as_empty(
    driver: hitachi.Hitachi, array: FakeHitachi, server: ContractServer
) -> None:
    driver.create_volume("vol0", 1 << 30)
    (owned,) = driver._volumes.values()
    (lun_entry,) = owned.maps
    original = array._read
    array._read = lambda parts, query: Reply(200, {"count": 1}) if parts == ["luns"] else original(parts, query)  # type: ignore[method-assign]
    with pytest.raises(ArrayError, match=r"GET /luns ldev 4096 on CL1-B,1: incomplete list after 3 attempts: the answer of a collection"):
        hitachi.delete_object(driver.api, driver._conn, lun_entry.attrs)
    assert array.luns  # nothing taken for unmapped on an answer that does not list
    array._read = original  # type: ignore[method-assign]
    driver.teardown()
    assert nothing_left(array) == {}


def test_cleanup_refuses_an_object_without_the_run_prefix(driver: hitachi.Hitachi) -> None:
    attrs = {"type": "ldev", "name": "production-db", "prefix": driver.prefix, "ldev_id": 1, "pool_id": 10}
    with pytest.raises(ArrayError, match="refusing to delete ldev production-db"):
        hitachi.delete_object(driver.api, driver._conn, attrs)


def test_cleanup_refuses_an_ldev_relabelled_since_it_was_journalled(driver: hitachi.Hitachi, array: FakeHitachi) -> None:
    driver.create_volume("vol0", 1 << 30)
    (owned,) = driver._volumes.values()
    array.ldevs[FIRST_LDEV]["label"] = "someone-elses"
    with pytest.raises(ArrayError, match=rf"refusing to delete ldev {FIRST_LDEV}: its label 'someone-elses'"):
        hitachi.delete_object(driver.api, driver._conn, owned.entry.attrs)
    assert FIRST_LDEV in array.ldevs


def test_reads_are_retried_on_503_writes_are_not(driver: hitachi.Hitachi, array: FakeHitachi, server: ContractServer) -> None:
    server.inject(Fault("GET", r"/ldevs$", status=503, times=2))
    driver.create_volume("vol0", 1 << 30)  # the free-id read goes through two 503s
    server.inject(Fault("PUT", r"/ldevs/\d+$", status=503))
    with pytest.raises(ArrayError, match=r"PUT /ldevs/\{id\} ldev \d+ \(\S+vol1\): HTTP 503"):
        driver.create_volume("vol1", 1 << 30)
    assert len([c for c in server.calls() if c.startswith("PUT") and c.rsplit("/", 1)[-1].isdigit()]) == 2  # once per volume
    driver.teardown()
    assert nothing_left(array) == {}


def test_a_timeout_names_the_call_and_the_object(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    drv = make_driver(tmp_path, server, run, monkeypatch, timeout_s=5)
    server.inject(Fault("POST", r"/host-groups$", hang=True))
    with pytest.raises(ArrayError, match=r"POST /host-groups host group \S+iscsi on CL1-B: no answer: timed out"):
        drv.create_volume("vol0", 1 << 30)


def test_the_canary_password_never_leaks(
    driver: hitachi.Hitachi, server: ContractServer, run: Run, canary: str, all_logs: pytest.LogCaptureFixture
) -> None:
    server.inject(Fault("POST", r"/host-groups$", status=500))
    with pytest.raises(ArrayError) as failed:
        driver.create_volume("vol0", 1 << 30)
    assert failed.value.__cause__ is None and failed.value.__suppress_context__
    text = "\n".join([str(failed.value), *(r.getMessage() for r in all_logs.records), run.ledger.path.read_text()])
    assert canary not in text
    assert any(_auth(r).startswith("Basic ") for r, _ in server.log)  # it was sent, to the array only


def _auth(request: Request) -> str:
    return next((v for k, v in request.headers.items() if k.lower() == "authorization"), "")


# -- what the driver refuses ---------------------------------------------------------------------------
def test_what_the_driver_does_not_offer_is_refused_naming_driver_operation_and_why(driver: hitachi.Hitachi) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    reasons = assert_refusals(driver, volume)
    assert [r.split(":")[0] for r in reasons] == ["dedupe", "replicate", "mirror", "qos", "metrics"]
    assert "no public CMREST call reads per-LDEV IOPS or latency" in reasons[-1]
    assert "HNAS dedupe is CLI-only" in reasons[0]
    driver.teardown()


def test_the_arrays_clock_is_said_to_be_unread_and_why(driver: hitachi.Hitachi) -> None:
    assert driver.array_clock().describe() == (
        "array clock not read: hitachi: endpoints.md lists no call that gives the array's current time"
    )


def test_the_lab_must_give_what_each_protocol_needs(tmp_path: Path) -> None:
    base = {"management": "vsp", "username": "u", "password": "${env:X}", "pool_id": 1, "ldev_id_first": 0, "ldev_id_last": 9}
    lab = make_lab(tmp_path, "hitachi", base, connector="nvme-tcp")
    lab = lab.model_copy(update={"hosts": [HostConfig(name="h1"), HostConfig(name="h2")],
                                 "protocols": [*lab.protocols, ProtocolConfig(name="fc", connector="fc")]})
    parsed = hitachi.HitachiOptions.model_validate({**base, "fc_ports": ["CL1-A"], "fc_wwpns": {"h1": ["10000090fa1b2c3d"]}})
    assert hitachi.Hitachi.lab_problems(lab, parsed) == [
        (("protocols", 0, "connector"),
         "nvme-tcp on the hitachi driver needs array.options nvm_subsystem_id and nvme_traddr and nvme_subsys_nqn"),
        (("array", "options", "fc_wwpns"), "host(s) h2 have no WWPNs for FC"),
    ]


@pytest.mark.parametrize(
    ("extra", "says"),
    [({"ldev_id_first": 10, "ldev_id_last": 9}, "ldev_id_last 9 is below ldev_id_first 10"),
     ({"fc_wwpns": {"h1": ["10:00:00:90:fa:1b:2c:3d"]}}, "a WWPN is 16 hex digits"),
     ({"data_reduction_mode": "dedupe"}, "data_reduction_mode")],
)
def test_options_the_array_cannot_take_are_refused(extra: dict[str, Any], says: str) -> None:
    from pydantic import ValidationError

    base = {"management": "vsp", "username": "u", "password": "${env:X}", "pool_id": 1, "ldev_id_first": 0, "ldev_id_last": 9}
    with pytest.raises(ValidationError, match=says):
        hitachi.HitachiOptions.model_validate({**base, **extra})


# -- the contract itself ------------------------------------------------------------------------------
def test_the_contract_fails_a_request_that_deviates_from_endpoints_md() -> None:
    contract = HitachiContract()
    session = {"Authorization": "Session t", "Content-Type": "application/json"}
    base = "/ConfigurationManager/v1/objects"
    good = Request("POST", f"{base}/ldevs", {}, session, {"ldevId": 1, "poolId": 1, "blockCapacity": 8})
    assert contract.check_request(good) == []
    bad_field = Request("POST", f"{base}/ldevs", {}, session, {"ldevId": 1, "poolId": 1, "capacity": 8})
    assert contract.check_request(bad_field) == ["body field 'capacity' is not one endpoints.md gives for create"]
    assert contract.check_request(Request("POST", f"{base}/ldevs/1/actions/shrink/invoke", {}, session, None)) == [
        "no such call in endpoints.md"
    ]
    assert contract.check_request(Request("GET", f"{base}/luns", {"limit": ["5"]}, session, None)) == [
        "query key 'limit' is not one endpoints.md gives for list / unmap"
    ]
    assert contract.check_request(Request("GET", f"{base}/ldevs/1", {}, {}, None)) == ["Authorization is not `Session <token>`"]
    assert contract.check_request(Request("POST", f"{base}/sessions", {}, {"Authorization": "Session t"}, None)) == [
        "the login does not send Basic credentials"
    ]
    assert contract.check_request(Request("GET", "/api/rest/volume", {}, session, None)) == ["not under /ConfigurationManager/v1/objects"]


def test_the_contract_fails_a_write_answered_without_a_job() -> None:
    contract = HitachiContract()
    request = Request("DELETE", "/ConfigurationManager/v1/objects/ldevs/7", {}, {"Authorization": "Session t"}, None)
    assert contract.check_response(request, Reply(202, {"jobId": 3, "status": "Completed", "state": "Succeeded"})) == []
    assert contract.check_response(request, Reply(204)) == [
        "status 204: a write answers 202 with a job",
        "job fields [] are not the conventions' ['affectedResources', 'error', 'jobId', 'self', 'state', 'status']",
    ]


def test_a_driver_call_outside_the_spec_is_caught_by_the_server(driver: hitachi.Hitachi, server: ContractServer) -> None:
    try:
        driver._conn.get("storage-pools")  # an HNAS path, not a CMREST one
    except Exception:
        pass
    assert server.violations == ["GET /ConfigurationManager/v1/objects/storage-pools: no such call in endpoints.md"]
    server.violations.clear()


# -- the example lab ---------------------------------------------------------------------------------------
EXAMPLE = Path(__file__).resolve().parents[2] / "labs" / "examples" / "hitachi.yaml"


def test_the_example_lab_passes_the_offline_lab_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HITACHI_PASSWORD", "example-secret-value")
    from iogate.lab.check import check

    ok, lines = check(EXAMPLE)
    assert ok, "\n".join(lines)
    assert any("skip     test_dedupe_during_load: array driver hitachi lacks capability dedupe" in line for line in lines)


def test_the_example_lab_refuses_an_inline_password_with_file_and_line(tmp_path: Path) -> None:
    from iogate.errors import LabFileError
    from iogate.lab import load_lab

    lines = EXAMPLE.read_text().splitlines()
    (number,) = [i for i, line in enumerate(lines) if line.strip().startswith("password:")]
    lines[number] = "    password: Sup3rSecret-inline"
    broken = tmp_path / "hitachi.yaml"
    broken.write_text("\n".join(lines) + "\n")
    with pytest.raises(LabFileError) as refused:
        load_lab(broken)
    assert f"{broken} line {number + 1}" in str(refused.value) and "Sup3rSecret-inline" not in str(refused.value)
