"""Wiring for the vendor behaviour tier: the lab VM tier's guest, a backed fake array per test.

The lab VM fixtures (labvm_lab, guest, ...) are the labvm tier's own, registered in
selftests/conftest.py: one guest per session, shared with the labvm tier.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from iogate.lab import ArrayConfig, Lab
from iogate.run import Run
from selftests.vendors.conftest import PASSWORD_ENV
from selftests.vendors.guest_backing import Desired, GuestBacking
from selftests.vendors.server import Contract, ContractServer


@dataclass(frozen=True)
class Vendor:
    """One emulated vendor array: its fake, spec, driver, and how the host reaches it."""

    name: str  # the driver's registry name and module
    driver_class: str
    sdk: str
    protocol: str  # the lab protocol the behaviour test connects over
    target_iqn: str  # the array's one iSCSI target
    subsys_nqn: str  # the array's one NVMe subsystem
    make_fake: Callable[[str, GuestBacking], Any]
    contract: Callable[[], Contract]
    extra_options: dict[str, Any]
    leftovers: Callable[[Any], dict[str, Any]]  # what the fake still holds (empty: nothing)
    # The vendor's identity shape, written out here (not derived by the driver): what the kernel must show.
    kernel_identity: str = ""
    target_in_options: bool = True  # ONTAP asks the array for its target IQN and subsystem NQNs instead
    not_options: tuple[str, ...] = ()  # the common options the driver has no field for (VAST, Hitachi: the array names its targets)

    def options(self, server: ContractServer, portal: str = "127.0.0.1") -> dict[str, Any]:
        targets = {"iscsi_target_iqn": self.target_iqn, "nvme_subsys_nqn": self.subsys_nqn} if self.target_in_options else {}
        every = targets | {
            "management": server.address,
            "password": f"${{env:{PASSWORD_ENV}}}",
            "verify_tls": str(server.cert),
            "timeout_s": 300,  # every write reaches the guest over SSH (TCG under load: seconds per command)
            "retry_backoff_s": 0,
            "iscsi_portal": f"{portal}:3260",
            "nvme_traddr": portal,
            **self.extra_options,
        }
        return {key: value for key, value in every.items() if key not in self.not_options}


def _pure() -> Vendor:
    from selftests.vendors.backed_pure import BackedPure
    from selftests.vendors.test_pure import contract

    return Vendor(
        name="pure",
        driver_class="Pure",
        sdk="pypureclient",
        protocol="iscsi",
        target_iqn="iqn.2010-06.com.purestorage:flasharray.iogate-emulated",
        subsys_nqn="nqn.2010-06.com.purestorage:flasharray.iogate-emulated",
        make_fake=BackedPure,
        contract=contract,
        extra_options={"protection_group": "pg-dr"},
        kernel_identity=r"naa\.624a9370[0-9a-f]{24}",  # NAA 6, Pure's IEEE company id 24a937, the 24-digit serial
        leftovers=lambda f: _nonempty(
            volumes=f.volumes,
            hosts=f.hosts,
            connections=f.connections,
            snapshots=f.snapshots,
            pgroup_snapshots=f.pgroup_snapshots,
            members=f.pgroups["pg-dr"]["members"],
        ),
    )


def _powerstore() -> Vendor:
    from selftests.vendors.backed_powerstore import BackedPowerStore
    from selftests.vendors.contract_md import PowerStoreContract

    policy = "pp-replicating"

    def make(password: str, backing: GuestBacking) -> Any:
        fake = BackedPowerStore("iogate", password, backing)
        fake.replicating_policies.add(policy)
        return fake

    return Vendor(
        name="powerstore",
        driver_class="PowerStore",
        sdk="PyPowerStore",
        protocol="nvme-tcp",
        target_iqn="iqn.2015-10.com.dell:dellemc-powerstore-iogate-emulated-a-1",
        subsys_nqn="nqn.1988-11.com.dell:powerstore:00:1090e0",
        make_fake=make,
        contract=PowerStoreContract,
        extra_options={"username": "iogate", "protection_policy_id": policy, "default_protocol": "nvme-tcp"},
        kernel_identity=r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-8ccf-0968[0-9a-f]{8}",  # NGUID with Dell's 8ccf09 OUI
        leftovers=lambda f: _nonempty(volumes=f.volumes, hosts=f.hosts, mappings=f.mappings, sessions=f.sessions),
    )


def _ontap() -> Vendor:
    from selftests.vendors.backed_ontap import BackedOntap
    from selftests.vendors.test_ontap import contract

    return Vendor(
        name="ontap",
        driver_class="Ontap",
        sdk="netapp_ontap",
        protocol="iscsi",
        target_iqn="iqn.1992-08.com.netapp:sn.0123456789abcdef:vs.3",  # what the fake's SVM iSCSI service names
        subsys_nqn="nqn.1992-08.com.netapp:sn.0123456789abcdef:subsystem.iogate-emulated",
        make_fake=lambda password, backing: BackedOntap("iogate", password, backing),
        contract=contract,
        extra_options={"username": "iogate", "svm": "svm1", "flexvol": "iogate_vol", "snapmirror": True},
        target_in_options=False,
        kernel_identity=r"naa\.600a0980(3[0-9a-f]|[4-7][0-9a-f]){12}",  # NAA 6, NetApp's 00a098, hex of a 12-char serial
        leftovers=lambda f: _nonempty(
            **{k: v for k, v in f.objects.items()}, lun_maps=f.lun_maps, ns_maps=f.ns_maps, snapshots=f.snapshots
        ),
    )


def _vast() -> Vendor:
    from selftests.vendors.backed_vast import BackedVast
    from selftests.vendors.fake_vast import VastContract

    return Vendor(
        name="vast",
        driver_class="Vast",
        sdk="vastpy",
        protocol="nvme-tcp",
        target_iqn="iqn.2024-08.com.vastdata:iogate-emulated",  # unused: VAST serves no iSCSI
        subsys_nqn="nqn.2024-08.com.vastdata:3f1e0c1e-7b5a-4f36-9f8e-0c7a1c9d2b11:iogate-emulated",
        make_fake=BackedVast,
        contract=VastContract,
        # The VIP hosts connect to is the guest's portal; every block view answers with the one subsystem.
        extra_options={"vip_pool": "protocols", "data_address": "127.0.0.1", "task_poll_s": 0.2},
        target_in_options=False,
        not_options=("iscsi_portal", "nvme_traddr"),
        kernel_identity=r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}",  # the NGUID the VMS gave, 32 hex digits
        leftovers=lambda f: _nonempty(**f.leftovers()),
    )


def _huawei() -> Vendor:
    from selftests.vendors.backed_huawei import BackedHuawei
    from selftests.vendors.fake_huawei import HuaweiContract

    serial = "2102354JTB10N1000007"
    return Vendor(
        name="huawei",
        driver_class="Huawei",
        sdk="requests",
        protocol="iscsi",
        target_iqn=f"iqn.2006-08.com.huawei:oceanstor:2100a0a33f0c7b1e::20003:{serial[-6:]}-iogate-emulated",
        subsys_nqn=f"nqn.2020-02.huawei.nvme:nvm-subsystem-sn-{serial}",
        make_fake=lambda password, backing: BackedHuawei("iogate", password, backing, serial=serial),
        contract=HuaweiContract,
        extra_options={"username": "iogate", "pool": "StoragePool001", "mapping": "direct", "dedupe": True, "compression": True},
        kernel_identity=r"naa\.6643e8c[0-9a-f]{25}",  # NAA 6, the OceanStor company id 643e8c, 25 vendor digits
        leftovers=lambda f: _nonempty(
            luns=f.luns, hosts=f.hosts, bound=f.bound(), mappings=f.mappings, hostgroups=f.hostgroups, lungroups=f.lungroups,
            views=f.views, snapshots=f.snapshots, filesystems=f.filesystems, shares=f.shares,
        ),
    )


def _hitachi() -> Vendor:
    from selftests.vendors.backed_hitachi import BackedHitachi
    from selftests.vendors.fake_hitachi import HitachiContract

    nqn = "nqn.1994-04.jp.co.hitachi:nvme:storage-subsystem-sn.2-22b3f1-nvmssid.00005"
    return Vendor(
        name="hitachi",
        driver_class="Hitachi",
        sdk="requests",
        protocol="iscsi",
        target_iqn="iqn.1994-04.jp.co.hitachi:rsd.h8m.t.22b3f.iogate-emulated",
        subsys_nqn=nqn,
        make_fake=lambda password, backing: BackedHitachi("iogate", password, backing),
        contract=HitachiContract,
        extra_options={
            "username": "iogate", "pool_id": 10, "ldev_id_first": 1000, "ldev_id_last": 1063, "snapshot_pool_id": 20,
            "iscsi_port": "CL1-B", "nvm_subsystem_id": 5, "nvme_subsys_nqn": nqn, "job_poll_s": 0.2,
            "data_reduction_mode": "compression_deduplication",
        },
        target_in_options=False,
        not_options=("iscsi_portal",),
        kernel_identity=r"naa\.60060e80[0-9a-f]{24}",  # NAA 6, Hitachi's company id 0060e8, serial and LDEV id
        leftovers=lambda f: _nonempty(
            ldevs=f.ldevs, host_groups=f.host_groups, luns=f.luns, host_nqns=f.host_nqns, namespaces=f.namespaces,
            namespace_paths=f.namespace_paths, snapshots=f.snapshots, filesystems=f.filesystems, nfs_exports=f.nfs_exports,
        ),
    )


def _nonempty(**things: Any) -> dict[str, Any]:
    return {k: v for k, v in things.items() if v}


VENDORS: dict[str, Callable[[], Vendor]] = {
    "pure": _pure, "powerstore": _powerstore, "ontap": _ontap, "vast": _vast, "huawei": _huawei, "hitachi": _hitachi,
}


@pytest.fixture(scope="session")
def backing(labvm_lab: Lab, labvm_run: Run) -> Iterator[GuestBacking]:
    """The pool (linux_target's VG and thin pool) in the guest, for every emulated array of the session."""
    made = GuestBacking(labvm_lab, labvm_run)
    made.setup()
    yield made
    made.teardown()


@pytest.fixture
def vendor(request: pytest.FixtureRequest) -> Vendor:
    chosen = VENDORS[request.param]()
    pytest.importorskip(chosen.sdk, reason="vendor SDK not installed: pip install -r requirements-vendors.txt")
    return chosen


@pytest.fixture
def emulated(vendor: Vendor, backing: GuestBacking) -> Iterator[GuestBacking]:
    """The vendor's target and subsystem in the guest, holding nothing at the start and at the end."""
    backing.open_array(vendor.target_iqn, vendor.subsys_nqn)
    assert backing.state == Desired() and backing.leftovers() == ""
    yield backing
    backing.close_array()  # whatever a failed test left goes, so the next test starts clean


@pytest.fixture
def fake(vendor: Vendor, canary: str, emulated: GuestBacking) -> Any:
    return vendor.make_fake(canary, emulated)


@pytest.fixture
def server(tmp_path: Path, vendor: Vendor, fake: Any) -> Iterator[ContractServer]:
    with ContractServer(fake, vendor.contract(), tmp_path) as srv:
        yield srv
    assert srv.violations == [], "requests or responses outside the vendor's spec:\n" + "\n".join(srv.violations)


@pytest.fixture
def lab(labvm_lab: Lab, vendor: Vendor, server: ContractServer, tmp_path: Path) -> Lab:
    """labs/labvm.yaml with its array replaced by the emulated vendor array (the guest stays the host)."""
    return labvm_lab.model_copy(
        update={
            "name": f"{vendor.name}-emulated",
            "array": ArrayConfig(name=f"{vendor.name}-emulated", driver=vendor.name, options=vendor.options(server)),
            "workdir": str(tmp_path / "work"),
        }
    )
