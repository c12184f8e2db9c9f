"""Applying an environment edit (``planner.edits``) to the world at a tick boundary.

An edit that can be applied changes the environment (or a drone: ``set_fuel``,
``disable_drone``) and yields ``EditApplied`` (plus ``DroneLost`` for a disabled drone); one
that cannot yields ``EditRejected`` with the reason. An edit that names a hidden SAM (adding
one hidden, moving or removing one that is still hidden) is reported on the truth-only
channel, so the executive never hears of a SAM it cannot know.
"""

from __future__ import annotations

from typing import Literal, assert_never

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
from sim.edit_check import DroneState, edit_problem
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


class _World:
    """The world's answers to ``sim.edit_check``'s rule (the dashboard asks its mirror)."""

    def __init__(self, env: EnvironmentState, fleet: Fleet) -> None:
        self.env, self.fleet = env, fleet

    def has_target(self, target_id: str) -> bool:
        return self.env.live_target(target_id) is not None

    def sam_state(self, sam_id: str) -> Literal["absent", "known", "hidden"]:
        q = self.env.live_sam(sam_id)
        return "absent" if q is None else "known" if self.env.s_known[q] else "hidden"

    def is_airport_or_start(self, node_id: str) -> bool:
        return self.env.is_airport_or_start(node_id)

    def drone_state(self, drone_id: str) -> DroneState:
        i = self.fleet.index.get(drone_id)
        return "absent" if i is None else "lost" if self.fleet.status[i] == K.LOST else "live"


def _apply(edit: Edit, tick: int, env: EnvironmentState, fleet: Fleet) -> list[Event]:
    """Apply ``edit`` or raise ``Rejected``; returns the events besides ``EditApplied``."""
    problem = edit_problem(edit, _World(env, fleet))  # the rule the dashboard's door applies
    if problem is not None:
        raise Rejected(problem.message)
    # The ids resolve now: every slot looked up below is live.
    match edit:
        case AddTarget():
            env.put_target(edit.id, edit.x, edit.y, edit.priority, edit.type)
            fleet.refresh_eligibility()
        case RemoveTarget():
            env.t_alive[env.t_index[edit.id]] = False
        case MoveTarget():
            j = env.t_index[edit.id]
            env.T[0, j], env.T[1, j] = edit.x, edit.y
        case SetPriority():
            env.T[2, env.t_index[edit.id]] = edit.priority
        case AddSam():
            env.put_sam(edit.id, edit.pos[0], edit.pos[1], edit.range, known=not edit.hidden)
        case RemoveSam():
            q = env.s_index[edit.id]
            env.s_alive[q] = False
            env.s_known[q] = False
        case MoveSam():
            q = env.s_index[edit.id]
            env.SM[0, q], env.SM[1, q] = edit.pos
            if edit.range is not None:
                env.SM[2, q] = edit.range
        case RevealSam():
            env.s_known[env.s_index[edit.id]] = True
        case SetFuel():
            fleet.F[K.FUEL, fleet.index[edit.drone]] = edit.fuel
            return []  # the environment did not change
        case DisableDrone():
            i = fleet.index[edit.drone]
            fleet.lose(i, "disabled")
            return [DroneLost(tick=tick, drone=edit.drone, reason="disabled", pos=fleet.xy(i))]
        case _:  # pragma: no cover - the union is closed
            assert_never(edit)
    env.changed()
    return []
