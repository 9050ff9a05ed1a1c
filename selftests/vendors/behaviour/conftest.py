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

    def options(self, server: ContractServer, portal: str = "127.0.0.1") -> dict[str, Any]:
        targets = {"iscsi_target_iqn": self.target_iqn, "nvme_subsys_nqn": self.subsys_nqn} if self.target_in_options else {}
        return targets | {
            "management": server.address,
            "password": f"${{env:{PASSWORD_ENV}}}",
            "verify_tls": str(server.cert),
            "timeout_s": 300,  # every write reaches the guest over SSH (TCG under load: seconds per command)
            "retry_backoff_s": 0,
            "iscsi_portal": f"{portal}:3260",
            "nvme_traddr": portal,
            **self.extra_options,
        }


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


def _nonempty(**things: Any) -> dict[str, Any]:
    return {k: v for k, v in things.items() if v}


VENDORS: dict[str, Callable[[], Vendor]] = {"pure": _pure, "powerstore": _powerstore, "ontap": _ontap}


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
