"""The executive's MQTT link: publishes the run, hears its commands.

Role ``executive`` of the MQTT bus (contract: ``executive.bus.mqtt``). Publishes every out
topic to ``isr/<run_id>/<topic>``, signed, and to local subscriptions; keeps the run's
newest retained messages to publish again after a reconnection; sets the last will
(``crashed``); delivers to the local ``cmd`` subscriptions only the commands it trusts, and
answers the others with a bounded number of ``CMD_REJECTED`` events.

No peer knocks it over: a ``cmd`` payload over ``CMD_MAX_BYTES`` is refused unread (and
the broker is asked, by MQTT 5's maximum packet size, not to send bigger ones); a signature
is checked on the bytes before anything is parsed; parsing is bounded; each signed sender
(``by``) gets ``_SENDER_RATE`` commands a second (bursts of ``_SENDER_BURST``); a refusal
echoes a short excerpt only; whatever a message raises is caught and counted. Each out-topic
message carries an envelope (``ENVELOPE``: ``executive.bus.messages.Envelope``) inside what
is signed: the run's boot time, its sequence number, its time and the sequence number of
the run's newest status, so that a watcher ignores old or replayed messages.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any, ClassVar

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from executive.bus.base import LIVE_STATES, TERMINAL_STATES, LinkState
from executive.bus.exits import close_status
from executive.bus.link import ENVELOPE, MqttLink, Role, encode, excerpt
from executive.bus.outbox import Entry
from executive.bus.signing import Refused, loads
from executive.bus.topics import CMD, TOPICS
from executive.errors import ExecutiveError

__all__ = ["CMD_MAX_BYTES", "ExecutiveLink"]

CMD_MAX_BYTES = 64 * 1024  # a command is words and an edit: far less than this
_REFUSAL_EVENTS_PER_S = 10  # CMD_REJECTED events the bus publishes at most, per second
_PREVIEW = 200  # characters of a refused command echoed in its CMD_REJECTED event
_SENDER_RATE = 20.0  # commands a second a signed sender may send, sustained ...
_SENDER_BURST = 100.0  # ... in bursts of at most this many
_MAX_SENDERS = 1000  # senders whose budget is remembered (least recently heard forgotten)


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
        # the envelope: this bus's start (the run-scoped epoch), the last sequence number
        # given, and the one of the newest status
        self._boot = round(time.time(), 3)
        self._seq = 0
        self._status_seq = 0
        self._senders: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, when

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
        # no sequence number: published whenever the broker loses us, it is believed as
        # the run's last word without being taken for newer than what follows a reconnection
        will = {"boot": self._boot, "seq": 0, "at": round(time.time(), 3), "status": 0}
        crashed = Entry(
            "status",
            {"run_id": self._run_id, "state": "crashed"},
            {ENVELOPE: will | {"will": True}},
        )
        return aiomqtt.Will(self._topic("status"), self._wire(crashed), qos=1, retain=True)

    def _client_options(self) -> dict[str, Any]:
        # MQTT 5, to tell the broker the largest packet we take: it drops bigger commands
        # rather than hand us megabytes to refuse
        connect = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        connect.MaximumPacketSize = CMD_MAX_BYTES + 1024  # the topic and the header
        return {"protocol": aiomqtt.ProtocolVersion.V5, "properties": connect}

    async def _setup(self, client: aiomqtt.Client) -> None:
        """Subscribe to the run's commands; queue the newest retained messages again."""
        await client.subscribe(self._topic(CMD), qos=1)
        self._republish_retained()

    def _republish_retained(self) -> None:
        """Queue, first, the newest status / plan / scene the run published, unless a newer
        one of the same topic is waiting: a restarted broker may have lost them."""
        waiting = {e.topic for e in self.outbox.waiting()}
        self.outbox.put_first(
            Entry(topic, payload, self._stamp(topic))  # stamped anew: sent again, now
            for topic in ("status", "plan", "scene")
            if (payload := self._last_retained.get(topic)) is not None and topic not in waiting
        )

    def _stamp(self, topic: str) -> dict[str, Any]:
        """The envelope of the next out-topic message (see the module docstring)."""
        self._seq += 1
        if topic == "status":
            self._status_seq = self._seq
        at = round(time.time(), 3)
        return {
            ENVELOPE: {"boot": self._boot, "seq": self._seq, "at": at, "status": self._status_seq}
        }

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
        self.outbox.put(topic, payload, self._stamp(topic))

    def _wire(self, entry: Entry) -> bytes:
        payload = {**entry.payload, **entry.extra} if entry.extra else entry.payload
        if self._signer is None:
            return encode(payload)
        return self._signer.seal(self._topic(entry.topic), payload)

    # ----- in --------------------------------------------------------------------------

    async def _read(self, client: aiomqtt.Client) -> None:
        command_topic = self._topic(CMD)
        async for m in client.messages:
            topic = str(m.topic)
            if topic != command_topic:
                continue
            try:
                self._command(topic, m.payload)
            except Exception as exc:  # one bad message never costs the link
                self._bad_message(topic, m.payload, exc)

    def _command(self, topic: str, raw: Any) -> None:
        data = raw if isinstance(raw, (bytes, bytearray)) else str(raw).encode()
        if len(data) > CMD_MAX_BYTES:  # refused unread
            self._refuse_command(
                data, Refused("too_large", f"{len(data)} bytes (at most {CMD_MAX_BYTES})")
            )
            return
        if self._signer is None:
            self._deliver(CMD, self._decode_cmd(data), False)
            return
        try:
            payload = self._signer.open_command(topic, data)
            self._admit(payload.pop("by", None))
        except Refused as refused:
            self._refuse_command(data, refused)
            return
        self._deliver(CMD, payload, False)

    def _admit(self, sender: Any) -> None:
        """Spend one of ``sender``'s commands (a token bucket); ``Refused`` when none is
        left. Commands signed without a sender's name share one budget."""
        key = sender if isinstance(sender, str) else ""
        now = time.monotonic()
        tokens, then = self._senders.pop(key, (_SENDER_BURST, now))
        tokens = min(_SENDER_BURST, tokens + (now - then) * _SENDER_RATE)
        self._senders[key] = (tokens - 1.0 if tokens >= 1.0 else tokens, now)
        while len(self._senders) > _MAX_SENDERS:
            self._senders.popitem(last=False)
        if tokens < 1.0:
            raise Refused(
                "rate_limited",
                f"sender {key or '(unnamed)'} sent more than {_SENDER_RATE:g} commands a second",
            )

    def _refuse_command(self, data: bytes | bytearray, refused: Refused) -> None:
        self._count_refused("cmd", refused)
        second = int(time.monotonic())
        window, count = self._refusal_window
        count = count + 1 if window == second else 1
        self._refusal_window = (second, count)
        if count > _REFUSAL_EVENTS_PER_S:
            return  # counted in stats()["refused"]; the events stay bounded
        self.publish(
            "events",
            {
                "run_id": self._run_id,
                "tick": self._last_tick,
                "kind": "CMD_REJECTED",
                "reason": f"refused by the MQTT bus: {refused}",
                "refused": refused.reason,
                # a short excerpt, never parsed, without its signature
                "message": excerpt(data.split(b',"sig":', 1)[0], _PREVIEW),
            },
        )

    @staticmethod
    def _decode_cmd(data: bytes | bytearray) -> Any:
        text = data.decode("utf-8", "replace")
        try:
            return loads(text)
        except ValueError:
            return text[:500]
