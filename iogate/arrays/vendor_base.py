"""VendorDriver: the ArrayDriver skeleton the vendor-SDK drivers (powerstore, ontap, pure) share.

A vendor module gives its SDK plumbing (how to connect, how to run calls, how to
delete one journalled object by name) and what its array does differently
(discovery, hosts, volume creation, data services); this class holds the rest:

- the run-prefixed names and the ledger: every object is journalled with
  `_journal()` *before* it is created (kind "vendor_object", see rest_common) and
  deleted through `_delete()`, which removes it by name and releases its entry;
- the bookkeeping of what the run made per volume (`OwnedVolume`) and of the
  array's host objects, and the teardown that deletes them in reverse;
- the refusal of QoS, which no vendor driver offers, and the ledger remover
  `iogate cleanup` uses (`register_vendor_remover`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from iogate.arrays.base import Capability, Snapshot, Volume, unsupported
from iogate.arrays.rest_common import (
    ApiCaller,
    VendorOptions,
    intend,
    read_initiator_ids,
    register_object_remover,
    run_prefix,
)
from iogate.errors import ArrayError
from iogate.lab import Lab, QoS
from iogate.ledger import Entry
from iogate.run import Run


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
    Options: ClassVar[type[BaseModel]]  # a VendorOptions subclass
    serves_all_protocols: ClassVar[bool] = False  # a volume is mapped over the one protocol chosen at creation
    capabilities: ClassVar[frozenset[Capability]]  # the most the driver can do; setup() asks the array
    capabilities_before_setup: ClassVar[frozenset[Capability]] = frozenset()

    # -- SDK hooks (the vendor module's plumbing) --------------------------------------------
    @staticmethod
    def sdk_connect(options: Any, array: str) -> Any:
        """A connection / client of the vendor SDK for these options."""
        raise NotImplementedError

    @staticmethod
    def sdk_caller(array: str, options: Any, conn: Any) -> ApiCaller:
        """The ApiCaller that runs this connection's calls (with its session renewal, if any)."""
        raise NotImplementedError

    @staticmethod
    def sdk_delete(api: ApiCaller, conn: Any, attrs: dict[str, Any]) -> str | None:
        """Remove one journalled object by its name (idempotent); None when it is gone already."""
        raise NotImplementedError

    def _discover(self) -> set[Capability]:
        """Ask the connected array what it is (facts) and what this lab lets it do (capabilities)."""
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

    @property
    def api(self) -> ApiCaller:
        if self._api is None:
            raise ArrayError(f"array {self.lab.array.name}: setup() has not run")
        return self._api

    def _journal(self, obj_type: str, name: str, **attrs: Any) -> Entry:
        return intend(self.run.ledger, self.DRIVER, self.options, obj_type, name, prefix=self.prefix, **attrs)

    def _delete(self, entry: Entry) -> None:
        self.sdk_delete(self.api, self._conn, entry.attrs)
        self.run.ledger.released(entry)

    def _owned(self, volume: Volume) -> OwnedVolume:
        if volume.name not in self._volumes:
            raise ArrayError(f"array {self.lab.array.name}: no volume {volume.name} of this run")
        return self._volumes[volume.name]

    def _refuse_new(self, name: str, qos: QoS | None) -> None:
        """create_volume's checks before anything is journalled."""
        if qos is not None:
            raise unsupported(self.DRIVER, Capability.QOS)
        if name in self._volumes:
            raise ArrayError(f"array {self.lab.array.name}: volume {name} exists already")

    # -- lifecycle -------------------------------------------------------------------------
    def setup(self) -> None:
        self._conn = self.sdk_connect(self.options, self.lab.array.name)
        self._api = self.sdk_caller(self.lab.array.name, self.options, self._conn)
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
            raise unsupported(self.DRIVER, Capability.QOS)

    # -- data services ---------------------------------------------------------------------
    def snapshot_delete(self, snapshot: Snapshot) -> None:
        owned = self._volumes.get(snapshot.volume)
        entry = owned.snapshots.pop(snapshot.name, None) if owned else None
        if entry is None:
            raise ArrayError(f"array {self.lab.array.name}: no snapshot {snapshot.volume}@{snapshot.name} of this run")
        self._delete(entry)


def register_vendor_remover(driver: type[VendorDriver]) -> None:
    """`iogate cleanup` deletes this driver's journalled objects: log in again with the entry's options, delete by name."""

    def remove(options: dict[str, Any], attrs: dict[str, Any]) -> str | None:
        parsed = driver.Options.model_validate(options)
        array = f"{driver.DRIVER} {parsed.management}"  # type: ignore[attr-defined]
        conn = driver.sdk_connect(parsed, array)
        return driver.sdk_delete(driver.sdk_caller(array, parsed, conn), conn, attrs)

    register_object_remover(driver.DRIVER, remove)
