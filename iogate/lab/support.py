"""What each array driver can serve, and what a protocol needs from its options.

A lab that names a protocol its driver cannot export (NFS on the ONTAP driver, which
maps LUNs and namespaces only), or an iSCSI / NVMe/TCP protocol without the
portal or transport address the driver needs to hand the hosts, would fail at the
first volume, hours into a run. These are refused by load_lab, at the protocol's line.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from iogate.lab.checks import Problem

# Drivers that are not vendor drivers, and the connectors they export volumes over (None: any,
# the static driver's volumes name their own). A vendor driver's come from rest_common (below).
NON_VENDOR_CONNECTORS: dict[str, frozenset[str] | None] = {
    "local": frozenset({"block", "nbd"}),  # one loop device, reached directly or through nbdkit
    "linux_target": None,  # filled from linux_target.EXPORT_OF_CONNECTOR on first use
    "static": None,
}

# The array options an exported volume's connector needs (only those the driver's Options model has:
# ONTAP asks the array for its target IQN and subsystem NQN, Pure and PowerStore take them from the lab).
NEEDED_OPTIONS: dict[str, tuple[str, ...]] = {
    "iscsi": ("iscsi_portal", "iscsi_target_iqn"),
    "nvme-tcp": ("nvme_traddr", "nvme_subsys_nqn"),
}

# Vendor drivers -> (the SDK's import name, the package that provides it).
SDKS: dict[str, tuple[str, str]] = {
    "ontap": ("netapp_ontap", "netapp-ontap"),
    "pure": ("pypureclient", "py-pure-client"),
    "powerstore": ("PyPowerStore", "PyPowerStore"),
    "vast": ("vastpy", "vastpy"),
}


def served_connectors(driver_name: str, driver: Any) -> frozenset[str] | None:
    """The connector names the driver exports volumes over (None: any connector)."""
    if driver_name == "linux_target":
        from iogate.arrays.linux_target import EXPORT_OF_CONNECTOR

        return frozenset(EXPORT_OF_CONNECTOR)
    if driver_name in NON_VENDOR_CONNECTORS:
        return NON_VENDOR_CONNECTORS[driver_name]
    from iogate.arrays.rest_common import PROTOCOL_OF_CONNECTOR

    maps_over = getattr(driver, "maps_over", ())
    files = frozenset(getattr(driver, "file_connectors", ()))  # file exports a vendor driver makes (vast, huawei, hitachi: NFS)
    return files | frozenset(c for c, protocol in PROTOCOL_OF_CONNECTOR.items() if not maps_over or protocol in maps_over)


def block_protocol(connector: str) -> str | None:
    """iscsi, nvme-tcp or fc for a vendor-mapped connector (multipath is iSCSI)."""
    from iogate.arrays.rest_common import PROTOCOL_OF_CONNECTOR

    return PROTOCOL_OF_CONNECTOR.get(connector)


def protocol_problems(lab: Any, driver: Any, options: Any) -> list[Problem]:
    """Each protocol's connector served by the driver, with the array options it needs present."""
    served = served_connectors(lab.array.driver, driver)
    fields = getattr(type(options), "model_fields", {})
    problems: list[Problem] = []
    for index, protocol in enumerate(lab.protocols):
        if served is not None and protocol.connector not in served:
            problems.append((("protocols", index, "connector"),
                             f"the {lab.array.driver} driver cannot export volumes over {protocol.connector!r} "
                             f"(it serves: {', '.join(sorted(served))})"))
            continue
        needed = NEEDED_OPTIONS.get(block_protocol(protocol.connector) or "", ())
        missing = [name for name in needed if name in fields and getattr(options, name, None) in (None, "")]
        if missing:
            problems.append((("protocols", index, "connector"),
                             f"{protocol.connector} on the {lab.array.driver} driver needs array.options "
                             f"{' and '.join(missing)} (where the hosts reach its volumes)"))
    return problems


def capability_problems(lab: Any, driver: Any) -> list[Problem]:
    """What the lab asks of every volume that the driver can never do (volume creation would fail)."""
    capabilities = {getattr(c, "value", c) for c in getattr(driver, "capabilities", ())}
    if lab.volumes.qos is not None and "qos" not in capabilities:
        return [(("volumes", "qos"), f"the {lab.array.driver} driver cannot cap volumes (no qos capability); leave volumes.qos out")]
    return []


def sdk_problem(driver_name: str) -> str | None:
    """Why the driver's vendor SDK cannot be imported (None: it can, or the driver needs none)."""
    if driver_name not in SDKS:
        return None
    module, package = SDKS[driver_name]
    if importlib.util.find_spec(module) is None:
        return (f"the {driver_name} driver needs the vendor SDK {package}, which is not installed: "
                f"make vendors (or pip install -r requirements-vendors.txt)")
    return None
