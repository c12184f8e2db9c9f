"""The live mission host: an ``Executive`` wired to a ``Bus``.

Contract
--------
Options
    ``MissionHost(executive, bus, *, scene_every_s=0.25, trail_every=10, ask=None)``.
    ``ask(text, host) -> dict`` is an async callable answering words (the coordinator and
    responder); without it, ``ask`` messages get an answer saying so.
Consumes (bus topic ``cmd``)
    Each message is read as ``executive.bus.messages.CmdMessage`` (``handle``; the typed
    command is then applied by ``apply``), strictly: a member no command has is refused.
    ``{"type": "command", "command": "PAUSE", "text": ...}`` -> ``Executive.command``;
    ``{"type": "edit", "edit": {...}}`` -> parsed (``planner.edits.parse_edit``; a lat/lon
    position converted to km around the mission's geo origin, ``planner.geo.localize_edit``),
    stamped for the next tick as an operator edit; ``{"type": "speed", "speed": K | null}``;
    ``{"type": "ask", "id": ..., "text": ...}`` -> ``answers`` (each stage first, with ``stage``, then the reply); ``{"type": "stop", "reason":
    ...}`` -> ``Executive.stop`` (the mission ends after this tick). ``command`` may name a
    ``drone`` (RETURN, HOLD, RESUME of one drone). A malformed message becomes a
    ``CMD_REJECTED`` event naming what is wrong; it never stops the run. A message with an
    ``id`` (given at the door that accepted it) is applied once: the same id again (a
    requeue after a lost link, re-signed) is ignored and counted in ``duplicates``; a
    command's id is traced in its ``HUMAN_COMMAND`` event.
Produces (bus topics)
    ``telemetry`` every tick and ``events`` / ``plan`` (through the executive's publish hook),
    ``agents`` (each agent run record, through ``BusSink``), ``scene`` (retained: the whole
    picture, at most every ``scene_every_s`` of wall time, when an event or plan changed it
    and every ``4 * trail_every`` ticks for the drones' motion), ``answers``, ``status``
    (``starting`` from the host, or ``failed`` if the executive does not start; ``running``
    and ``ended`` from the executive). Every payload the host publishes carries ``run_id``.
Lifecycle
    ``await host.run(speed)``: starts the command listener, runs the executive to the end,
    publishes the final scene and status, stops the listener. Nothing here blocks a tick:
    when due, the tick captures the scene (cheap reads) and a worker thread draws it (at
    1x; as fast as possible it is drawn at once), published to a bounded bus when drawn.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from executive.bus.base import Bus, Subscription
from executive.bus.messages import (
    CMD_KINDS,
    CMD_MESSAGE,
    CmdMessage,
    CommandMessage,
    EditMessage,
    SpeedMessage,
    StopMessage,
)
from executive.contracts import (
    DRONE_COMMANDS,
    AgentRunRecord,
    HumanCommand,
    TraceRecord,
)
from executive.loop import Executive, RunReport
from mission.live.scene import capture_scene
from planner.edits import parse_edit
from planner.geo import localize_edit
from sim import MAX_SPEED, MIN_SPEED, TickResult

__all__ = ["BusSink", "MissionHost"]

log = logging.getLogger(__name__)

_TRAIL_POINTS = 2000  # per drone: older trail points are thinned, never unbounded

_IDS_KEPT = 100_000  # command ids remembered (a duplicate comes within seconds)
_ECHO_CHARS = 2000  # of a rejected command shown in its CMD_REJECTED event, at most
_SPEED_PROBLEM = (
    f"$.speed: a number from {MIN_SPEED:g} to {MAX_SPEED:g} (times real time),"
    " or null for as fast as possible"
)


def _echo(message: Any) -> Any:
    """What a ``CMD_REJECTED`` event shows of a rejected message: a small object as it is,
    anything else as a short excerpt (never the whole of a big payload)."""
    if isinstance(message, dict):
        text = json.dumps(message, default=str)
        return message if len(text) <= _ECHO_CHARS else text[:_ECHO_CHARS] + "..."
    text = message if isinstance(message, str) else repr(message)
    return text[:_ECHO_CHARS] + ("..." if len(text) > _ECHO_CHARS else "")


def _problem(exc: ValidationError, message: dict[str, Any]) -> str:
    """Why a ``cmd`` message is not a command, as ``$.path: what is wrong`` (its first
    problem; the path inside the message, not the model's)."""
    first = exc.errors()[0]
    if first["type"] in ("union_tag_invalid", "union_tag_not_found"):
        return f"$.type: {message.get('type')!r} is not one of {', '.join(CMD_KINDS)}"
    where = "".join(f".{p}" for p in first["loc"][1:])  # [0] is the tag: not in the message
    given = first.get("input")
    if isinstance(given, (str, int, float)) and len(repr(given)) <= 80:  # what was sent
        return f"${where}: {first['msg']} (got {given!r})"
    return f"${where}: {first['msg']}"


# (text, host, report): ``report`` publishes each stage of the answer (its JSON) on ``answers``
Asker = Callable[
    [str, "MissionHost", Callable[[dict[str, Any]], None] | None], Awaitable[dict[str, Any]]
]


class BusSink:
    """A trace sink that forwards agent runs to the bus's ``agents`` topic.

    Safe to call from worker threads: the message is handed to the loop's thread.
    """

    def __init__(self, bus: Bus, loop: asyncio.AbstractEventLoop) -> None:
        self.bus = bus
        self.loop = loop
        self._thread = threading.get_ident()

    def emit(self, record: TraceRecord) -> None:
        """Publish an ``AgentRunRecord`` on ``agents``; ignore every other record."""
        if not isinstance(record, AgentRunRecord):
            return
        payload = dataclasses.asdict(record)
        payload["clamp_actions"] = list(record.clamp_actions)
        if threading.get_ident() == self._thread:
            self.bus.publish("agents", payload)
        else:
            self.loop.call_soon_threadsafe(self.bus.publish, "agents", payload)


class MissionHost:
    """Runs one executive on a bus; see the module docstring for the contract.

    ``scene_every_s`` is in wall seconds, ``trail_every`` in ticks (one trail point per
    airborne drone every that many ticks). The constructor attaches the host's hooks to the
    executive (``Executive.watch``). ``rejected`` counts the ``cmd`` messages refused.
    """

    def __init__(
        self,
        executive: Executive,
        bus: Bus,
        *,
        scene_every_s: float = 0.25,
        trail_every: int = 10,
        ask: Asker | None = None,
        trace_url: str | None = None,
    ) -> None:
        self.executive = executive
        self.trace_url = trace_url  # the store a fork's parent is read from
        self.bus = bus
        self.scene_every_s = scene_every_s
        self.trail_every = trail_every
        self._ask = ask
        self._trails: dict[str, list[list[float]]] = {}
        self._dirty = True
        self._last_scene = -math.inf
        self._listener: asyncio.Task[None] | None = None
        self._drawing: asyncio.Future[dict[str, Any]] | None = None  # a scene drawn off the tick
        self._asks: set[asyncio.Task[None]] = set()
        self.rejected = 0
        self.duplicates = 0  # commands received again under an id already applied
        self._seen_ids: OrderedDict[str, None] = OrderedDict()
        executive.watch(publish=self._publish, on_tick=self._on_tick)

    # ----- out -------------------------------------------------------------------------

    def _publish(self, topic: str, payload: dict[str, Any]) -> None:
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
            if self.executive.speed is None:
                self.publish_scene()
            elif self._drawing is None:
                self._draw_off_tick()

    def _draw_off_tick(self) -> None:
        """Capture the scene now (cheap reads) and draw it in a worker thread (hundreds of
        ms of Python at swarm sizes, which would make the tick late), published when drawn;
        one at a time, so scenes are published in order."""
        draw = capture_scene(self.executive, self._trails)
        self._dirty = False
        self._last_scene = time.monotonic()
        drawing = asyncio.ensure_future(asyncio.to_thread(draw))
        self._drawing = drawing

        def publish(done: asyncio.Future[dict[str, Any]]) -> None:
            self._drawing = None
            if done.cancelled():
                return
            if done.exception() is not None:
                log.warning("the scene was not drawn: %s", done.exception())
                return
            self.bus.publish("scene", done.result())

        drawing.add_done_callback(publish)

    def _record_trail(self, result: TickResult) -> None:
        world = self.executive.sim.world
        for drone_id in self.executive.scenario.drone_configs:
            if world.status(drone_id) not in ("flying", "holding"):
                continue
            x, y, _ = world.position(drone_id)
            self._trail_point(drone_id, x, y)

    def _trail_point(self, drone_id: str, x: float, y: float) -> None:
        world = self.executive.sim.world
        trail = self._trails.setdefault(drone_id, [])
        if not trail:  # the trail starts where the drone took off
            config = self.executive.scenario.drone_configs[drone_id]
            airport = next(
                (a for a in world.known_environment.airports if a.id == config.start), None
            )
            if airport is not None:
                trail.append([airport.x, airport.y])
        trail.append([round(x, 4), round(y, 4)])
        if len(trail) > _TRAIL_POINTS:
            del trail[1:-1:2]  # thin the older half, keep the ends

    def _parent_rows(self) -> list[dict[str, Any]]:
        """A fork's parent's telemetry up to the fork tick, at the ticks this host takes
        trail points (read in a worker thread); [] for a run that is no fork."""
        fork, url = self.executive.forked_from, self.trace_url
        if fork is None or url is None:
            return []
        from executive.traces import TraceReader

        reader = TraceReader(url)
        try:
            return reader.telemetry_range(
                str(fork["parent"]), 0, int(fork["tick"]), every=self.trail_every
            )
        finally:
            reader.close()

    def _seed_trails(self, rows: list[dict[str, Any]]) -> None:
        """The trails a fork starts with: its parent's flight, as this host would have drawn
        it, not a straight line from the airport to where the fork begins."""
        drones = self.executive.scenario.drone_configs
        for row in rows:
            for drone_id, d in row["drones"].items():
                if drone_id in drones and d.get("status") in ("flying", "holding"):
                    self._trail_point(drone_id, float(d["x"]), float(d["y"]))

    def publish_scene(self) -> dict[str, Any]:
        """Build the scene now, publish it (retained) and return it; the executive must
        have started."""
        picture = capture_scene(self.executive, self._trails)()
        self.bus.publish("scene", picture)
        self._dirty = False
        self._last_scene = time.monotonic()
        return picture

    # ----- in --------------------------------------------------------------------------

    def handle(self, message: Any) -> str | None:
        """Apply one ``cmd`` message as it came off the bus; returns why it was rejected, or
        None. It is read as ``executive.bus.messages.CmdMessage`` (the one definition of
        every command the doors send) before anything is applied."""
        if not isinstance(message, dict):
            return self._reject(message, "a command message must be a JSON object")
        if isinstance(message.get("speed"), bool):  # JSON true is no pace (pydantic: 1.0)
            return self._reject(message, _SPEED_PROBLEM)
        try:
            command = CMD_MESSAGE.validate_python(message)
        except ValidationError as exc:
            return self._reject(message, _problem(exc, message))
        if command.id:
            if command.id in self._seen_ids:  # sent again (a requeue, a retry): done already
                self.duplicates += 1
                log.info("command %s received again: applied once, ignored now", command.id)
                return None
            self._seen_ids[command.id] = None
            while len(self._seen_ids) > _IDS_KEPT:
                self._seen_ids.popitem(last=False)
        why = self.apply(command)
        return None if why is None else self._reject(message, why)

    def apply(self, command: CmdMessage) -> str | None:
        """Apply one command already read (``handle`` reads it and keeps each id once);
        returns why the mission cannot take it (the caller rejects it), or None."""
        ex = self.executive
        if isinstance(command, CommandMessage):
            drone = command.drone
            if drone is not None and drone not in ex.scenario.drone_configs:
                return f"$.drone: no drone {drone!r} in this mission"
            if drone is None and command.command in DRONE_COMMANDS:
                return f"$.drone: {command.command} needs the drone's id"
            source = command.source or "operator"
            ex.command(HumanCommand(command.command, command.text, source, drone, command.id))
        elif isinstance(command, StopMessage):
            # the operator ends the mission now (a fork's Stop, a dashboard idle too long)
            tick = ex.sim.tick if ex.started else 0
            ex.recorder.event(tick, "STOPPED", {"reason": command.reason or "operator"})
            ex.stop()
        elif isinstance(command, EditMessage):
            # lat/lon in km around the mission's origin, as the scenario loader converts
            raw, at_places = localize_edit(command.edit, ex.scenario.geo, "$.edit")
            if at_places:
                return "; ".join(at_places)
            try:
                edit = parse_edit({**raw, "source": "operator"})
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                return f"$.edit.{where}: {first['msg']}"
            ex.edit(edit)
        elif isinstance(command, SpeedMessage):
            speed = command.speed
            if speed is not None and (
                not math.isfinite(speed) or not MIN_SPEED <= speed <= MAX_SPEED
            ):
                return _SPEED_PROBLEM
            ex.set_speed(speed)
            self._dirty = True
        else:  # AskMessage
            if not command.text.strip():
                return "$.text: the question must be a non-empty string"
            task = asyncio.get_running_loop().create_task(
                self._answer(command.id or "", command.text), name="ask"
            )
            self._asks.add(task)
            task.add_done_callback(self._asks.discard)
        return None

    def _reject(self, message: Any, reason: str) -> str:
        self.rejected += 1
        tick = self.executive.sim.tick if self.executive.started else 0
        self._publish(
            "events",
            {
                "tick": tick,
                "kind": "CMD_REJECTED",
                "reason": reason,
                "message": _echo(message),
            },
        )
        return reason

    async def _answer(self, ask_id: str, text: str) -> None:
        def report(stage: dict[str, Any]) -> None:
            # a progress report of this ask (``stage``), not its reply: waiters skip it
            self._publish("answers", {"id": ask_id, "question": text, "stage": stage})

        if self._ask is None:
            reply = {"intent": "unavailable", "answer": "no coordinator is configured"}
        else:
            try:
                reply = await self._ask(text, self, report)
            except Exception as exc:
                log.warning("answering %r failed: %s", text, exc)
                reply = {"intent": "error", "answer": f"could not answer: {exc}", "error": str(exc)}
        self._publish("answers", {"id": ask_id, "question": text, **reply})

    async def _listen(self, sub: Subscription) -> None:
        try:
            async for message in sub:
                self.handle(message.payload)
        finally:
            sub.close()

    # ----- lifecycle -------------------------------------------------------------------

    async def run(self, speed: float | None = None, *, until: int | None = None) -> RunReport:
        """Run the mission to its end on the bus and return its report.

        ``speed``: times real time, None as fast as possible; ``until``: stop at that tick
        (``Executive.run``'s). The bus takes the executive's run id (an MQTT bus
        started on another raises ``ExecutiveError``). Whatever the executive's ``start()``
        raises is re-raised after a ``failed`` status. Questions still being answered at the
        end are cancelled, unanswered.
        """
        self.bus.run_id = self.executive.run_id
        # Subscribed before the first plan is made: a command sent meanwhile waits in the
        # (bounded) subscription instead of being lost.
        commands = self.bus.subscribe(["cmd"], maxsize=1024)
        self.executive.recorder.status("starting")  # its phases follow from start()
        try:
            await self.executive.start()
        except Exception as exc:  # a view must not wait on a run that never started
            commands.close()
            self._publish("status", {"state": "failed", "error": str(exc)})
            raise
        self._seed_trails(await asyncio.to_thread(self._parent_rows))  # a fork's past
        self.publish_scene()
        self._listener = asyncio.get_running_loop().create_task(self._listen(commands), name="cmd")
        try:
            report = await self.executive.run(speed, until=until)
        finally:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
            for task in list(self._asks):
                task.cancel()
        if self._drawing is not None:  # published before the final scene, never after it
            await asyncio.gather(self._drawing, return_exceptions=True)
        self.publish_scene()
        return report
