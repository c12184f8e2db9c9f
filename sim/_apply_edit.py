"""Applying an environment edit (``planner.edits``) to the world at a tick boundary.

What each kind of edit does is ``planner.changes.apply_edit``'s, on the slots here (the
same function changes a replay's picture and a what-if's scenario). An edit that can be
applied changes the environment (or a drone: ``set_fuel``, ``disable_drone``) and yields
``EditApplied`` (plus ``DroneLost`` for a disabled drone); one that cannot yields
``EditRejected`` with the reason. An edit that names a hidden SAM (adding one hidden, moving
or removing one that is still hidden) is reported on the truth-only channel, so the
executive never hears of a SAM it cannot know.
"""

from __future__ import annotations

from typing import Literal, assert_never

from planner.changes import apply_edit as apply_edit_to
from planner.edits import (
    ENV_EDITS,
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
from planner.model import Sam, Target
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
        case RevealSam():
            return False  # revealed, the SAM is known: its reveal is observable
        case (
            AddTarget() | RemoveTarget() | MoveTarget() | SetPriority() | DisableDrone() | SetFuel()
        ):
            return False
        case _:  # pragma: no cover - the union is closed
            assert_never(edit)


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
    world = _Picture(env, fleet, tick)
    apply_edit_to(world, edit)  # what each kind does: planner.changes, for every world
    if isinstance(edit, ENV_EDITS):
        env.changed()
    return world.events


class _Picture:
    """The environment's slots and the fleet as a ``planner.changes.Picture``: what an edit
    does here, and the events it causes (a disabled drone's ``DroneLost``)."""

    def __init__(self, env: EnvironmentState, fleet: Fleet, tick: int) -> None:
        self.env, self.fleet, self.tick = env, fleet, tick
        self.events: list[Event] = []

    def target(self, target_id: str) -> Target | None:
        return self.env.target(target_id)

    def put_target(self, target: Target) -> None:
        env = self.env
        j = env.live_target(target.id)
        new_type = target.type not in env.types
        if j is None:
            env.put_target(target.id, target.x, target.y, target.priority, target.type)
        else:  # moved or re-prioritised: who collected it stays
            env.set_target(j, target.x, target.y, target.priority, target.type)
        if j is None or new_type:  # who can sense it
            self.fleet.refresh_eligibility()

    def drop_target(self, target_id: str) -> None:
        j = self.env.live_target(target_id)
        if j is not None:
            self.env.t_alive[j] = False

    def sam(self, sam_id: str) -> tuple[Sam, bool] | None:
        return self.env.sam(sam_id)

    def put_sam(self, sam: Sam, *, known: bool) -> None:
        self.env.put_sam(sam.id, sam.x, sam.y, sam.range, known=known)

    def drop_sam(self, sam_id: str) -> None:
        q = self.env.live_sam(sam_id)
        if q is not None:
            self.env.s_alive[q] = False
            self.env.s_known[q] = False

    def disable_drone(self, drone_id: str) -> None:
        fleet = self.fleet
        i = fleet.index[drone_id]
        fleet.lose(i, "disabled")
        self.events.append(
            DroneLost(tick=self.tick, drone=drone_id, reason="disabled", pos=fleet.xy(i))
        )

    def set_fuel(self, drone_id: str, fuel: float) -> None:
        self.fleet.F[K.FUEL, self.fleet.index[drone_id]] = fuel
