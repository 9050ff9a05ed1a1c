"""What each event action does to the array: one table, action name -> function.

An action gets the schedule's ActionContext (the array, its driver's name, the
snapshots the schedule created) and the Event, calls the driver, and returns the
evidence recorded with the occurrence. Adding an action = one function here, one
ACTIONS line, and its capability in events.model.REQUIRES (ActionName too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from iogate.arrays.base import ArrayDriver, Snapshot, Volume
from iogate.events.model import REQUIRES, Event, EventError


@dataclass
class ActionContext:
    """What actions share within one schedule: the array and the snapshots created so far."""

    array: ArrayDriver
    driver_name: str
    snapshots: dict[tuple[str, str], Snapshot] = field(default_factory=dict)


Action = Callable[[ActionContext, Event], dict[str, Any]]


def _volume(event: Event) -> Volume:
    volume = event.volume
    assert volume is not None  # Event.__post_init__ refuses a volume action without one
    return volume


def snapshot_create(context: ActionContext, event: Event) -> dict[str, Any]:
    volume = _volume(event)
    snapshot = context.array.snapshot_create(volume, event.name)
    context.snapshots[(volume.name, event.name)] = snapshot
    return {"snapshot": f"{volume.name}@{event.name}", **snapshot.evidence}


def snapshot_delete(context: ActionContext, event: Event) -> dict[str, Any]:
    volume = _volume(event)
    snapshot = context.snapshots.pop((volume.name, event.name), None)
    if snapshot is None:
        raise EventError(f"snapshot {volume.name}@{event.name} was not created by this schedule")
    context.array.snapshot_delete(snapshot)
    return {"snapshot": f"{volume.name}@{event.name}"}


def dedupe_run(context: ActionContext, event: Event) -> dict[str, Any]:
    return dict(context.array.dedupe_run((event.volume,)) if event.volume is not None else context.array.dedupe_run())


def replicate(context: ActionContext, event: Event) -> dict[str, Any]:
    return dict(context.array.replicate(_volume(event)))


def degrade(context: ActionContext, event: Event) -> dict[str, Any]:
    volume = _volume(event)
    context.array.set_qos(volume, event.qos)
    return {"volume": volume.name, "qos": event.qos.model_dump(exclude_none=True) if event.qos else "none"}


def _require(context: ActionContext, event: Event) -> None:
    """A mirror action names the missing capability itself (the driver may not declare the method)."""
    if REQUIRES[event.action] not in context.array.capabilities:
        raise EventError(f"array driver {context.driver_name} has no {event.action} (capability {REQUIRES[event.action].value})")


def mirror_attach(context: ActionContext, event: Event) -> dict[str, Any]:
    volume = _volume(event)
    _require(context, event)
    return dict(context.array.mirror_attach(volume) or {})


def mirror_detach(context: ActionContext, event: Event) -> dict[str, Any]:
    volume = _volume(event)
    _require(context, event)
    context.array.mirror_detach(volume)
    return {}


ACTIONS: dict[str, Action] = {
    "snapshot_create": snapshot_create,
    "snapshot_delete": snapshot_delete,
    "dedupe_run": dedupe_run,
    "replicate": replicate,
    "mirror_attach": mirror_attach,
    "mirror_detach": mirror_detach,
    "degrade": degrade,
}


def perform(context: ActionContext, event: Event) -> dict[str, Any]:
    """Run the event's action on the array; its evidence for the record."""
    return ACTIONS[event.action](context, event)
