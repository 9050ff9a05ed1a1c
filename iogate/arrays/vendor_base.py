"""VendorDriver: the ArrayDriver skeleton the vendor-SDK drivers (powerstore, ontap, pure) share.

A vendor module gives its SDK plumbing (how to connect, how to run calls, how to
delete one journalled object by name) and what its array does differently
(discovery, hosts, volume creation, data services); this class holds the rest:

- the run-prefixed names and the ledger: every object is journalled with
  `_journal()` *before* it is created (kind "vendor_object", see rest_common) and
  deleted through `_delete()`, which removes it by name and releases its entry;
- the bookkeeping of what the run made per volume (`OwnedVolume`) and of the
  array's host objects, and the teardown that deletes them in reverse;
- the operations no vendor driver offers (QoS, mirror; metrics unless the
  vendor has them), and the ledger remover `iogate cleanup` uses
  (`register_vendor_remover`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel

from iogate.arrays.base import ArraySample, Capability, Snapshot, Unsupported, Volume, unsupported
from iogate.arrays.clock import ArrayClock, not_read
from iogate.arrays.exports import FcExport, IscsiExport, NvmeTcpExport
from iogate.arrays.rest_common import (
    ApiCaller,
    VendorOptions,
    initiators_for,
    intend,
    protocol_of,
    read_initiator_ids,
    register_object_remover,
    run_prefix,
)
from iogate.errors import ArrayError
from iogate.lab import Lab, QoS
from iogate.run import Run
from iogate.run.ledger import Entry


@dataclass(frozen=True)
class VendorSdk:
    """A vendor module's SDK plumbing, as VendorDriver and `iogate cleanup` use it."""

    connect: Callable[[Any, str], Any]  # (options, array name) -> the SDK's connection or client
    caller: Callable[[str, Any, Any], ApiCaller]  # (array name, options, connection) -> the ApiCaller of its calls
    delete: Callable[[ApiCaller, Any, dict[str, Any]], str | None]  # one journalled object by name; None: gone already


class FixedTargetOptions(VendorOptions):
    """Options of an array whose iSCSI target and NVMe subsystem the lab names (one per array)."""

    iscsi_portal: str | None = None  # address:port the hosts log in to
    iscsi_target_iqn: str | None = None
    nvme_traddr: str | None = None
    nvme_trsvcid: str = "4420"
    nvme_subsys_nqn: str | None = None


@dataclass
class OwnedVolume:
    """One volume of the run and the ledger entries of everything made for it."""

    volume: Volume
    entry: Entry
    id: str = ""  # the array's id of the volume, where its API addresses volumes by id
    maps: list[Entry] = field(default_factory=list)  # host mappings / connections
    snapshots: dict[str, Entry] = field(default_factory=dict)  # by the suite's snapshot name
    replication: list[Entry] = field(default_factory=list)  # objects replicate() made, in creation order


