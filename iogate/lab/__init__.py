"""The lab: what the user's lab file says, validated before anything is provisioned.

    model.py     the lab model (Lab, HostConfig, ProtocolConfig, VolumeSet, QoS ...)
                 and load_lab; its public names are re-exported here, so
                 `from iogate.lab import Lab, load_lab` is the one way to import them
    checks.py    cross-field checks of a lab (paths, names, host addresses, verify_tls,
                 credentials by reference everywhere, CHAP as a pair)
    support.py   what each driver can export (protocols, the options they need, its SDK)
    yamlfile.py  YAML with file:line errors (labs, workloads, criteria specs); unknown keys
                 name the nearest match and the allowed keys
    secrets.py   `${env:NAME}` / `${file:PATH}` references and their redaction
    profiles.py  run profiles (smoke/quick/full) and profile files
    registry.py  array drivers and connectors by the name a lab file gives them
    check.py     `iogate lab check`: everything knowable before a run, then the plan
    plan.py      the run's plan: volume sets per family, capacity, prefill, skips, time
    reachable.py `iogate lab check --connect`: hosts and array reached, nothing provisioned
    reference.py the lab-file reference and JSON Schema from the models (tools/lab_reference.py);
                 field_notes.py: meanings of driver / connector options their modules lack
    cli.py       `iogate lab check|up|down|status`
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
