"""The edit door: an edit posted to the live run is checked against the world the dashboard
mirrors, with the rule the simulation applies (``sim.edit_check.edit_problem``), so that an
edit whose ids do not resolve is refused at once (a 4xx naming the field) instead of being
accepted and rejected a tick later.

The world is the latest ``scene`` (every live target, every live SAM with whether it is
known, the airports, the drones and whether they are lost), plus the edits this door let
through that the scene does not show yet: a script may add a target and move it in the next
breath. Each such edit is paired with its outcome event (``edit_applied`` or
``edit_rejected``, in the order the run took them) and forgotten once a scene of a later
tick has arrived, once it was rejected, when the run changes, or after ``hold_s`` wall
seconds (an edit on a hidden SAM has no public outcome).

The door checks against the KNOWN world only: a hidden SAM is as unknown to it as any other
id (moving one is "no SAM", adding its id passes, and the simulation, which holds the truth,
decides), so that the door's answers never tell an operator what is hidden. An edit may give
a target's position as ``pos: [x, y]`` as the scenario timeline may (``normal_edit``).

What the door cannot see it lets through, and the simulation stays the last word: before the
first scene nothing is checked; an edit racing a change the scene has not caught up with
(a target collected or removed in the last quarter of a second) is still rejected by the
simulation, as an ``edit_rejected`` event.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from dashboard.live_view import LiveView
from planner.edits import Edit
from planner.scenario.forms import normal_form
from sim.edit_check import EditProblem, IdWorld, changes_ids, edit_problem

__all__ = ["EditDoor", "normal_edit", "world_of_scene"]

_OUTCOMES = ("edit_applied", "edit_rejected")


@dataclass
class _Passed:
    run_id: str | None
    edit: Edit
    at: float  # time.monotonic() when it passed
    seq: int  # the mirror's last event number then: its outcome comes later
    tick: int | None = None  # the tick the run applied (or rejected) it at
    rejected: bool = False


def _key(edit: Any) -> tuple[str, str] | None:
    """What pairs an edit with its outcome event: its op and the id it names."""
    if isinstance(edit, dict):
        return str(edit.get("op")), str(edit.get("id", edit.get("drone")))
    return None


class EditDoor:
    """Checks posted edits against ``view``'s world (see the module's docstring)."""

    def __init__(self, view: LiveView, *, hold_s: float = 3.0, max_pending: int = 256) -> None:
        self.view = view
        self.hold_s = hold_s
        self._passed: deque[_Passed] = deque(maxlen=max_pending)
        self._scanned = 0  # the last event number paired (each outcome pairs once)

    def check(self, edit: Edit) -> EditProblem | None:
        """Why ``edit`` cannot apply to the known world now, or None (also when there is no
        scene yet to check against). Hidden SAMs are not in it: the door never says one
        exists."""
        world = self.world()
        if world is None:
            return None
        world.sams = {sid: known for sid, known in world.sams.items() if known}
        return edit_problem(edit, world)

    def passed(self, edit: Edit) -> None:
        """``edit`` was sent to the run: count it until the scene shows it."""
        if changes_ids(edit):  # the only edits the rule needs to remember
            view = self.view
            self._passed.append(_Passed(view.run_id, edit, time.monotonic(), view.last_seq))

    def world(self) -> IdWorld | None:
        """The ids of the latest scene, with the edits passed since applied on top."""
        scene = self.view.scene
        if not isinstance(scene, dict):
            return None
        world = world_of_scene(scene)
        self._pair_outcomes()
        scene_tick = scene.get("tick")
        now = time.monotonic()
        kept: deque[_Passed] = deque(maxlen=self._passed.maxlen)
        for p in self._passed:
            if p.run_id != self.view.run_id or p.rejected or now - p.at > self.hold_s:
                continue
            # applied at tick N: a scene of tick N + 1 or later shows it
            if p.tick is not None and isinstance(scene_tick, int) and scene_tick > p.tick:
                continue
            world.apply(p.edit)
            kept.append(p)
        self._passed = kept
        return world

    def _pair_outcomes(self) -> None:
        """Pair each passed edit with its ``edit_applied`` / ``edit_rejected`` event, in the
        order the run took them (an edit on a hidden SAM has none: its hold runs out)."""
        waiting = [p for p in self._passed if p.tick is None]
        if not waiting:
            return
        for event in self.view.events_since(max(waiting[0].seq, self._scanned)):
            self._scanned = max(self._scanned, int(event["seq"]))
            edit = event.get("edit")
            if event.get("kind") not in _OUTCOMES or not isinstance(edit, dict):
                continue
            if edit.get("source") != "operator":
                continue
            key = _key(edit)
            for p in waiting:
                if p.seq < event["seq"] and _key(p.edit.model_dump()) == key:
                    p.tick = int(event.get("tick") or 0)
                    p.rejected = event.get("kind") == "edit_rejected"
                    waiting.remove(p)
                    break


def world_of_scene(scene: dict[str, Any]) -> IdWorld:
    """The ids of a ``scene`` payload (``mission.live.scene``) as an ``IdWorld``."""

    def ids(key: str) -> list[dict[str, Any]]:
        items = scene.get(key)
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []

    drones = scene.get("drones")
    return IdWorld(
        targets={str(t.get("id")) for t in ids("targets")},
        sams={str(s.get("id")): s.get("known") is True for s in ids("sams")},
        airports={str(a.get("id")) for a in ids("airports")},
        drones={
            str(d): isinstance(v, dict) and v.get("status") == "lost"
            for d, v in (drones.items() if isinstance(drones, dict) else ())
        },
    )


def normal_edit(raw: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """One posted edit in its model's form, the position forms of a scenario timeline
    accepted (a target's ``pos: [x, y]``, a SAM's ``x, y``); the problems as (JSON path,
    what) pairs, empty when it is fine."""
    data, problems, _quiet = normal_form({"timeline": [raw]})
    [edit] = data["timeline"]
    out = []
    for line in problems:
        at, _, what = line.partition(": ")
        out.append(("$" + at.removeprefix("$.timeline[0]"), what))
    return edit, out
