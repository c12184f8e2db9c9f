"""What every tool a model can call shares (seed 002, "Tool Contracts").

A ``Tool`` is a name, a description, the pydantic model that parses its arguments (its JSON
Schema is the one the engine is shown: ``ToolSpec.for_model``, so the schema and the parser
never drift), whether it only reads or acts (plans on a copy), and its handler. A handler
returns the result's ``data`` or raises ``ToolError`` with one line the model can act on;
the session (``agents.tools.session``) turns either into ``{"ok": true, "data": ...}`` or
``{"ok": false, "error": "..."}`` and never lets an exception through.

``ToolContext`` is what the tools read: the frozen ``MissionState`` (the known world only:
never the truth) and the problem the acting tools plan on, fixed when the context is built
(a live run's remainder is cut on the event loop, between ticks; a tool only ever sees the
copy). No tool holds a live object, so no tool can change a run: an acting tool answers
with a proposal, and a commit still goes through the planning round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from agents.engines.base import ToolSpec
from agents.words.state import MissionState
from executive.errors import ExecutiveError
from planner.model import Environment, Point, Scenario

if TYPE_CHECKING:
    from planner.mission import Mission
    from sim import World

__all__ = ["Kind", "NoArgs", "Tool", "ToolArgs", "ToolContext", "ToolError", "failed", "succeeded"]

Kind = Literal["read", "act"]  # read: answers from the state; act: plans on a copy


class ToolError(ExecutiveError):
    """A call that cannot be answered (an unknown id, no plan yet): its text is the error."""


class ToolArgs(BaseModel):
    """A tool's arguments: unknown fields are refused, so a misspelt one is said."""

    model_config = ConfigDict(extra="forbid")


class NoArgs(ToolArgs):
    """No arguments."""


@dataclass(frozen=True)
class Tool:
    """One tool: its contract (name, description, arguments' model, kind) and its handler."""

    name: str
    description: str
    args: type[ToolArgs]
    kind: Kind
    handler: Callable[[ToolContext, Any], Any]  # (context, parsed args) -> data
    # an act tool plans (seconds of CPU): the session runs it in a worker thread
    blocking: bool = False

    @cached_property
    def spec(self) -> ToolSpec:
        """The tool as an engine is shown it: its schema generated from ``args``."""
        return ToolSpec.for_model(self.name, self.description, self.args)


@dataclass
class ToolContext:
    """What the tools read (see the module docstring). Build it with ``for_state``."""

    state: MissionState
    problem: Scenario  # what the acting tools plan on: the remainder, or the known mission
    world: World | None = None  # for the what-if (read on the event loop when built)
    not_planned: Mapping[str, str] = field(default_factory=dict)
    iterations: int = 200  # the planner's budget for solve / what-if (fixed: reproducible)
    seed: int = 0
    # why the acting tools cannot plan here (a mission under way read without its world)
    unplannable: str | None = None
    _mission: Mission | None = None

    @classmethod
    def for_state(
        cls,
        state: MissionState,
        *,
        world: World | None = None,
        not_planned: Mapping[str, str] | None = None,
        iterations: int = 200,
        seed: int = 0,
    ) -> ToolContext:
        """The context of ``state``: with a world and a mission under way, the problem is the
        remainder cut now (``executive.loop.cut.build_replan``, as a replan and a what-if cut
        it); otherwise the mission as loaded with the environment known at ``state.tick``, and
        each drone in the air as a start where it is now (``D1_START``: what ``distance``
        measures from)."""
        if world is not None and not state.over:
            from executive.loop.cut import build_replan

            problem = build_replan(
                world,
                world.tick,
                reserve=state.fuel_reserve,
                not_planned=dict(not_planned or {}),
            ).scenario
        else:
            problem = state.scenario.model_copy(update={"environment": _where_now(state)})
        under_way = any(d.airborne for d in state.drones.values()) or bool(state.collected)
        return cls(
            state=state,
            problem=problem,
            world=world,
            not_planned=dict(not_planned or {}),
            iterations=iterations,
            seed=seed,
            unplannable="the mission is under way and its world was not given: the remainder"
            " cannot be cut"
            if world is None and under_way and not state.over
            else None,
        )

    def plannable(self) -> None:
        """``ToolError`` when the acting tools cannot plan here (``unplannable``)."""
        if self.unplannable is not None:
            raise ToolError(self.unplannable)

    @property
    def mission(self) -> Mission:
        """``problem`` compiled (SAM-aware distances), once, when a tool first needs it."""
        if self._mission is None:
            from planner.mission import compile_mission

            self._mission = compile_mission(self.problem)
        return self._mission

    def drone_id(self, written: str) -> str:
        """The drone's id from "D1" or "1"; ``ToolError`` naming the drones when unknown."""
        drone = self.state.drone(written.strip().upper()) or self.state.drone(written.strip())
        if drone is None:
            known = ", ".join(d.label for d in self.state.drones.values())
            raise ToolError(f"unknown drone {written!r}: the drones are {known}")
        return drone.id

    def known_id(self, kind: Literal["target", "sam"], written: str) -> str:
        """The known target's or SAM's id as the mission spells it ("t5" for "T5", "Bridge"
        for "bridge"); as written when none matches, for the what-if to name."""
        env = self.state.environment
        ids = [t.id for t in env.targets] if kind == "target" else [s.id for s in env.sams]
        if written in ids:
            return written
        same = [i for i in ids if i.casefold() == written.strip().casefold()]
        return same[0] if len(same) == 1 else written


def _where_now(state: MissionState) -> Environment:
    """The known environment, with a synthetic start at each airborne drone's position."""
    env = state.environment
    starts = dict(env.synthetic_starts)
    for d in state.drones.values():
        if d.airborne:
            starts[f"{d.label}_START"] = Point(x=d.x, y=d.y)
    return env.model_copy(update={"synthetic_starts": starts})


def succeeded(data: Any) -> dict[str, Any]:
    """The result of a call that answered."""
    return {"ok": True, "data": data}


def failed(error: str) -> dict[str, Any]:
    """The result of a call that did not: ``error`` says why, in one line."""
    return {"ok": False, "error": error}
