"""Initiator hosts: command execution, protocol connectors, device identity, guard."""
