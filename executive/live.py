"""The live mission host: an ``Executive`` wired to a ``Bus``.

Contract
--------
Options
    ``MissionHost(executive, bus, *, scene_every_s=0.25, trail_every=10, ask=None)``.
    ``ask(text, host) -> dict`` is an async callable answering words (the coordinator and
    responder); without it, ``ask`` messages get an answer saying so.
Consumes (bus topic ``cmd``)
    ``{"type": "command", "command": "PAUSE", "text": ...}`` -> ``Executive.command``;
    ``{"type": "edit", "edit": {...}}`` -> parsed (``planner.edits.parse_edit``), stamped for
    the next tick as an operator edit; ``{"type": "speed", "speed": K | null}``;
    ``{"type": "ask", "id": ..., "text": ...}`` -> ``answers``. A malformed message becomes a
    ``CMD_REJECTED`` event naming what is wrong; it never stops the run.
Produces (bus topics)
    ``telemetry`` every tick and ``events`` / ``plan`` (through the executive's publish hook),
    ``agents`` (each agent run record), ``scene`` (retained: the whole picture, when it
    changes and at most every ``scene_every_s`` of wall time), ``answers``, ``status``.
Lifecycle
    ``await host.run(speed)``: starts the command listener, runs the executive to the end,
    publishes the final scene and status, stops the listener. Nothing here blocks a tick:
    the scene is built in the tick only when due (a few ms at most) and published to a
    bounded bus.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from executive.bus.base import Bus
from executive.contracts import HUMAN_COMMANDS, AgentRunRecord, HumanCommand, TraceRecord
from executive.loop import Executive, RunReport
from planner.edits import parse_edit
from planner.geometry import Path
from sim import TickResult
from sim.flight import slice_path

__all__ = ["BusSink", "MissionHost", "scene"]

log = logging.getLogger(__name__)

_SAGITTA = 0.05  # km: how finely arcs are drawn on the map
_TRAIL_POINTS = 2000  # per drone: older trail points are thinned, never unbounded

Asker = Callable[[str, "MissionHost"], Awaitable[dict[str, Any]]]


class BusSink:
    """A trace sink that forwards agent runs to the bus's ``agents`` topic.

    Safe to call from worker threads: the message is handed to the loop's thread.
    """

    def __init__(self, bus: Bus, loop: asyncio.AbstractEventLoop) -> None:
        self.bus = bus
        self.loop = loop
        self._thread = threading.get_ident()

    def emit(self, record: TraceRecord) -> None:
        if not isinstance(record, AgentRunRecord):
            return
        payload = dataclasses.asdict(record)
        payload["clamp_actions"] = list(record.clamp_actions)
        if threading.get_ident() == self._thread:
            self.bus.publish("agents", payload)
        else:
            self.loop.call_soon_threadsafe(self.bus.publish, "agents", payload)


def _polyline(path: Path | None) -> list[list[float]]:
    if path is None or path.length <= 0.0:
        return []
    return [[round(float(x), 4), round(float(y), 4)] for x, y in path.sample(_SAGITTA)]


def _cut(path: Path, s0: float, s1: float) -> Path | None:
    """The part of ``path`` between arc lengths ``s0`` and ``s1``."""
    tail = slice_path(path, s0)
    if tail is None or s1 <= s0:
        return None
    rest = slice_path(tail.reversed(), max(0.0, tail.length - (s1 - s0)))
    return None if rest is None else rest.reversed()


def scene(executive: Executive, trails: dict[str, list[list[float]]] | None = None) -> dict:
    """The whole picture a view needs, from what the executive holds now.

    Targets carry a status (collected, excluded, planned, pending); SAMs say whether they
    are known (a hidden SAM is shown only on a view's truth toggle); each drone has its
    flown trail, the frozen part of its path (up to the checkpoint of a round in flight),
    the rest of its planned path, its route, fuel and a point-of-no-return estimate.
    """
    sim = executive.sim
    world = sim.world
    known = world.known_environment
    truth = world.truth_environment
    known_sams = {s.id for s in known.sams}
    collected = world.collected()
    plan = executive.plan
    planned: dict[str, str] = {}
    if plan is not None:
        for drone_id, route in plan.routes.items():
            for target in route.visited_targets:
                planned[target] = drone_id
    excluded = set(plan.excluded_targets) if plan is not None else set()
    targets = []
    for t in known.targets:
        inside = any(math.hypot(t.x - s.x, t.y - s.y) < s.range for s in known.sams)
        status = ("collected" if t.id in collected else "excluded" if inside or t.id in excluded
                  else "planned" if t.id in planned else "pending")
        targets.append({"id": t.id, "x": t.x, "y": t.y, "priority": t.priority, "type": t.type,
                        "status": status, "drone": collected.get(t.id) or planned.get(t.id)})
    sams = [{"id": s.id, "x": s.x, "y": s.y, "range": s.range, "known": s.id in known_sams}
            for s in truth.sams]
    checkpoints = executive.checkpoints
    drones: dict[str, Any] = {}
    for drone_id, config in executive.scenario.drone_configs.items():
        flight = world.flight(drone_id)
        status = world.status(drone_id)
        x, y, heading = world.position(drone_id)
        s = world.progress(drone_id)
        frozen = ahead = None
        if flight is not None and status in ("flying", "holding") and not flight.holding:
            c = checkpoints.get(drone_id)
            if c is not None and c.airborne and c.s > s:
                frozen = _cut(flight.path, s, c.s)
                ahead = slice_path(flight.path, c.s)
            else:
                ahead = slice_path(flight.path, s)
        route = plan.routes.get(drone_id).route if plan is not None and drone_id in plan.routes else []
        remaining = ahead.length if ahead is not None else 0.0
        remaining += frozen.length if frozen is not None else 0.0
        fuel = world.fuel(drone_id)
        drones[drone_id] = {
            "x": x, "y": y, "heading": heading, "status": status, "fuel": fuel,
            "budget": config.fuel_budget, "speed": world.config.speed_of(drone_id),
            "sensors": config.accessible_targets, "enabled": config.enabled,
            "route": route, "remaining_km": remaining,
            # fuel left over once the planned path is flown: the margin ring on the map
            "margin_km": fuel - remaining if status in ("flying", "holding") else None,
            "flown": list((trails or {}).get(drone_id, [])),
            "frozen": _polyline(frozen), "planned": _polyline(ahead),
            "holding": bool(flight is not None and flight.holding),
        }
    draft = None
    if executive.draft is not None:
        plan_id, solution, cut_tick = executive.draft
        draft = {"plan_id": plan_id, "cut_tick": cut_tick, "points": solution.total_points,
                 "fuel": solution.total_fuel,
                 "routes": {d: {"route": r.route, "points": r.total_points,
                                "fuel": r.fuel_used, "path": [list(p) for p in (r.path or [])]}
                            for d, r in solution.routes.items()},
                 "diff": _diff(plan, solution)}
    return {
        "run_id": executive.run_id, "tick": sim.tick, "time": sim.time,
        "tick_hz": sim.tick_hz, "mode": executive.mode, "speed": executive.speed,
        "plan_id": executive.plan_id,
        "planned_points": plan.total_points if plan is not None else 0.0,
        "airports": [{"id": a.id, "x": a.x, "y": a.y} for a in known.airports],
        "targets": targets, "sams": sams, "drones": drones, "draft": draft,
        "constraints": executive.constraints,
        "collected_points": float(sum(t.priority for t in known.targets if t.id in collected)),
    }


def _diff(plan, draft) -> dict[str, Any]:
    """What a draft changes against the committed plan: points, fuel, routes per drone."""
    if plan is None:
        return {"points": draft.total_points, "fuel": draft.total_fuel, "routes": {}}
    routes = {}
    for drone_id in sorted(set(plan.routes) | set(draft.routes)):
        old = plan.routes.get(drone_id)
        new = draft.routes.get(drone_id)
        old_t = set(old.visited_targets) if old else set()
        new_t = set(new.visited_targets) if new else set()
        if old_t != new_t or (old and new and old.route[1:] != new.route[1:]):
            routes[drone_id] = {"added": sorted(new_t - old_t), "removed": sorted(old_t - new_t),
                                "old": old.route if old else [], "new": new.route if new else []}
    return {"points": draft.total_points - plan.total_points,
            "fuel": draft.total_fuel - plan.total_fuel, "routes": routes}


class MissionHost:
    def __init__(self, executive: Executive, bus: Bus, *, scene_every_s: float = 0.25,
                 trail_every: int = 10, ask: Asker | None = None) -> None:
        self.executive = executive
        self.bus = bus
        self.scene_every_s = scene_every_s
        self.trail_every = trail_every
        self._ask = ask
        self._trails: dict[str, list[list[float]]] = {}
        self._dirty = True
        self._last_scene = -math.inf
        self._listener: asyncio.Task | None = None
        self._asks: set[asyncio.Task] = set()
        self.rejected = 0
        executive.watch(publish=self._publish, on_tick=self._on_tick)

    # ----- out -------------------------------------------------------------------------

    def _publish(self, topic: str, payload: dict) -> None:
        payload = {"run_id": self.executive.run_id, **payload}
        if topic in ("events", "plan"):
            self._dirty = True
        self.bus.publish(topic, payload)

    def _on_tick(self, result: TickResult) -> None:
        if result.tick % self.trail_every == 0:
            self._record_trail(result)
        now = time.monotonic()
        due = now - self._last_scene >= self.scene_every_s
        if due and (self._dirty or result.tick % (self.trail_every * 4) == 0):
            self.publish_scene()

    def _record_trail(self, result: TickResult) -> None:
        world = self.executive.sim.world
        for drone_id in self.executive.scenario.drone_configs:
            if world.status(drone_id) not in ("flying", "holding"):
                continue
            x, y, _ = world.position(drone_id)
            trail = self._trails.setdefault(drone_id, [])
            if not trail:  # the trail starts where the drone took off
                config = self.executive.scenario.drone_configs[drone_id]
                airport = next((a for a in world.known_environment.airports
                                if a.id == config.start), None)
                if airport is not None:
                    trail.append([airport.x, airport.y])
            trail.append([round(x, 4), round(y, 4)])
            if len(trail) > _TRAIL_POINTS:
                del trail[1:-1:2]  # thin the older half, keep the ends

    def publish_scene(self) -> dict:
        picture = scene(self.executive, self._trails)
        self.bus.publish("scene", picture)
        self._dirty = False
        self._last_scene = time.monotonic()
        return picture

    # ----- in --------------------------------------------------------------------------

    def handle(self, message: dict[str, Any]) -> str | None:
        """Apply one ``cmd`` message; returns why it was rejected, or None."""
        if not isinstance(message, dict):
            return self._reject(message, "a command message must be a JSON object")
        kind = message.get("type")
        ex = self.executive
        if kind == "command":
            command = message.get("command")
            if command not in HUMAN_COMMANDS:
                return self._reject(message, f"$.command: {command!r} is not one of "
                                    f"{', '.join(HUMAN_COMMANDS)}")
            text = message.get("text")
            if text is not None and not isinstance(text, str):
                return self._reject(message, "$.text: must be a string")
            ex.command(HumanCommand(command, text, str(message.get("source") or "operator")))
        elif kind == "edit":
            raw = message.get("edit")
            if not isinstance(raw, dict):
                return self._reject(message, "$.edit: must be an object with an 'op'")
            try:
                edit = parse_edit({**raw, "source": "operator"})
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                return self._reject(message, f"$.edit.{where}: {first['msg']}")
            ex.edit(edit)
        elif kind == "speed":
            speed = message.get("speed")
            if speed is not None and (not isinstance(speed, (int, float)) or isinstance(speed, bool)
                                      or not math.isfinite(speed) or speed <= 0):
                return self._reject(message, "$.speed: a positive number, or null for as fast "
                                    "as possible")
            ex.set_speed(None if speed is None else float(speed))
            self._dirty = True
        elif kind == "ask":
            text = message.get("text")
            if not isinstance(text, str) or not text.strip():
                return self._reject(message, "$.text: the question must be a non-empty string")
            task = asyncio.get_running_loop().create_task(
                self._answer(str(message.get("id") or ""), text), name="ask")
            self._asks.add(task)
            task.add_done_callback(self._asks.discard)
        else:
            return self._reject(message, f"$.type: {kind!r} is not one of command, edit, "
                                "speed, ask")
        return None

    def _reject(self, message: Any, reason: str) -> str:
        self.rejected += 1
        tick = self.executive.sim.tick if self.executive.sim is not None else 0
        self._publish("events", {"tick": tick, "kind": "CMD_REJECTED", "reason": reason,
                                 "message": message if isinstance(message, dict) else str(message)})
        return reason

    async def _answer(self, ask_id: str, text: str) -> None:
        if self._ask is None:
            reply = {"intent": "unavailable", "answer": "no coordinator is configured"}
        else:
            try:
                reply = await self._ask(text, self)
            except Exception as exc:  # noqa: BLE001 - a failed answer never stops the run
                log.warning("answering %r failed: %s", text, exc)
                reply = {"intent": "error", "answer": f"could not answer: {exc}", "error": str(exc)}
        self._publish("answers", {"id": ask_id, "question": text, **reply})

    async def _listen(self, sub) -> None:
        try:
            async for message in sub:
                self.handle(message.payload)
        finally:
            sub.close()

    # ----- lifecycle -------------------------------------------------------------------

    async def run(self, speed: float | None = None, **kwargs) -> RunReport:
        self.bus.run_id = self.executive.run_id
        # Subscribed before the first plan is made: a command sent meanwhile waits in the
        # (bounded) subscription instead of being lost.
        commands = self.bus.subscribe(["cmd"], maxsize=1024)
        self._publish("status", {"state": "starting"})
        try:
            await self.executive.start()
        except Exception as exc:  # a view must not wait on a run that never started
            commands.close()
            self._publish("status", {"state": "failed", "error": str(exc)})
            raise
        self.publish_scene()
        self._listener = asyncio.get_running_loop().create_task(self._listen(commands),
                                                                name="cmd")
        try:
            report = await self.executive.run(speed, **kwargs)
        finally:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
            for task in list(self._asks):
                task.cancel()
        self.publish_scene()
        return report
