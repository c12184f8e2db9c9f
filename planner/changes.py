"""How an edit changes a world: one function for every world that holds targets, SAMs and
drones.

``apply_edit(world, edit)`` says, once for every kind of edit (``planner.edits``), what it
does, in a few primitive steps on a ``Picture``: read a target or a SAM, put one (added, or
its fields replaced), drop one, disable a drone, set a drone's fuel. The worlds are:

* the simulation's (``sim._apply_edit``: its slot arrays, once the edit's ids resolve);
* a replay's picture at a tick (``executive.traces.timeline``: the stored scene);
* a scenario, as a typed copy (``ScenarioPicture`` here): what a what-if plans on
  (``agents.words.whatif``) and what the oracle plans once (``planner.oracle``).

An id that names nothing is no change (the sim refuses such an edit before, by
``sim.edit_check``'s rule; a what-if names the problem in its own words). A new kind of edit
is one more ``case`` below (mypy names it: the ``match`` ends in ``assert_never``) and, if
it needs a step no ``Picture`` has, one more method on each of the three worlds (mypy names
those too, where they are passed as a ``Picture``).
"""

from __future__ import annotations

from typing import Protocol, assert_never

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
from planner.model import DroneConfig, Environment, Sam, Scenario, Target

__all__ = ["Picture", "ScenarioPicture", "apply_edit"]


class Picture(Protocol):
    """A world ``apply_edit`` can change: its live targets and SAMs (known or hidden), and
    its drones."""

    def target(self, target_id: str) -> Target | None:
        """The live target ``target_id``, or None."""
        ...

    def put_target(self, target: Target) -> None:
        """``target`` is live from now: added, or the fields of the live one with its id
        replaced (whether it was collected stays as it was)."""
        ...

    def drop_target(self, target_id: str) -> None:
        """The target is gone (nothing when there is none)."""
        ...

    def sam(self, sam_id: str) -> tuple[Sam, bool] | None:
        """The live SAM ``sam_id`` and whether it is known, or None."""
        ...

    def put_sam(self, sam: Sam, *, known: bool) -> None:
        """``sam`` is live from now, known or hidden: added, or the one with its id
        replaced."""
        ...

    def drop_sam(self, sam_id: str) -> None:
        """The SAM is gone (nothing when there is none)."""
        ...

    def disable_drone(self, drone_id: str) -> None:
        """The drone is lost (nothing when there is none)."""
        ...

    def set_fuel(self, drone_id: str, fuel: float) -> None:
        """The drone has ``fuel`` km to fly from now (nothing when there is none)."""
        ...


def apply_edit(world: Picture, edit: Edit) -> None:
    """Change ``world`` as ``edit`` says (an id that names nothing: no change)."""
    match edit:
        case AddTarget():
            world.put_target(
                Target(id=edit.id, x=edit.x, y=edit.y, priority=edit.priority, type=edit.type)
            )
        case RemoveTarget():
            world.drop_target(edit.id)
        case MoveTarget():
            if (target := world.target(edit.id)) is not None:
                world.put_target(target.model_copy(update={"x": edit.x, "y": edit.y}))
        case SetPriority():
            if (target := world.target(edit.id)) is not None:
                world.put_target(target.model_copy(update={"priority": edit.priority}))
        case AddSam():
            world.put_sam(Sam(id=edit.id, pos=edit.pos, range=edit.range), known=not edit.hidden)
        case RemoveSam():
            world.drop_sam(edit.id)
        case MoveSam():
            if (found := world.sam(edit.id)) is not None:
                sam, known = found
                moved = (
                    {"pos": edit.pos}
                    if edit.range is None
                    else {"pos": edit.pos, "range": edit.range}
                )
                world.put_sam(sam.model_copy(update=moved), known=known)
        case RevealSam():
            if (found := world.sam(edit.id)) is not None:
                world.put_sam(found[0], known=True)
        case DisableDrone():
            world.disable_drone(edit.drone)
        case SetFuel():
            world.set_fuel(edit.drone, edit.fuel)
        case _:  # pragma: no cover - the union is closed
            assert_never(edit)


class ScenarioPicture:
    """A scenario as a ``Picture``: typed copies of its targets, SAMs and drone configs,
    changed by ``apply_edit``; ``scenario()`` is the scenario they make. A drone's fuel is
    its ``fuel_budget`` (on a remainder problem, the fuel it has to plan with); a disabled
    drone is one not ``enabled``."""

    def __init__(self, scenario: Scenario) -> None:
        self.base = scenario
        env = scenario.environment
        self.targets: dict[str, Target] = {t.id: t for t in env.targets}
        self.sams: dict[str, tuple[Sam, bool]] = {s.id: (s, True) for s in env.sams}
        self.drones: dict[str, DroneConfig] = dict(scenario.drone_configs)

    def target(self, target_id: str) -> Target | None:
        """The target ``target_id``, or None."""
        return self.targets.get(target_id)

    def put_target(self, target: Target) -> None:
        """Add ``target``, or replace the one with its id where it stands."""
        self.targets[target.id] = target

    def drop_target(self, target_id: str) -> None:
        """Remove the target, if there is one."""
        self.targets.pop(target_id, None)

    def sam(self, sam_id: str) -> tuple[Sam, bool] | None:
        """The SAM ``sam_id`` and whether it is known, or None."""
        return self.sams.get(sam_id)

    def put_sam(self, sam: Sam, *, known: bool) -> None:
        """Add ``sam``, or replace the one with its id where it stands."""
        self.sams[sam.id] = (sam, known)

    def drop_sam(self, sam_id: str) -> None:
        """Remove the SAM, if there is one."""
        self.sams.pop(sam_id, None)

    def disable_drone(self, drone_id: str) -> None:
        """The drone is not ``enabled`` (nothing when there is no such drone)."""
        if drone_id in self.drones:
            self.drones[drone_id] = self.drones[drone_id].model_copy(update={"enabled": False})

    def set_fuel(self, drone_id: str, fuel: float) -> None:
        """The drone's ``fuel_budget`` is ``fuel`` (nothing when there is no such drone)."""
        if drone_id in self.drones:
            self.drones[drone_id] = self.drones[drone_id].model_copy(update={"fuel_budget": fuel})

    def scenario(self, *, hidden_known: bool = False) -> Scenario:
        """The scenario as changed, without a timeline (what it scripts is not applied):
        hidden SAMs left out, or known with ``hidden_known`` (the oracle knows them).
        Raises pydantic's ``ValidationError`` if the result is not a valid scenario."""
        env = self.base.environment
        sams = [sam for sam, known in self.sams.values() if known or hidden_known]
        environment = Environment.model_validate(
            {
                "airports": env.airports,
                "targets": list(self.targets.values()),
                "sams": sams,
                "synthetic_starts": env.synthetic_starts,
            }
        )
        return Scenario.model_validate(
            {
                "environment": environment,
                "drone_configs": self.drones,
                "sim": self.base.sim,
                "geo": self.base.geo,
            }
        )
