"""What a fake remote shell answers: the fields of testinfra's CommandResult that the initiator reads."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Said:
    rc: int = 0
    stdout: str = ""
    stderr: str = ""
    command: str = ""
