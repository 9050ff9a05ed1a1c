"""The lab: what the user's lab file says, validated before anything is provisioned.

    model.py     the lab model (Lab, HostConfig, ProtocolConfig, VolumeSet, QoS ...)
                 and load_lab; its public names are re-exported here, so
                 `from iogate.lab import Lab, load_lab` is the one way to import them
    checks.py    cross-field checks of a lab (paths, sizes, names)
    yamlfile.py  YAML with file:line errors (labs, workloads, criteria specs)
    secrets.py   `${env:NAME}` / `${file:PATH}` references and their redaction
    profiles.py  run profiles (smoke/quick/full) and profile files
    registry.py  array drivers and connectors by the name a lab file gives them
    cli.py       `python -m iogate lab`
"""

from iogate.lab.model import (
    DEFAULT_LAB,
    DEFAULT_LIVENESS,
    ArrayConfig,
    DeviceIdentity,
    HostConfig,
    HostLiveness,
    Lab,
    ProtocolConfig,
    QoS,
    VolumeSet,
    load_lab,
    round_robin,
)

__all__ = [
    "DEFAULT_LAB",
    "DEFAULT_LIVENESS",
    "ArrayConfig",
    "DeviceIdentity",
    "HostConfig",
    "HostLiveness",
    "Lab",
    "ProtocolConfig",
    "QoS",
    "VolumeSet",
    "load_lab",
    "round_robin",
]
