"""One-line meanings of driver and connector option fields whose model gives none in its own source.

The lab reference (iogate.lab.reference) takes a field's meaning from its Field(description=...),
else its source comment, else from here, keyed by the class that declares the field. A field
that has none of the three fails the reference self-test; a note whose field no longer exists
fails it too, so this table cannot drift from the models. A model that gains a description of its
own wins over its note here (the note can then go).
"""

from __future__ import annotations

NOTES: dict[str, str] = {
    # iogate/arrays/local.py
    "LocalOptions.pool_fs": "file system of the reflink pool: xfs (reflink=1) or btrfs",
    "LocalOptions.pool_size": "size of the pool's sparse image in the run directory (with a unit); every volume of the run lives in it",
    "LocalOptions.metrics_keep_s": "how long the array keeps each volume's counter samples (a window older than that returns what is left)",
    # iogate/arrays/linux_target.py
    "LinuxTargetOptions.ssh_key": "private key for the target server's ssh transport",
    "LinuxTargetOptions.volume_group": "LVM volume group IOGate makes on pool_device",
    "LinuxTargetOptions.iscsi_port": "TCP port of the LIO iSCSI portal",
    "LinuxTargetOptions.nvme_port": "TCP port of the nvmet NVMe/TCP port",
    "LinuxTargetOptions.nfs_clients": "clients the NFS exports allow (exportfs client spec)",
    "LinuxTargetOptions.default_export": "protocol a volume is exported over when the test names none",
    "LinuxTargetOptions.vdo": "put a VDO (dedupe + compression) device on the pool for the dedupe capability",
    "LinuxTargetOptions.vdo_logical_size": "logical size of the VDO device",
    # iogate/arrays/static.py
    "StaticOptions.model": "the array's model as the report names it",
    "StaticOptions.volumes": "the pre-provisioned volumes: name, size, protocol, identity, export (and host)",
    "StaticOptions.hooks": "commands or HTTP calls that do the data-service events (snapshot_create, dedupe ...)",
    # iogate/arrays/rest_common.py, vendor_base.py (ontap, pure, powerstore)
    "VendorOptions.username": "the management API user",
    "VendorOptions.timeout_s": "seconds one API call may take",
    "VendorOptions.retry_backoff_s": "seconds before the first retry of a read (doubling after)",
    "VendorOptions.name_prefix": "prefix of every object IOGate creates on the array (cleanup deletes only these)",
    "VendorOptions.default_protocol": "protocol a volume is mapped over when the test names none (iscsi, nvme-tcp, fc, multipath)",
    "FixedTargetOptions.iscsi_target_iqn": "the array's iSCSI target IQN the hosts log in to",
    "FixedTargetOptions.nvme_traddr": "address of the array's NVMe/TCP port the hosts connect to",
    "FixedTargetOptions.nvme_trsvcid": "TCP port of the NVMe/TCP service",
    "FixedTargetOptions.nvme_subsys_nqn": "the array's NVMe subsystem NQN",
    "OntapOptions.svm": "the SVM (storage VM) whose FlexVol and LIFs the run uses",
    "OntapOptions.os_type": "os_type of the LUNs, igroups and subsystems IOGate creates",
    "OntapOptions.nvme_trsvcid": "TCP port of the NVMe/TCP LIF",
    "OntapOptions.efficiency_timeout_s": "the longest an on-demand dedupe (efficiency) pass may take",
    "OntapOptions.transfer_timeout_s": "the longest a SnapMirror transfer may take",
    "PowerStoreOptions.os_type": "os_type of the host objects IOGate creates",
    "PowerStoreOptions.replication_timeout_s": "the longest a replication session's sync may take",
    "PureOptions.replication_timeout_s": "the longest a replicate-now transfer may take",
    # iogate/hosts/connectors/*.py
    "NbdOptions.threads": "nbdkit threads serving the device",
    "IscsiOptions.chap_user": "CHAP user name (give chap_password with it)",
    "IscsiOptions.chap_password": "CHAP secret, by reference: ${env:NAME} or ${file:PATH} (12 or more characters)",
    "IscsiOptions.device_timeout_s": "the longest the LUN's block device may take to appear after login",
    "NvmeTcpOptions.hostnqn": "host NQN to connect as (default: the host's /etc/nvme/hostnqn)",
    "NvmeTcpOptions.nr_io_queues": "nvme connect --nr-io-queues (default: the kernel's)",
    "NvmeTcpOptions.queue_size": "nvme connect --queue-size (default: the kernel's)",
    "NvmeTcpOptions.ctrl_loss_tmo_s": "nvme connect --ctrl-loss-tmo in seconds (default: the kernel's)",
    "NvmeTcpOptions.discovery": "check with nvme discover that the port advertises the subsystem",
    "NvmeTcpOptions.device_timeout_s": "the longest the namespace's block device may take to appear after connect",
    "NfsOptions.vers": "NFS version to mount (3, 4.0, 4.1, 4.2)",
    "NfsOptions.nconnect": "nconnect mount option: TCP connections per mount (1-16)",
    "NfsOptions.mount_root": "directory on the host under which IOGate mounts each export",
    "FcOptions.device_timeout_s": "the longest the LUN's block device may take to appear after a rescan",
    "FcOptions.delete_on_disconnect": "delete the SCSI device on disconnect",
    "MultipathOptions.transport": "the paths' transport: iscsi or fc",
    "MultipathOptions.transport_options": "options of that transport's connector (e.g. chap_user, chap_password)",
    "MultipathOptions.map_timeout_s": "the longest the dm-multipath map may take to appear",
}

# Examples for the reference's example column where neither the field nor the example labs give one.
EXAMPLES: dict[str, object] = {
    "IscsiOptions.chap_user": "iogate",
    "IscsiOptions.chap_password": "${env:ISCSI_CHAP_SECRET}",
    "IscsiOptions.node_settings": {"node.session.queue_depth": "128"},
    "NvmeTcpOptions.hostnqn": "nqn.2014-08.org.nvmexpress:uuid:6f4c3a2e-0000-4000-8000-000000000001",
    "NvmeTcpOptions.nr_io_queues": 8,
    "NvmeTcpOptions.queue_size": 128,
    "NvmeTcpOptions.ctrl_loss_tmo_s": 600,
    "NfsOptions.nconnect": 4,
    "NfsOptions.mount_options": ["rsize=1048576", "wsize=1048576", "hard"],
    "MultipathOptions.transport_options": {"chap_user": "iogate", "chap_password": "${env:ISCSI_CHAP_SECRET}"},
    "PowerStoreOptions.protection_policy_id": "9f1c2b3a-0000-4000-8000-000000000001",
    "PureOptions.protection_group": "iogate-dr",
    "LinuxTargetOptions.vanishes_with": "iogate-labvm",
}
