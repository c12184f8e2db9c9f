"""The executive's MQTT link: publishes the run, hears its commands.

Role ``executive`` of the MQTT bus (contract: ``executive.bus.mqtt``). Publishes every out
topic to ``isr/<run_id>/<topic>``, signed, and to local subscriptions; keeps the run's
newest retained messages to publish again after a reconnection; sets the last will
(``crashed``); delivers to the local ``cmd`` subscriptions only the commands it trusts, and
answers the others with a bounded number of ``CMD_REJECTED`` events.
"""

from __future__ import annotations

import json
import time
from typing import Any, ClassVar

import aiomqtt

from executive.bus.base import LIVE_STATES, TERMINAL_STATES, LinkState
from executive.bus.exits import close_status
from executive.bus.link import MqttLink, Role, encode
from executive.bus.outbox import Entry
from executive.bus.signing import SIG, Refused
from executive.bus.topics import CMD, TOPICS
from executive.errors import ExecutiveError

__all__ = ["ExecutiveLink"]

_REFUSAL_EVENTS_PER_S = 10  # CMD_REJECTED events the bus publishes at most, per second
_PREVIEW = 2000  # characters of a refused command echoed in its CMD_REJECTED event


class ExecutiveLink(MqttLink):
    """The executive's side of the MQTT bus (see the module docstring)."""

    role: ClassVar[Role] = "executive"

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url, **options)
        # what the run published last (final status, republish on reconnect)
        self._last_status: dict[str, Any] | None = None
        self._last_retained: dict[str, dict[str, Any]] = {}
        self._last_tick = 0
        self._refusal_window = (0.0, 0)  # (second, events published in it)

    @property
    def link(self) -> LinkState:
        """Commands always reach the local host, whatever the broker does."""
        return self._link_state(True, reason=self.error if self._state != "up" else None)

    # ----- lifecycle -------------------------------------------------------------------

    def _closing_on(self, exc: BaseException) -> None:
        state, fields = close_status(exc)
        self.close_run(state, **fields)

    def _check_startable(self) -> None:
        if self._run_id is None:
            raise ExecutiveError(
                "the executive's MQTT bus needs its run id before start() "
                "(set bus.run_id = executive.run_id): the last will names it"
            )

    def close_run(self, state: str, **fields: Any) -> bool:
        """Publish the final status ``state`` with ``fields`` unless the run's last status is
        already over; whether it did. ``stop()`` sends it."""
        last = self._last_status
        if last is None or last.get("state") not in LIVE_STATES:
            return False
        self.publish("status", {"run_id": self._run_id, "state": state, **fields})
        # the final word goes out first (a backlog must not keep it past stop()'s bound),
        # and alone: an older status still queued would overwrite it on the broker
        self.outbox.newest_first("status")
        return True

    def _final_status(self, left: list[Entry]) -> Entry | None:
        final = next((e for e in reversed(left) if e.topic == "status"), None)
        if final is None or final.payload.get("state") not in TERMINAL_STATES:
            return None
        return final

    def _will(self) -> aiomqtt.Will:
        crashed = Entry("status", {"run_id": self._run_id, "state": "crashed"})
        return aiomqtt.Will(self._topic("status"), self._wire(crashed), qos=1, retain=True)

    async def _setup(self, client: aiomqtt.Client) -> None:
        """Subscribe to the run's commands; queue the newest retained messages again."""
        await client.subscribe(self._topic(CMD), qos=1)
        self._republish_retained()

    def _republish_retained(self) -> None:
        """Queue, first, the newest status / plan / scene the run published, unless a newer
        one of the same topic is waiting: a restarted broker may have lost them."""
        waiting = {e.topic for e in self.outbox.waiting()}
        self.outbox.put_first(
            Entry(topic, payload)
            for topic in ("status", "plan", "scene")
            if (payload := self._last_retained.get(topic)) is not None and topic not in waiting
        )

    # ----- out -------------------------------------------------------------------------

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        """Send a message; never blocks and never awaits.

        Delivered to the local subscriptions, and queued for the broker unless it is
        ``cmd`` (a local command stays local); a ``status`` gets its ``at``. A full queue
        drops its oldest message and a latest-only topic replaces its waiting one, both
        counted in ``dropped``; so is a message published after ``stop()``. Raises
        ``ExecutiveError`` for an unknown topic.
        """
        if topic not in TOPICS:
            raise ExecutiveError(f"unknown bus topic {topic!r}")
        self.published += 1
        if topic == CMD:  # a local command is for the local host only
            self._local.deliver(topic, payload)
            return
        if topic == "status":  # lets a watcher tell the newest run
            payload = {**payload, "at": payload.get("at", time.time())}
            self._last_status = payload
        if TOPICS[topic].retained:
            self._last_retained[topic] = payload
        tick = payload.get("tick")
        if isinstance(tick, int) and not isinstance(tick, bool):
            self._last_tick = tick
        self._local.deliver(topic, payload)
        self.outbox.put(topic, payload)

    def _wire(self, entry: Entry) -> bytes:
        if self._signer is None:
            return encode(entry.payload)
        return self._signer.seal(self._topic(entry.topic), entry.payload)

    # ----- in --------------------------------------------------------------------------

    async def _read(self, client: aiomqtt.Client) -> None:
        command_topic = self._topic(CMD)
        async for m in client.messages:
            topic = str(m.topic)
            if topic == command_topic:
                self._command(topic, m.payload)

    def _command(self, topic: str, raw: Any) -> None:
        if self._signer is None:
            self._deliver(CMD, self._decode_cmd(raw), False)
            return
        try:
            payload = self._signer.open_command(topic, raw)
        except Refused as refused:
            self._refuse_command(raw, refused)
            return
        self._deliver(CMD, payload, False)

    def _refuse_command(self, raw: Any, refused: Refused) -> None:
        self._count_refused("cmd", refused)
        second = int(time.monotonic())
        window, count = self._refusal_window
        count = count + 1 if window == second else 1
        self._refusal_window = (second, count)
        if count > _REFUSAL_EVENTS_PER_S:
            return  # counted in stats()["refused"]; the events stay bounded
        message: Any = self._decode_cmd(raw)
        if isinstance(message, dict):
            message.pop(SIG, None)
            if len(encode(message)) > _PREVIEW:
                message = encode(message).decode()[:_PREVIEW]
        elif isinstance(message, str):
            message = message[:_PREVIEW]
        self.publish(
            "events",
            {
                "run_id": self._run_id,
                "tick": self._last_tick,
                "kind": "CMD_REJECTED",
                "reason": f"refused by the MQTT bus: {refused}",
                "refused": refused.reason,
                "message": message,
            },
        )

    @staticmethod
    def _decode_cmd(raw: Any) -> Any:
        text = raw.decode("utf-8", "replace") if isinstance(raw, (bytes, bytearray)) else str(raw)
        try:
            return json.loads(text)
        except ValueError:
            return text[:500]
