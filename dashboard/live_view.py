"""The dashboard's mirror of the run, fed by one bus subscription.

Contract
--------
Options
    ``LiveView(bus, *, max_events=5000, max_agents=2000, max_asks=64, maxsize=4096)``.
Consumes (bus topics)
    ``telemetry`` and ``scene`` (latest value kept), ``events`` (a bounded history, each
    numbered with a ``seq`` for ``/api/events?since=``), ``agents`` (bounded, by ``run_id``),
    ``plan`` and ``status`` (latest), ``answers`` (resolve the pending ``ask`` with that id;
    one with a ``stage`` is handed to that ask's ``on_stage``).
Produces
    Plain data for the REST API and the websocket hello: ``state()``, ``events_since()``,
    ``agent_runs()`` / ``agent_tree()``; ``ask(text)`` publishes a question on ``cmd`` and
    returns a future that the matching ``answers`` message resolves.
    ``link()``: the bus's ``LinkState`` as data (``/api/state``'s ``link``: ``state`` up /
    down / connecting / local, ``commands`` whether a command can reach the mission now,
    ``stale``, ``reason``, ``since``); ``commands_blocked()`` why a command cannot go now.
Lifecycle
    ``await start()`` subscribes and starts the consumer task; ``await stop()`` ends it and
    fails the pending asks. Everything runs on the event loop and nothing here blocks: each
    message costs a few dict operations.

A new run clears the history: a message of the run the bus now carries (an MQTT watcher
that moved on to a newer run) when the mirror holds another, or, on a bus that does not
name its run, a ``starting`` status with another ``run_id``. Once the bus names its run,
messages of any other run (still in the subscription's queue) are ignored.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

from executive.bus import CMD, Bus, Message, Subscription
from executive.bus.base import TERMINAL_STATES
from executive.bus.messages import AskMessage

__all__ = ["MIRRORED_TOPICS", "AskRejected", "LiveView"]

log = logging.getLogger(__name__)

MIRRORED_TOPICS = ("telemetry", "scene", "events", "agents", "plan", "answers", "status")


class AskRejected(Exception):
    """A question that cannot be asked now (too many pending)."""


class LiveView:
    """The latest scene, telemetry, status and plan of the run on the bus, its recent events
    and agent runs, and the questions waiting for an answer (see the module's contract)."""

    def __init__(
        self,
        bus: Bus,
        *,
        max_events: int = 5000,
        max_agents: int = 2000,
        max_asks: int = 64,
        maxsize: int = 4096,
    ) -> None:
        self.bus = bus
        self.max_agents = max_agents
        self.max_asks = max_asks
        self.maxsize = maxsize
        self.run_id: str | None = None
        self.scene: dict | None = None
        self.telemetry: dict | None = None
        self.status: dict | None = None
        self.plan: dict | None = None
        # the planning agents, those off (role -> why) and their cadences: from the running
        # status, then each AGENTS event's ``off`` (kept apart: the history is bounded)
        self.agent_switches: dict | None = None
        self.events: deque[dict] = deque(maxlen=max_events)
        self.agents: OrderedDict[str, dict] = OrderedDict()
        self.received = 0
        self.last_message_at: float | None = None  # time.monotonic()
        self._seq = 0
        self._asks: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._stages: dict[str, Callable[[dict[str, Any]], None]] = {}  # by ask id, streamed
        self._sub: Subscription | None = None
        self._task: asyncio.Task[None] | None = None

    # ----- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Subscribe to the mirrored topics and start consuming them (idempotent)."""
        if self._task is not None:
            return
        self._sub = self.bus.subscribe(MIRRORED_TOPICS, maxsize=self.maxsize)
        self._task = asyncio.get_running_loop().create_task(self._consume(), name="live-view")

    async def stop(self) -> None:
        """Stop consuming, close the subscription and cancel the pending questions."""
        if self._sub is not None:
            self._sub.close()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        for future in self._asks.values():
            if not future.done():
                future.cancel()
        self._asks.clear()
        self._stages.clear()

    @property
    def dropped(self) -> dict[str, int]:
        """Messages the mirror's own subscription dropped, per topic."""
        return dict(self._sub.dropped) if self._sub is not None else {}

    async def _consume(self) -> None:
        assert self._sub is not None
        async for message in self._sub:
            try:
                self.apply(message)
            except Exception:
                log.exception("live view: cannot apply a %s message", message.topic)

    # ----- in ----------------------------------------------------------------------------

    def apply(self, message: Message) -> None:
        """Take one bus message into the mirror (a new run's ``starting`` status clears it)."""
        payload = message.payload
        if not isinstance(payload, dict):
            return
        topic = message.topic
        # an agent run's own id is its run_id; the mission's is mission_run_id
        run_id = payload.get("mission_run_id" if topic == "agents" else "run_id")
        carried = self.bus.run_id
        if carried and run_id and run_id != carried:
            return  # an earlier run's message, still queued after the bus moved on
        self.received += 1
        self.last_message_at = time.monotonic()
        new_run = carried or (topic == "status" and payload.get("state") == "starting")
        if run_id and self.run_id and run_id != self.run_id and new_run:
            self._new_run()
        if run_id:
            self.run_id = run_id
        if topic == "telemetry":
            self.telemetry = payload
        elif topic == "scene":
            self.scene = payload
        elif topic == "status":
            self.status = payload
            if isinstance(payload.get("agents"), dict):
                self.agent_switches = dict(payload["agents"])
        elif topic == "plan":
            self.plan = payload
        elif topic == "events":
            self._seq += 1
            self.events.append({"seq": self._seq, **payload})
            if payload.get("kind") == "AGENTS" and self.agent_switches is not None:
                off = payload.get("off")
                self.agent_switches = {**self.agent_switches, "off": dict(off or {})}
        elif topic == "agents":
            key = str(payload.get("run_id") or f"anon-{self.received}")
            self.agents.pop(key, None)
            self.agents[key] = payload
            while len(self.agents) > self.max_agents:
                self.agents.popitem(last=False)
        elif topic == "answers":
            ask_id = str(payload.get("id") or "")
            if payload.get("stage") is not None:  # a stage of the answer, not the reply
                hear = self._stages.get(ask_id)
                if hear is not None:
                    hear(payload["stage"])
                return
            future = self._asks.pop(ask_id, None)
            if future is not None and not future.done():
                future.set_result(payload)

    def _new_run(self) -> None:
        self.scene = self.telemetry = self.plan = self.status = None
        self.agent_switches = None
        self.events.clear()
        self.agents.clear()

    # ----- asking ------------------------------------------------------------------------

    def ask(
        self, text: str, on_stage: Callable[[dict[str, Any]], None] | None = None
    ) -> tuple[str, asyncio.Future[dict[str, Any]]]:
        """Publish a question; the future resolves with the ``answers`` payload, and
        ``on_stage`` (which must not block) hears each stage of the answer as it arrives.
        The caller bounds the wait and calls ``forget(id)`` when it gives up."""
        if len(self._asks) >= self.max_asks:
            raise AskRejected(f"{len(self._asks)} questions are already waiting for an answer")
        ask_id = uuid.uuid4().hex[:16]
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._asks[ask_id] = future
        if on_stage is not None:
            self._stages[ask_id] = on_stage
        self.bus.publish(CMD, AskMessage(id=ask_id, text=text).wire())
        return ask_id, future

    def forget(self, ask_id: str) -> None:
        """Stop waiting for the answer to ``ask_id`` (cancels its future if still pending)."""
        self._stages.pop(ask_id, None)
        future = self._asks.pop(ask_id, None)
        if future is not None and not future.done():
            future.cancel()

    # ----- out ---------------------------------------------------------------------------

    @property
    def mode(self) -> str | None:
        """The executive's mode from the latest telemetry (else the scene), if any."""
        for source in (self.telemetry, self.scene):
            if source and source.get("mode"):
                return source["mode"]
        return None

    @property
    def ended(self) -> bool:
        """Whether the run's last status says it is over: ended, failed, crashed or
        interrupted."""
        return (self.status or {}).get("state") in TERMINAL_STATES

    def link(self) -> dict[str, Any]:
        """How the bus is linked to the run now, as plain data (see ``LinkState``)."""
        return self.bus.link.to_dict()

    def commands_blocked(self) -> str | None:
        """Why a command sent now would not reach the mission (the link is down, or the
        run went stale), or None when it would."""
        link = self.bus.link
        if link.commands:
            return None
        if link.stale:
            return link.reason or f"run {self.run_id} has gone stale"
        where = f" ({link.broker})" if link.broker else ""
        why = f": {link.reason}" if link.reason else ""
        return f"the link to the mission is {link.state}{where}{why}"

    def state(self) -> dict[str, Any]:
        """The run id, status, mode, tick, scene, telemetry and link (``GET /api/state``)."""
        return {
            "run_id": self.run_id,
            "status": self.status,
            "mode": self.mode,
            "tick": (self.telemetry or self.scene or {}).get("tick"),
            "scene": self.scene,
            "telemetry": self.telemetry,
            "link": self.link(),
        }

    def events_since(self, since: int = 0, limit: int = 1000) -> list[dict]:
        """Events numbered above ``since``, oldest first, at most ``limit`` (the newest)."""
        if limit <= 0:
            return []
        out: list[dict] = []
        for event in reversed(self.events):
            if event["seq"] <= since or len(out) >= limit:
                break
            out.append(event)
        out.reverse()
        return out

    @property
    def last_seq(self) -> int:
        """The number of the newest event (0 before the first)."""
        return self._seq

    def agent_runs(self, limit: int | None = None) -> list[dict]:
        """The agent runs in arrival order, the last ``limit`` of them if given."""
        runs = list(self.agents.values())
        return runs if limit is None else runs[-limit:]

    def agent_tree(self) -> list[dict]:
        """Agent runs as trees: each node is the record plus ``children``; a run whose parent
        is not an agent run here (the mission, or a parent evicted) is a root."""
        nodes = {key: {**record, "children": []} for key, record in self.agents.items()}
        roots = []
        for key, node in nodes.items():
            parent = node.get("parent_run_id")
            if parent and parent in nodes and parent != key:
                nodes[parent]["children"].append(node)
            else:
                roots.append(node)
        return roots
