"""Protocol connectors: how an initiator reaches a volume (block, nbd, iscsi, nvme, nfs, fc)."""
