"""The event happened: a dedupe job that saved nothing has measured no dedupe's impact on the load.

An events test judges the load while the array does something (a dedupe pass, a
snapshot, a replica's sync). Where the array's own evidence says how much it did,
that figure is judged too: a dedupe pass that saved no byte of a datastore filled
with duplicates ran no dedupe (a scanner that found nothing, a pass over the wrong
volume, an array that had deduplicated inline already), so the VMs' unchanged
latency beside it proves nothing about dedupe. The judge (judge.events) adds this
verdict for every event named here, and refuses to judge such an event without its
evidence; missing figures are no data, a FAIL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iogate.judging.common import no_data
from iogate.verdict import Unit, Verdict

# event -> the key of the array's evidence that says how much the event did (ArrayDriver.dedupe_run: saved_bytes)
EFFECT_KEYS = {"dedupe": "saved_bytes"}


def effect_verdict(service: str, evidence: Mapping[str, Any]) -> Verdict:
    key = EFFECT_KEYS[service]
    name = f"{service}_took_effect"
    value = evidence.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool) or value != value:
        return no_data(name, 1.0, Unit.BYTES, "event", f"the array's {service} evidence holds no {key} ({value!r}): "
                       f"what the {service} job did is unknown, so its impact on the load was not measured")
    did = value > 0
    detail = f"the {service} job saved {value:.0f} bytes ({value / 2**20:.1f} MiB)"
    if not did:
        detail += ": it did nothing, so its impact on the load was not measured"
    return Verdict(name, did, float(value), 1.0, Unit.BYTES, "event", detail=detail,
                   description=f"The {service} job did work the array can show ({key} > 0).",
                   bound_source="iogate/judging/event_effect.py (a rule of the events family: no event, no impact measured)")
