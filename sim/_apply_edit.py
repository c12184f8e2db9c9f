"""Applying an environment edit (``planner.edits``) to the world at a tick boundary.

An edit that can be applied changes the environment (or a drone: ``set_fuel``,
``disable_drone``) and yields ``EditApplied`` (plus ``DroneLost`` for a disabled drone); one
that cannot yields ``EditRejected`` with the reason. An edit that names a hidden SAM (adding
one hidden, moving or removing one that is still hidden) is reported on the truth-only
channel, so the executive never hears of a SAM it cannot know.
"""

from __future__ import annotations

from typing import assert_never

from planner.edits import (
    AddSam,
    AddTarget,
    DisableDrone,
    Edit,
    MoveSam,
    MoveTarget,
    RemoveSam,
    RemoveTarget,
    RevealSam,
    SetFuel,
    SetPriority,
)
from sim import _kernels as K
from sim._environment import EnvironmentState
from sim._fleet import Fleet
from sim.errors import Rejected
from sim.events import DroneLost, EditApplied, EditRejected, Event

__all__ = ["apply_edit"]


def apply_edit(
    edit: Edit, *, tick: int, env: EnvironmentState, fleet: Fleet
) -> tuple[list[Event], list[Event]]:
    """Apply ``edit`` at the start of ``tick``; returns (observable events, truth-only
    events)."""
    hidden = _names_hidden_sam(edit, env)
    try:
        extra = _apply(edit, tick, env, fleet)
    except Rejected as exc:
        event = EditRejected(tick=tick, edit=edit, reason=str(exc))
        return ([], [event]) if hidden else ([event], [])
    applied = EditApplied(tick=tick, edit=edit)
    if hidden:
        return extra, [applied]
    return [applied, *extra], []


def _names_hidden_sam(edit: Edit, env: EnvironmentState) -> bool:
    match edit:
        case AddSam(hidden=hidden):
            return hidden
        case RemoveSam(id=sam_id) | MoveSam(id=sam_id):
            return env.is_hidden_sam(sam_id)
        case _:
            return False


def _apply(edit: Edit, tick: int, env: EnvironmentState, fleet: Fleet) -> list[Event]:
    """Apply ``edit`` or raise ``Rejected``; returns the events besides ``EditApplied``."""
    match edit:
        case AddTarget():
            if env.is_airport_or_start(edit.id):
                raise Rejected(f"id {edit.id!r} is an airport or start")
            if env.live_target(edit.id) is not None:
                raise Rejected(f"target {edit.id!r} already exists")
            env.put_target(edit.id, edit.x, edit.y, edit.priority, edit.type)
            fleet.refresh_eligibility()
        case RemoveTarget():
            env.t_alive[_live_target(env, edit.id)] = False
        case MoveTarget():
            j = _live_target(env, edit.id)
            env.T[0, j], env.T[1, j] = edit.x, edit.y
        case SetPriority():
            env.T[2, _live_target(env, edit.id)] = edit.priority
        case AddSam():
            if env.live_sam(edit.id) is not None:
                raise Rejected(f"SAM {edit.id!r} already exists")
            env.put_sam(edit.id, edit.pos[0], edit.pos[1], edit.range, known=not edit.hidden)
        case RemoveSam():
            q = _live_sam(env, edit.id)
            env.s_alive[q] = False
            env.s_known[q] = False
        case MoveSam():
            q = _live_sam(env, edit.id)
            env.SM[0, q], env.SM[1, q] = edit.pos
            if edit.range is not None:
                env.SM[2, q] = edit.range
        case RevealSam():
            q = _live_sam(env, edit.id)
            if env.s_known[q]:
                raise Rejected(f"SAM {edit.id!r} is already known")
            env.s_known[q] = True
        case SetFuel():
            fleet.F[K.FUEL, _live_drone(fleet, edit.drone)] = edit.fuel
            return []  # the environment did not change
        case DisableDrone():
            i = _live_drone(fleet, edit.drone)
            fleet.lose(i, "disabled")
            return [DroneLost(tick=tick, drone=edit.drone, reason="disabled", pos=fleet.xy(i))]
        case _:  # pragma: no cover - the union is closed
            assert_never(edit)
    env.changed()
    return []


def _live_target(env: EnvironmentState, target_id: str) -> int:
    j = env.live_target(target_id)
    if j is None:
        raise Rejected(f"no target {target_id!r}")
    return j


def _live_sam(env: EnvironmentState, sam_id: str) -> int:
    q = env.live_sam(sam_id)
    if q is None:
        raise Rejected(f"no SAM {sam_id!r}")
    return q


def _live_drone(fleet: Fleet, drone_id: str) -> int:
    i = fleet.index.get(drone_id)
    if i is None:
        raise Rejected(f"no drone {drone_id!r}")
    if fleet.status[i] == K.LOST:
        raise Rejected(f"drone {drone_id} is already lost")
    return i
