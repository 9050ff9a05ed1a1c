"""Huawei OceanStor / Dorado driver, contract depth: the driver's requests against a fake DeviceManager whose
every request and response is checked against ../shared/specs/huawei-oceanstor/endpoints.md."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from iogate.arrays import huawei, vendor_base
from iogate.arrays.base import Capability, Unsupported
from iogate.arrays.exports import FcExport, IscsiExport, NfsExport, NvmeTcpExport
from iogate.errors import ArrayError
from iogate.lab import load_lab
from iogate.run import Run
from iogate.run.ledger import Ledger
from iogate.run.resources import release_all
from selftests.vendors.conftest import INITIATORS, PASSWORD_ENV, make_lab
from selftests.vendors.failures import failed_mapping_test
from selftests.vendors.fake_huawei import FakeHuawei, HuaweiContract
from selftests.vendors.refusals import assert_refusals
from selftests.vendors.server import ContractServer, Fault, Reply, Request

pytestmark = pytest.mark.vendors
pytest.importorskip("requests", reason="the huawei driver talks to the array with requests")
SERIAL = "2102354JTB10N1000007"
WWPN = "21000024ff3b1a2c"
API = f"/deviceManager/rest/{SERIAL}"


@pytest.fixture
def array(canary: str) -> FakeHuawei:
    return FakeHuawei("iogate", canary, serial=SERIAL)


@pytest.fixture
def server(tmp_path: Path, array: FakeHuawei) -> Iterator[ContractServer]:
    with ContractServer(array, HuaweiContract(), tmp_path) as srv:
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
        "pool": "StoragePool001",
        "iscsi_portal": "192.0.2.10:3260",
        "iscsi_target_iqn": "iqn.2006-08.com.huawei:oceanstor:2100a0a33f0c7b1e::20003:192.0.2.10",
        "nvme_traddr": "192.0.2.11",
        "nvme_subsys_nqn": f"nqn.2020-02.huawei.nvme:nvm-subsystem-sn-{SERIAL}",
        "nfs_server": "192.0.2.12",
        **extra,
    }


def make_driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, **extra: Any) -> huawei.Huawei:
    ids = {"h1": {**INITIATORS["h1"], "fc": WWPN}}
    monkeypatch.setattr(vendor_base, "read_initiator_ids", lambda lab: ids)
    drv = huawei.Huawei(make_lab(tmp_path, "huawei", options(server, **extra)), run)
    drv.setup()
    return drv


@pytest.fixture
def driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch) -> huawei.Huawei:
    return make_driver(tmp_path, server, run, monkeypatch)


def nothing_left(fake: FakeHuawei) -> dict[str, Any]:
    """What the fake array still holds of anything a run makes (all empty: nothing leaked)."""
    left = {
        "luns": fake.luns, "hosts": fake.hosts, "bound initiators": fake.bound(), "mappings": fake.mappings,
        "hostgroups": fake.hostgroups, "lungroups": fake.lungroups, "views": fake.views, "snapshots": fake.snapshots,
        "filesystems": fake.filesystems, "shares": fake.shares, "clients": fake.clients,
    }
    return {kind: items for kind, items in left.items() if items}


# -- provision, map, snapshot, rollback, teardown ----------------------------------------------------------------
def test_iscsi_volume_is_a_lun_in_sectors_mapped_directly_and_torn_down(driver: huawei.Huawei, array: FakeHuawei) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="iscsi")
    (lun,) = array.luns.values()
    assert lun["NAME"] == f"{driver.prefix}vol0" and lun["CAPACITY"] == "2097152"  # 1 GiB = 2097152 sectors of 512 bytes
    assert lun["PARENTID"] == "0"  # the pool named in the lab, by its ID
    assert volume.identity.wwn == f"naa.{lun['WWN']}"  # the bare hex the array gives, as the kernel names it
    (host,) = array.hosts.values()
    assert array.bound() == {INITIATORS["h1"]["iscsi"]: host["ID"]}
    assert array.mappings == [{"hostId": host["ID"], "lunId": lun["ID"]}]
    iscsi = volume.export_of(IscsiExport)
    assert iscsi is not None and iscsi.portal == "192.0.2.10:3260"
    driver.teardown()
    assert nothing_left(array) == {}
    assert driver.run.ledger.open_entries() == []
    assert array.logouts == 1  # the session is closed: arrays limit the sessions a user may hold


def test_nvme_volume_is_identified_by_its_nguid_and_binds_the_host_nqn(driver: huawei.Huawei, array: FakeHuawei) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="nvme-tcp")
    (lun,) = array.luns.values()
    assert volume.identity.nguid == lun["NGUID"] and volume.identity.wwn is None
    assert INITIATORS["h1"]["nvme-tcp"] in array.initiators["nvme_over_tcp_initiator"]
    assert array.bound()[INITIATORS["h1"]["nvme-tcp"]] == next(iter(array.hosts))
    assert volume.export_of(NvmeTcpExport) is not None
    driver.teardown()
    assert nothing_left(array) == {}


def test_fc_volume_binds_the_wwpn(driver: huawei.Huawei, array: FakeHuawei) -> None:
    volume = driver.create_volume("vol0", 1 << 30, export="fc")
    assert array.bound() == {WWPN: next(iter(array.hosts))}
    assert volume.export_of(FcExport) is not None and volume.identity.wwn
    driver.teardown()
    assert nothing_left(array) == {}


def test_the_view_model_maps_through_host_group_lun_group_and_view(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, array: FakeHuawei
) -> None:
    driver = make_driver(tmp_path, server, run, monkeypatch, mapping="view")
    volume = driver.create_volume("vol0", 1 << 30)
    (lun,) = array.luns.values()
    (host,) = array.hosts.values()
    (hostgroup,) = array.hostgroups.values()
    (lungroup,) = array.lungroups.values()
    (view,) = array.views.values()
    assert hostgroup["hosts"] == [host["ID"]] and lungroup["luns"] == [lun["ID"]]
    assert (view["hostgroup"], view["lungroup"]) == (hostgroup["ID"], lungroup["ID"])
    assert array.mappings == []  # no direct mapping in this model
    iscsi = volume.export_of(IscsiExport)
    assert iscsi is not None and iscsi.lun == 1  # ASSOCIATEMETADATA.HostLUNID
    driver.teardown()
    assert nothing_left(array) == {}
    assert run.ledger.open_entries() == []


def test_snapshot_rollback_waits_until_the_array_reports_100(driver: huawei.Huawei, array: FakeHuawei, server: ContractServer) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    snap = driver.snapshot_create(volume, "s1")
    (stored,) = array.snapshots.values()
    assert stored["NAME"] == f"{driver.prefix}vol0.s1" and stored["RUNNINGSTATUS"] == "active"  # activated after creation
    array.rollback_polls = 3
    driver.snapshot_restore(volume, snap)
    (lun,) = array.luns.values()
    assert lun["rolled_back_to"] == stored["NAME"] and stored["ROLLBACKRATE"] == "100"
    polls = [c for c in server.calls() if c == f"GET {API}/snapshot/{stored['ID']}"]
    assert len(polls) == 3  # 50, 50, 100: followed until done
    rollback = next(r for r, _ in server.log if r.path.endswith("/snapshot/rollback"))
    assert rollback.body == {"ID": stored["ID"], "ROLLBACKSPEED": 3}
    driver.snapshot_delete(snap)
    assert array.snapshots == {}
    driver.teardown()
    assert nothing_left(array) == {}


def test_a_rollback_that_leaves_the_snapshot_unhealthy_fails(driver: huawei.Huawei, array: FakeHuawei) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    snap = driver.snapshot_create(volume, "s1")
    array.rollback_polls = 5
    (stored,) = array.snapshots.values()
    stored["HEALTHSTATUS"] = "2"
    with pytest.raises(ArrayError, match=r"snapshot \S+vol0.s1 lun \S+vol0: rollback left the snapshot unhealthy \(HEALTHSTATUS 2\)"):
        driver.snapshot_restore(volume, snap)
    driver.teardown()
    assert nothing_left(array) == {}


def test_an_nfs_volume_is_a_filesystem_with_a_share_and_a_client_rule(driver: huawei.Huawei, array: FakeHuawei) -> None:
    volume = driver.create_volume("share0", 1 << 30, export="nfs")
    (fs,) = array.filesystems.values()
    (share,) = array.shares.values()
    (client,) = array.clients.values()
    assert fs["CAPACITY"] == "2097152" and share["FSID"] == fs["ID"] and share["SHAREPATH"] == f"/{driver.prefix}share0/"
    assert client["NAME"] == "*" and client["PARENTID"] == share["ID"] and client["ACCESSVAL"] == 1
    nfs = volume.export_of(NfsExport)
    assert nfs is not None and nfs.source == f"192.0.2.12:/{driver.prefix}share0/"
    assert volume.identity.nfs_export == nfs.source
    driver.teardown()
    assert nothing_left(array) == {}


def test_dedupe_and_compression_are_set_per_lun_and_the_savings_read_back(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, array: FakeHuawei
) -> None:
    driver = make_driver(tmp_path, server, run, monkeypatch, dedupe=True, compression=False)
    volume = driver.create_volume("vol0", 1 << 30)
    create = next(r for r, _ in server.log if r.method == "POST" and r.path == f"{API}/lun")
    assert create.body["ENABLESMARTDEDUP"] == "true" and create.body["ENABLECOMPRESSION"] == "false"
    evidence = driver.data_reduction(volume)
    assert evidence == {
        "lun": f"{driver.prefix}vol0", "enablesmartdedup": "true", "enablecompression": "false",
        "dedupsavedratio": "1.50", "compressionsavedratio": "2.00", "totalsavedratio": "3.00",
        "dedupsavedcapacity": "1024", "compressionsavedcapacity": "2048", "totalsavedcapacity": "3072",
    }
    driver.teardown()


def test_each_luns_savings_are_a_fact_at_the_end_as_last_read_deleted_or_not(driver: huawei.Huawei, array: FakeHuawei) -> None:
    gone = driver.create_volume("vol0", 1 << 30)
    driver.create_volume("vol1", 1 << 30)
    driver.delete_volume(gone)  # read at its deletion, with the array's figures then
    for lun in array.luns.values():
        lun["TOTALSAVEDRATIO"] = "4.10"
    assert driver.facts_at_end() == {
        "array.data_reduction_ratio_at_end": "vol0: TOTALSAVEDRATIO 3.00 (dedupe false: 1.50, compression false: 2.00); "
                                             "vol1: TOTALSAVEDRATIO 4.10 (dedupe false: 1.50, compression false: 2.00)",
    }
    driver.teardown()


def test_luns_without_dedupe_options_leave_the_arrays_default(driver: huawei.Huawei, server: ContractServer) -> None:
    driver.create_volume("vol0", 1 << 30)
    create = next(r for r, _ in server.log if r.method == "POST" and r.path == f"{API}/lun")
    assert "ENABLESMARTDEDUP" not in create.body and "ENABLECOMPRESSION" not in create.body
    driver.teardown()


def test_long_names_are_shortened_to_31_characters_with_the_run_prefix(driver: huawei.Huawei, array: FakeHuawei) -> None:
    driver.create_volume("a-rather-long-volume-name", 1 << 30)
    (lun,) = array.luns.values()
    assert len(lun["NAME"]) == 31 and lun["NAME"].startswith(driver.prefix)
    driver.teardown()
    assert array.luns == {}


# -- metrics (the latency ids are uncertain) -------------------------------------------------------------
def test_the_current_sample_is_returned_inside_the_window_and_marked_uncertain(
    driver: huawei.Huawei, array: FakeHuawei, server: ContractServer
) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    stamp = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    array.sample = {"CMO_STATISTIC_TIMESTAMP": str(int(stamp.timestamp())), "CMO_STATISTIC_DATA_LIST": "1200,300,450,900"}
    (sample,) = driver.volume_metrics(volume, stamp - timedelta(minutes=5), stamp + timedelta(minutes=5))
    assert (sample.read_iops, sample.write_iops, sample.read_latency_us, sample.write_latency_us) == (1200, 300, 450, 900)
    assert sample.time == stamp and sample.interval_s == 60 and "unconfirmed" in sample.note
    asked = next(r for r, _ in server.log if "cur_statistic_data" in r.path)
    (lun,) = array.luns.values()
    assert asked.query == {"CMO_STATISTIC_UUID": [f"11:{lun['ID']}"], "CMO_STATISTIC_DATA_ID_LIST": ["25,28,384,385"]}
    assert driver.volume_metrics(volume, stamp + timedelta(minutes=1), stamp + timedelta(minutes=5)) == []  # outside: no data
    array.sample = None
    assert driver.volume_metrics(volume, stamp - timedelta(minutes=5), stamp + timedelta(minutes=5)) == []
    driver.teardown()


def test_metrics_are_refused_when_the_arrays_statistics_are_off(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, array: FakeHuawei
) -> None:
    array.perf_switch = "0"
    driver = make_driver(tmp_path, server, run, monkeypatch)
    volume = driver.create_volume("vol0", 1 << 30)
    assert Capability.METRICS not in driver.capabilities
    now = datetime.now(UTC)
    with pytest.raises(Unsupported, match=r"performance statistics are switched off"):
        driver.volume_metrics(volume, now - timedelta(minutes=5), now)
    assert not any("cur_statistic_data" in c for c in server.calls())
    driver.teardown()


def test_what_the_driver_does_not_offer_is_refused_naming_driver_operation_and_why(driver: huawei.Huawei) -> None:
    volume = driver.create_volume("vol0", 1 << 30)
    reasons = assert_refusals(driver, volume)
    assert [r.split(":")[0] for r in reasons] == ["dedupe", "replicate", "mirror", "qos"]
    assert "inline" in reasons[0] and "endpoints.md" in reasons[3]
    driver.teardown()


# -- paging: range=[0-100], [100-200] ... to the end -----------------------------------------------------------
def test_lists_are_read_past_the_first_100(driver: huawei.Huawei, array: FakeHuawei) -> None:
    for index in range(250):
        array.luns[f"x{index}"] = {"ID": f"x{index}", "NAME": f"other-{index}"}
    found = huawei.get_all(driver.api, driver.dm, "/lun", "every lun")
    assert len(found) == 250 and found[-1]["NAME"] == "other-249"
    assert [r for p, r in array.ranges_asked if p == "/lun"][-3:] == ["[0-100]", "[100-200]", "[200-300]"]
    array.luns.clear()


def test_cleanup_finds_its_lun_among_150_in_the_lun_group(
    tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, array: FakeHuawei
) -> None:
    driver = make_driver(tmp_path, server, run, monkeypatch, mapping="view")
    driver.create_volume("vol0", 1 << 30)
    (lungroup,) = array.lungroups.values()
    others = [f"o{i}" for i in range(150)]
    for other in others:
        array.luns[other] = {"ID": other, "NAME": f"someone-else-{other}"}
    lungroup["luns"][:0] = others  # someone else's LUNs in the group, listed first: ours is on page 2
    (owned,) = driver._volumes.values()
    assert huawei.delete_object(driver.api, driver.dm, owned.maps[0].attrs) is not None
    assert lungroup["luns"] == others  # ours found on the second page and taken out; theirs kept
    assert [r for p, r in array.ranges_asked if p == "/lun/associate"][-2:] == ["[0-100]", "[100-200]"]
    lungroup["luns"].clear()
    for other in others:
        del array.luns[other]
    driver.teardown()
    assert nothing_left(array) == {}


def test_a_page_of_more_than_100_items_is_an_incomplete_list(driver: huawei.Huawei, array: FakeHuawei, server: ContractServer) -> None:
    def oversized(request: Request) -> Reply:
        reply = FakeHuawei.__call__(array, request)
        if request.path.endswith("/host") and request.method == "GET":
            return Reply(200, {"data": [{"ID": str(i), "NAME": f"h{i}"} for i in range(101)], "error": {"code": 0}})
        return reply

    server.app = oversized
    with pytest.raises(ArrayError, match=r"GET /host host x: incomplete list after 3 attempts: range \[0-100\] answered 101 items"):
        huawei.find(driver.api, driver.dm, "host", "x")
    server.app = array
    assert [v for v in server.violations if "more than 100" in v]  # the contract flags the page too
    server.violations.clear()


# -- sessions ------------------------------------------------------------------------------------------------
def test_an_expired_session_logs_in_again_and_the_call_is_made_once(
    driver: huawei.Huawei, array: FakeHuawei, server: ContractServer
) -> None:
    logins = array.logins
    array.expire_sessions()
    driver.create_volume("vol0", 1 << 30)
    assert array.logins == logins + 1
    assert array.writes.count("POST /lun") == 1  # refused with -401 before it ran; made once after the new login
    login = next(r for r, _ in server.log if r.path.endswith("/xx/sessions"))
    assert login.body == {"username": "iogate", "password": array.password, "scope": "0"}
    later = [r for r, _ in server.log if not r.path.endswith("/xx/sessions")]
    assert all(r.headers.get("iBaseToken") for r in later) and all(r.path.startswith(API) for r in later)
    driver.teardown()
    assert nothing_left(array) == {}


def test_a_session_that_ends_between_two_pages_is_renewed_and_the_list_read_whole(driver: huawei.Huawei, array: FakeHuawei) -> None:
    for index in range(150):
        array.luns[f"x{index}"] = {"ID": f"x{index}", "NAME": f"other-{index}"}
    original = array._list
    expired = []

    def expire_after_first_page(path: str, items: list[dict[str, Any]], query: dict[str, str]) -> Reply:
        reply = original(path, items, query)
        if path == "/lun" and query.get("range") == "[0-100]" and not expired:
            expired.append(path)
            array.expire_sessions()  # once: the session ends between the first and the second page
        return reply

    array._list = expire_after_first_page  # type: ignore[method-assign]
    logins = array.logins
    found = huawei.get_all(driver.api, driver.dm, "/lun", "every lun")
    assert len(found) == 150 and array.logins == logins + 1
    array._list = original  # type: ignore[method-assign]
    array.luns.clear()


def test_a_password_expired_account_is_refused_naming_the_user(driver: huawei.Huawei, array: FakeHuawei, server: ContractServer) -> None:
    original = FakeHuawei.__call__

    def expired(request: Request) -> Reply:
        reply = original(array, request)
        if request.path.endswith("/xx/sessions"):
            reply.body["data"]["accountstate"] = "3"
        return reply

    server.app = expired
    array.expire_sessions()
    with pytest.raises(ArrayError, match=r"session expired and login failed: user iogate: password expired or initial \(accountstate 3\)"):
        driver.create_volume("vol0", 1 << 30)
    server.app = array
    assert array.luns == {}


# -- failures: error.code, lost answers, timeouts --------------------------------------------------------------
def test_an_error_code_fails_naming_the_call_the_object_and_the_code(driver: huawei.Huawei, array: FakeHuawei) -> None:
    array.fail_next[("POST", "/host")] = 1077948993
    with pytest.raises(ArrayError, match=r"POST /host host \S+h1-iscsi: HTTP 200: error.code 1077948993: injected error"):
        driver.create_volume("vol0", 1 << 30)
    assert array.writes.count("POST /host") == 1  # the array answered: not asked again
    driver.teardown()  # the LUN made before the host
    release_all(driver.run.ledger)
    assert nothing_left(array) == {}
    assert driver.run.ledger.open_entries() == []


def test_a_lun_made_but_its_answer_lost_is_not_made_twice_and_cleanup_removes_it(
    driver: huawei.Huawei, array: FakeHuawei, server: ContractServer
) -> None:
    server.inject(Fault("POST", r"/lun$", status=503, after_app=True))
    with pytest.raises(ArrayError, match=r"POST /lun lun \S+vol0: HTTP 503"):
        driver.create_volume("vol0", 1 << 30)
    assert [c for c in server.calls() if c == f"POST {API}/lun"] == [f"POST {API}/lun"]  # not repeated
    assert len(array.luns) == 1  # made on the array
    release_all(driver.run.ledger)  # what `iogate cleanup` runs: found by its journalled name
    assert nothing_left(array) == {}


def test_reads_are_retried_writes_are_not(driver: huawei.Huawei, array: FakeHuawei, server: ContractServer) -> None:
    server.inject(Fault("GET", r"/lun/\d+$", status=503, times=2))
    driver.create_volume("vol0", 1 << 30)  # GET /lun/{id} after the mapping: retried through two 503s
    driver.teardown()
    assert nothing_left(array) == {}


test_a_failed_mapping_names_the_call_is_not_repeated_and_leaks_nothing = failed_mapping_test(
    make_driver,
    r"/mapping$",
    error=r"POST /mapping lun \S+vol0 host \S+h1-iscsi",
    leftovers=nothing_left,
)


def test_half_done_provisioning_leaks_nothing_after_cleanup_in_a_fresh_process(
    driver: huawei.Huawei, array: FakeHuawei, server: ContractServer, run: Run, canary: str
) -> None:
    driver.create_volume("vol0", 1 << 30)
    driver.snapshot_create(driver.list_volumes()[0], "s1")
    server.inject(Fault("POST", r"/mapping$", status=500, after_app=True))
    with pytest.raises(ArrayError, match="POST /mapping"):
        driver.create_volume("vol1", 1 << 30)
    assert len(array.luns) == 2 and len(array.mappings) == 2
    env = {**os.environ, PASSWORD_ENV: canary}
    done = subprocess.run(
        [sys.executable, "-m", "iogate", "cleanup", "--include-live", "--workdir", str(run.run_dir.parent.parent)],
        capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parents[2], timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert nothing_left(array) == {}
    assert array.logouts == array.logins - 1  # cleanup closed each session it opened (the driver's own is still open)
    ledger, _ = Ledger.load(run.ledger.path)
    assert ledger.open_entries() == []
    assert canary not in done.stdout + done.stderr


def test_cleanup_refuses_an_object_without_the_run_prefix(driver: huawei.Huawei) -> None:
    with pytest.raises(ArrayError, match="refusing to delete lun production-db"):
        huawei.delete_object(driver.api, driver.dm, {"type": "lun", "name": "production-db", "prefix": driver.prefix})


def test_the_canary_password_never_leaks(
    driver: huawei.Huawei, array: FakeHuawei, run: Run, canary: str, all_logs: pytest.LogCaptureFixture
) -> None:
    array.fail_next[("POST", "/host")] = 50331651
    with pytest.raises(ArrayError) as failed:
        driver.create_volume("vol0", 1 << 30)
    assert failed.value.__cause__ is None and failed.value.__suppress_context__
    messages = [str(failed.value), *(r.getMessage() for r in all_logs.records), run.ledger.path.read_text()]
    assert canary not in "\n".join(messages)
    driver.teardown()


def test_an_inline_password_is_refused_without_echoing_it() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as refused:
        huawei.HuaweiOptions.model_validate({"management": "a", "username": "u", "password": "hunter2-inline", "pool": "p"})
    assert "by reference" in str(refused.value) and "hunter2-inline" not in str(refused.value).split("input_value")[0]


def test_a_prefix_that_leaves_no_room_in_31_characters_is_refused() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="name_prefix"):
        huawei.HuaweiOptions.model_validate(
            {"management": "a", "username": "u", "password": "${env:X}", "pool": "p", "name_prefix": "averylongprefix"}
        )


# -- the contract itself --------------------------------------------------------------------------------------
def test_the_contract_fails_requests_that_deviate_from_the_description() -> None:
    contract = HuaweiContract()
    token = {"iBaseToken": "t", "Content-Type": "application/json"}
    good = Request("POST", f"{API}/lun", {}, token, {"NAME": "v", "PARENTID": "0", "CAPACITY": 2048, "ALLOCTYPE": 1})
    assert contract.check_request(good) == []
    bad_field = Request("POST", f"{API}/lun", {}, token, {"NAME": "v", "PARENTID": "0", "SIZE": 2048})
    assert contract.check_request(bad_field) == ["body field 'SIZE' is not one endpoints.md gives for create"]
    assert contract.check_request(Request("POST", f"{API}/lun/clone", {}, token, None)) == ["no such call in endpoints.md"]
    assert contract.check_request(Request("GET", f"{API}/lun", {"range": ["[0-500]"]}, token, None)) == [
        "range=[0-500] is not [a-b] with 100 items (the paging convention)"
    ]
    assert contract.check_request(Request("GET", f"{API}/lun", {"filter": ["SIZE::1"]}, token, None)) == [
        "filter=SIZE::1 is not FIELD::value over a documented field"
    ]
    assert contract.check_request(Request("GET", f"{API}/lun/1", {}, {}, None)) == ["no iBaseToken header"]
    login = {"username": "u", "password": "p", "scope": "0"}
    assert contract.check_request(Request("POST", "/deviceManager/rest/xx/sessions", {}, {"Content-Type": "application/json"}, login)) == []
    assert contract.check_request(Request("POST", f"{API}/sessions", {}, {"Content-Type": "application/json"}, login)) == [
        "login is POST /deviceManager/rest/xx/sessions"
    ]
    assert contract.check_request(Request("POST", f"{API}/lun", {}, {"iBaseToken": "t"}, {"NAME": "v"})) == [
        "a body without Content-Type application/json"
    ]
    assert contract.check_response(good, Reply(500, {})) == ["HTTP 500: every DeviceManager reply is HTTP 200 (the envelope convention)"]
    assert contract.check_response(good, Reply(200, {"data": {}})) == ["no error object with an integer code (the envelope convention)"]


def test_a_driver_request_that_deviates_is_caught_by_the_server(
    driver: huawei.Huawei, server: ContractServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(huawei, "PAGE", 500)  # a driver that asked for more than the paging convention allows
    huawei.get_all(driver.api, driver.dm, "/lun", "every lun")
    assert server.violations == [f"GET {API}/lun: range=[0-500] is not [a-b] with 100 items (the paging convention)"]
    server.violations.clear()


# -- the example lab -----------------------------------------------------------------------------------------
EXAMPLE = Path(__file__).resolve().parents[2] / "labs" / "examples" / "huawei.yaml"


def test_the_example_lab_loads_with_its_secret_set(monkeypatch: pytest.MonkeyPatch) -> None:
    text = EXAMPLE.read_text()
    assert text.startswith("# yaml-language-server: $schema=../lab.schema.json\n")
    (name,) = set(re.findall(r"\$\{env:([^}]+)\}", text))
    monkeypatch.setenv(name, "example-secret-value")
    lab = load_lab(EXAMPLE)
    assert lab.array.driver == "huawei" and lab.array.options["password"] == f"${{env:{name}}}"
    assert [h.name for h in lab.hosts] == ["host1", "host2"]
    assert [p.connector for p in lab.protocols] == ["iscsi", "nvme-tcp"]


def test_lab_check_lets_the_driver_serve_nfs_besides_the_block_protocols() -> None:
    from iogate.lab.support import served_connectors

    assert served_connectors("huawei", huawei.Huawei) == {"iscsi", "multipath", "nvme-tcp", "nvme_tcp", "fc", "nfs"}


def make_view_driver(tmp_path: Path, server: ContractServer, run: Run, monkeypatch: pytest.MonkeyPatch, **extra: Any) -> huawei.Huawei:
    return make_driver(tmp_path, server, run, monkeypatch, mapping="view", **extra)


# The view model's mapping = the LUN joins the host's LUN group: the same three failures, cleaned up from the journal
# (mapping view, LUN group, host group, initiator binding, host, LUN, each found again by its name).
test_a_failed_view_mapping_names_the_call_is_not_repeated_and_leaks_nothing = failed_mapping_test(
    make_view_driver,
    r"/lungroup/associate$",
    error=r"POST /lungroup/associate lun \S+vol0 host \S+h1-iscsi lungroup \S+",  # a name longer than 31 characters: shortened with a hash
    leftovers=nothing_left,
)