class VendorDriver:
    """ArrayDriver over a vendor SDK (see module docstring); subclasses fill the SDK hooks."""

    DRIVER: ClassVar[str]  # the driver's name in labs and in ledger entries
    sdk: ClassVar[VendorSdk]
    Options: ClassVar[type[BaseModel]]  # a VendorOptions subclass
    serves_all_protocols: ClassVar[bool] = False  # a volume is mapped over the one protocol chosen at creation
    capabilities: ClassVar[frozenset[Capability]]  # the most the driver can do; setup() asks the array
    capabilities_before_setup: ClassVar[frozenset[Capability]] = frozenset()
    maps_over: ClassVar[tuple[str, ...]] = ()  # the block protocols a volume can be mapped over (empty: any)
    # Why the driver never offers a capability (its array's API, or what the driver leaves out): every
    # operation behind one raises Unsupported naming the driver, the operation and this reason.
    refusals: ClassVar[dict[Capability, str]] = {}

    # -- what each vendor does its own way ----------------------------------------------------
    def _discover(self) -> set[Capability]:
        """Ask the connected array what it is (facts) and what this lab lets it do (capabilities)."""
        raise NotImplementedError

    def _make_host(self, lab_host: str, protocol: str, initiator: str) -> tuple[str, Entry]:
        """Journal and make the array's host object for a lab host's initiator: (its id or name, its entry)."""
        raise NotImplementedError

    # -- state -----------------------------------------------------------------------------
    def __init__(self, lab: Lab, run: Run) -> None:
        self.lab = lab
        self.run = run
        self.options: Any = self.Options.model_validate(lab.array.options)
        assert isinstance(self.options, VendorOptions)
        self.prefix = run_prefix(self.options, run.run_id)
        self.capabilities = self.capabilities_before_setup  # type: ignore[misc]  # setup() asks the array
        self._conn: Any = None
        self._api: ApiCaller | None = None
        # (lab host, protocol) -> (the array's handle of its host object: id or name, its ledger entry)
        self._hosts: dict[tuple[str, str], tuple[str, Entry]] = {}
        self._volumes: dict[str, OwnedVolume] = {}
        self._initiators: dict[str, dict[str, str]] = {}
        self._facts: dict[str, str] = {}
        # Why a capability the class can have is not offered here, set where _discover() decides (the lab's
        # options, the array's licences or settings); refusals holds what the driver never offers.
        self._why_not: dict[Capability, str] = {c: "setup() has not asked the array yet" for c in type(self).capabilities}

    @property
    def api(self) -> ApiCaller:
        if self._api is None:
            raise ArrayError(f"array {self.lab.array.name}: setup() has not run")
        return self._api

    def _journal(self, obj_type: str, name: str, **attrs: Any) -> Entry:
        return intend(self.run.ledger, self.DRIVER, self.options, obj_type, name, prefix=self.prefix, **attrs)

    def _delete(self, entry: Entry) -> None:
        self.sdk.delete(self.api, self._conn, entry.attrs)
        self.run.ledger.released(entry)

    def refusal(self, capability: Capability) -> str:
        return "" if capability in self.capabilities else self._reason(capability)

    def _refuse(self, capability: Capability, why: str = "") -> Unsupported:
        return unsupported(self.DRIVER, capability, why or self._reason(capability))

    def _reason(self, capability: Capability) -> str:
        """What the array said at discovery, else what the driver never offers."""
        return self._why_not.get(capability) or self.refusals.get(capability, "not offered by this driver")

    def _owned(self, volume: Volume) -> OwnedVolume:
        if volume.name not in self._volumes:
            raise ArrayError(f"array {self.lab.array.name}: no volume {volume.name} of this run")
        return self._volumes[volume.name]

    def _host(self, lab_host: str, protocol: str, initiator: str) -> str:
        """The array's id or name of the host object for this lab host and protocol (made once per run)."""
        key = (lab_host, protocol)
        if key not in self._hosts:
            self._hosts[key] = self._make_host(lab_host, protocol, initiator)
        return self._hosts[key][0]

    def _new_volume(self, name: str, qos: QoS | None, export: str | None) -> tuple[str, dict[str, str]]:
        """create_volume's checks before anything is journalled: (the protocol, lab host -> its initiator)."""
        if qos is not None:
            raise self._refuse(Capability.QOS)
        if name in self._volumes:
            raise ArrayError(f"array {self.lab.array.name}: volume {name} exists already")
        protocol = protocol_of(export, self.options)
        if self.maps_over and protocol not in self.maps_over:
            over = " or ".join(self.maps_over)
            raise ArrayError(f"array {self.lab.array.name}: volume {name}: the {self.DRIVER} driver maps over {over}, not {protocol}")
        return protocol, initiators_for(protocol, self._initiators, self.lab.array.name)

    def _map(self, owned: OwnedVolume, obj_type: str, name: str, call: str, what: str, make: Callable[[], Any], **attrs: Any) -> Any:
        """Journal a mapping of the volume, make it (one call), record it made; the call's answer."""
        mapping = self._journal(obj_type, name, **attrs)
        owned.maps.append(mapping)
        done = self.api.call(call, what, make)
        self.run.ledger.created(mapping)
        return done

    def _fixed_export(self, protocol: str, lun: int | None) -> IscsiExport | NvmeTcpExport | FcExport:
        """What a connector needs to reach a volume of an array with a FixedTargetOptions target."""
        options = self.options
        if protocol == "fc":
            return FcExport(lun=lun)
        if protocol == "iscsi":
            if not (options.iscsi_portal and options.iscsi_target_iqn):
                raise ArrayError(f"array {self.lab.array.name}: iSCSI needs iscsi_portal and iscsi_target_iqn in the lab's array options")
            return IscsiExport(portal=options.iscsi_portal, target_iqn=options.iscsi_target_iqn, lun=lun)
        if not (options.nvme_traddr and options.nvme_subsys_nqn):
            raise ArrayError(f"array {self.lab.array.name}: NVMe/TCP needs nvme_traddr and nvme_subsys_nqn in the lab's array options")
        return NvmeTcpExport(traddr=options.nvme_traddr, subsys_nqn=options.nvme_subsys_nqn, trsvcid=options.nvme_trsvcid)

    # -- lifecycle -------------------------------------------------------------------------
    @classmethod
    def lab_problems(cls, lab: Lab, options: Any) -> list[tuple[tuple[str | int, ...], str]]:
        return []

    def setup(self) -> None:
        self._conn = self.sdk.connect(self.options, self.lab.array.name)
        self._api = self.sdk.caller(self.lab.array.name, self.options, self._conn)
        self._why_not = {}
        self.capabilities = frozenset(self._discover())  # type: ignore[misc]
        self._initiators = read_initiator_ids(self.lab)

    def teardown(self) -> None:
        for owned in list(self._volumes.values()):
            self.delete_volume(owned.volume)
        for _, entry in list(self._hosts.values()):
            self._delete(entry)
        self._hosts.clear()

    def facts(self) -> dict[str, str]:
        return dict(self._facts)

    def facts_at_end(self) -> dict[str, str]:
        """What the array reports at the session's end, before teardown, for the report's environment beside
        the facts of setup (the data-reduction ratio after the run: `array.data_reduction_ratio_at_end`).
        Read failures are written into the fact, never raised: the teardown must still run (`_fact`)."""
        return {}

    @staticmethod
    def _fact(read: Callable[[], str]) -> str:
        """A fact read from the array, or why it was not: a fact never stops the session's teardown."""
        try:
            return read()
        except Exception as exc:  # any failure becomes the fact's text
            return f"not read: {exc}"

    def settle(self) -> None:
        """Nothing is deferred: every call returns once the array has done it."""

    # -- volumes ---------------------------------------------------------------------------
    def delete_volume(self, volume: Volume) -> None:
        owned = self._owned(volume)
        for entry in [*owned.replication[::-1], *owned.snapshots.values(), *owned.maps]:
            if entry.open:
                self._delete(entry)
        self._delete(owned.entry)
        del self._volumes[volume.name]

    def list_volumes(self) -> list[Volume]:
        return [owned.volume for owned in self._volumes.values()]

    def set_qos(self, volume: Volume, qos: QoS | None) -> None:
        if qos is not None:
            raise self._refuse(Capability.QOS)

    # -- data services ---------------------------------------------------------------------
    def snapshot_delete(self, snapshot: Snapshot) -> None:
        owned = self._volumes.get(snapshot.volume)
        entry = owned.snapshots.pop(snapshot.name, None) if owned else None
        if entry is None:
            raise ArrayError(f"array {self.lab.array.name}: no snapshot {snapshot.volume}@{snapshot.name} of this run")
        self._delete(entry)

    def mirror_attach(self, volume: Volume) -> dict[str, Any]:
        raise self._refuse(Capability.MIRROR)

    def mirror_detach(self, volume: Volume) -> None:
        raise self._refuse(Capability.MIRROR)

    def volume_metrics(self, volume: Volume, start: datetime, end: datetime) -> list[ArraySample]:
        raise self._refuse(Capability.METRICS)

    clock_unread: ClassVar[str] = "the driver has no call that gives the array's current time"

    def array_clock(self) -> ArrayClock:
        return not_read(f"{self.DRIVER}: {self.clock_unread}")


def register_vendor_remover(driver: type[VendorDriver]) -> None:
    """`iogate cleanup` deletes this driver's journalled objects: log in again with the entry's options, delete by name."""

    def remove(options: dict[str, Any], attrs: dict[str, Any]) -> str | None:
        parsed = driver.Options.model_validate(options)
        array = f"{driver.DRIVER} {parsed.management}"  # type: ignore[attr-defined]
        conn = driver.sdk.connect(parsed, array)
        return driver.sdk.delete(driver.sdk.caller(array, parsed, conn), conn, attrs)

    register_object_remover(driver.DRIVER, remove)
