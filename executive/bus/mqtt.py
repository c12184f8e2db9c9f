"""The MQTT bus (aiomqtt): the executive, its dashboards and commanders in separate processes.

Contract
--------
Options
    ``MqttBus(url, *, run_id=None, role="executive" | "watcher", client_id=None,
    max_outgoing=10_000, max_incoming=10_000, keepalive=10, timeout=5.0)``. ``url`` is
    ``mqtt://[USER[:PASSWORD]@]HOST[:PORT]`` (port 1883 by default). Topics live under
    ``isr/<run_id>/`` with the QoS and retention of ``executive.bus.topics.TOPICS``;
    payloads are JSON objects.
Role ``executive`` (the process that runs the mission)
    Produces: every out topic (``telemetry`` QoS 0; ``events``, ``plan``, ``agents``,
    ``scene``, ``answers``, ``status`` QoS 1; ``plan``, ``scene``, ``status`` retained) to
    ``isr/<run_id>/<topic>``, and to local subscriptions, as the in-process bus does (a
    dashboard in the same process works unchanged). Status messages on the wire carry
    ``at`` (Unix time) so watchers can tell the newest run. The last will, set at connect,
    is ``{"run_id", "state": "crashed"}`` on ``isr/<run_id>/status``, retained, QoS 1.
    Consumes: ``isr/<run_id>/cmd``, delivered to local ``cmd`` subscriptions (that is how
    ``MissionHost`` hears commands). A ``cmd`` payload that is not a JSON object is
    delivered as it is (text if it is not JSON) so the host rejects it with a
    ``CMD_REJECTED`` event. ``publish("cmd", ...)`` here stays local.
Role ``watcher`` (a dashboard in another process)
    Consumes: ``isr/<run_id>/+`` (out topics only), delivered to local subscriptions;
    retained messages arrive first, as the broker sends them, and the newest retained value
    of ``plan`` / ``scene`` / ``status`` is kept so that a subscription made later still
    starts with them. Produces: ``publish("cmd", payload)`` -> ``isr/<run_id>/cmd`` QoS 1;
    any other topic is refused. With ``run_id=None`` it discovers the run: the newest
    status (by ``at``) whose state is ``starting`` or ``running`` among the retained ones
    on ``isr/+/status``, else the first such status published live; ``await
    wait_for_run(timeout)`` returns its id.
Delivery
    ``publish`` never blocks and never awaits: it puts the message into a bounded outgoing
    queue (``max_outgoing``; when full the oldest is dropped) drained by a background task.
    ``latest_only`` topics (``telemetry``, ``scene``) are conflated: a newer message
    replaces one still waiting, so a sender that falls behind sends only the latest.
    ``dropped`` counts what was thrown away, per topic. Local subscriptions are the same
    bounded ``Subscription`` as the in-process bus (drop counting per subscriber); the
    client's incoming queue is bounded by ``max_incoming``.
Lifecycle
    ``await start()`` / ``await stop()``, or ``async with MqttBus(...) as bus``. The run id
    must be known at ``start()`` for the executive role (the last will names it): build the
    ``Executive`` first (its ``run_id`` is fixed by its constructor), then set
    ``bus.run_id = executive.run_id`` (or pass ``run_id=``), then ``start()``, then
    ``MissionHost(executive, bus).run()``; the host sets the same id again, which is fine,
    a different one is refused. ``start()`` raises ``ExecutiveError`` when the broker cannot
    be reached. ``stop()`` sends what is still queued (for at most ``timeout`` seconds),
    cancels its tasks and disconnects cleanly, so the broker does not send the last will;
    it publishes nothing of its own and never hangs. A connection lost mid-run is logged
    and counted as drops (no reconnection).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections import deque
from collections.abc import Iterable
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

import aiomqtt

from executive.bus.base import Fanout, Subscription
from executive.bus.topics import CMD, OUT_TOPICS, TOPICS, mqtt_topic
from executive.errors import ExecutiveError

__all__ = ["MqttBus", "parse_mqtt_url"]

log = logging.getLogger(__name__)

Role = Literal["executive", "watcher"]
_LIVE_STATES = ("starting", "running")
_BATCH = 32  # messages handed to the client at once: one broker round trip per batch


def parse_mqtt_url(url: str) -> tuple[str, int, str | None, str | None]:
    """``mqtt://[user[:password]@]host[:port]`` -> (host, port, user, password)."""
    expected = "expected mqtt://HOST[:PORT]"
    if not isinstance(url, str):
        raise ExecutiveError(f"bad MQTT URL {url!r}: {expected}")
    parts = urlsplit(url.strip())
    if parts.scheme != "mqtt":
        raise ExecutiveError(f"bad MQTT URL {url!r}: the scheme must be mqtt ({expected})")
    try:
        port = parts.port
    except ValueError:
        raise ExecutiveError(f"bad MQTT URL {url!r}: the port must be a number from 1 to "
                             f"65535 ({expected})") from None
    if not parts.hostname:
        raise ExecutiveError(f"bad MQTT URL {url!r}: no host ({expected})")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ExecutiveError(f"bad MQTT URL {url!r}: nothing may follow HOST:PORT ({expected})")
    if port == 0:
        raise ExecutiveError(f"bad MQTT URL {url!r}: the port must be a number from 1 to "
                             f"65535 ({expected})")
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    return parts.hostname, port or 1883, user, password


def _check_run_id(run_id: str | None) -> str | None:
    if run_id is None:
        return None
    if not isinstance(run_id, str) or not run_id or any(c in run_id for c in "/+#\0"):
        raise ExecutiveError(f"run id {run_id!r} cannot name an MQTT topic level "
                             "(it must be non-empty, without '/', '+', '#')")
    return run_id


def _json_default(value: Any) -> Any:
    # numpy scalars and arrays, sets: whatever the payload builders let through becomes
    # plain JSON rather than failing the send
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    return str(value)


def _encode(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":"), default=_json_default).encode()


class MqttBus:
    """The ``Bus`` over an MQTT broker; see the module docstring for the contract."""

    def __init__(self, url: str, *, run_id: str | None = None, role: Role = "executive",
                 client_id: str | None = None, max_outgoing: int = 10_000,
                 max_incoming: int = 10_000, keepalive: int = 10,
                 timeout: float = 5.0) -> None:
        self.url = url
        self._host, self._port, self._user, self._password = parse_mqtt_url(url)
        if role not in ("executive", "watcher"):
            raise ExecutiveError(f"MQTT bus role {role!r} is not one of executive, watcher")
        if max_outgoing < 1 or max_incoming < 1:
            raise ExecutiveError("max_outgoing and max_incoming must be at least 1")
        self.role: Role = role
        self._run_id = _check_run_id(run_id)
        self.client_id = client_id or f"isr-{role}-{uuid.uuid4().hex[:12]}"
        self.max_outgoing = max_outgoing
        self.max_incoming = max_incoming
        self.keepalive = keepalive
        self.timeout = timeout
        # outgoing: [topic, payload] entries in order; a latest-only topic has at most one
        # entry waiting, whose payload a newer message overwrites
        self._out: deque[list] = deque()
        self._waiting_latest: dict[str, list] = {}
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self.dropped: dict[str, int] = {}
        self.sent = 0
        self.published = 0
        self.received = 0
        self.bad_messages = 0  # incoming payloads that were not JSON objects (watcher)
        self._local = Fanout()
        self._client: aiomqtt.Client | None = None
        self._tasks: list[asyncio.Task] = []
        self._started = False
        self._stopped = False
        self.connected = False
        self.error: str | None = None  # why the connection was lost, if it was
        self._run_found: asyncio.Future[str] | None = None

    # ----- the run id ------------------------------------------------------------------

    @property
    def run_id(self) -> str | None:
        return self._run_id

    @run_id.setter
    def run_id(self, value: str | None) -> None:
        value = _check_run_id(value)
        if self._started and value != self._run_id:
            raise ExecutiveError(f"the MQTT bus already carries run {self._run_id!r}; it cannot "
                                 f"switch to {value!r} after start() (set run_id before)")
        self._run_id = value

    def _topic(self, topic: str) -> str:
        assert self._run_id is not None
        return mqtt_topic(self._run_id, topic)

    # ----- lifecycle -------------------------------------------------------------------

    async def __aenter__(self) -> MqttBus:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    async def start(self) -> None:
        if self._started:
            return
        if self._stopped:
            raise ExecutiveError("this MQTT bus was stopped; make a new one")
        if self.role == "executive" and self._run_id is None:
            raise ExecutiveError("the executive's MQTT bus needs its run id before start() "
                                 "(set bus.run_id = executive.run_id): the last will names it")
        will = None
        if self.role == "executive":
            will = aiomqtt.Will(self._topic("status"),
                                _encode({"run_id": self._run_id, "state": "crashed"}),
                                qos=1, retain=True)
        self._run_found = asyncio.get_running_loop().create_future()
        client = aiomqtt.Client(self._host, self._port, identifier=self.client_id,
                                username=self._user, password=self._password, will=will,
                                keepalive=self.keepalive, timeout=self.timeout,
                                max_queued_incoming_messages=self.max_incoming)
        client.pending_calls_threshold = 4 * _BATCH  # a full batch in flight is normal
        where = f"mqtt://{self._host}:{self._port}"
        try:
            await asyncio.wait_for(client.__aenter__(), self.timeout + 1.0)
        except (aiomqtt.MqttError, OSError) as exc:
            raise ExecutiveError(f"cannot reach MQTT broker at {where}: {exc}") from exc
        except asyncio.TimeoutError:
            raise ExecutiveError(f"cannot reach MQTT broker at {where}: no answer within "
                                 f"{self.timeout:g} s") from None
        self._client = client
        self.connected = True
        self._started = True
        try:
            if self.role == "executive":
                await client.subscribe(self._topic(CMD), qos=1)
                self._run_found.set_result(self._run_id)
            elif self._run_id is not None:
                await client.subscribe(self._topic("+"), qos=1)
                self._run_found.set_result(self._run_id)
            else:
                await client.subscribe("isr/+/status", qos=1)
                # The broker sends the retained statuses right after the SUBACK, before it
                # answers our next packet: once a second subscription is acknowledged, all
                # of them are in the client's queue (see _discover).
                barrier = f"isr/_barrier/{self.client_id}"
                await client.subscribe(barrier, qos=0)
                await client.unsubscribe(barrier)
        except aiomqtt.MqttError as exc:
            await self._disconnect()
            raise ExecutiveError(f"cannot subscribe on MQTT broker at {where}: {exc}") from exc
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._drain(), name="mqtt-out"),
                       loop.create_task(self._read(), name="mqtt-in")]
        log.info("MQTT bus (%s) connected to %s as %s, run %s", self.role, where,
                 self.client_id, self._run_id or "(to discover)")

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._started and self.connected:
            # send what is still queued (the final status and scene), within a bound
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._idle.wait(), self.timeout)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        self._local.close_all()
        if self._run_found is not None and not self._run_found.done():
            self._run_found.set_exception(ExecutiveError("the MQTT bus was stopped"))
            self._run_found.exception()  # retrieved: nobody may be waiting
        await self._disconnect()

    async def _disconnect(self) -> None:
        client, self._client = self._client, None
        self.connected = False
        if client is None:
            return
        # a clean DISCONNECT: the broker discards the last will
        try:
            await asyncio.wait_for(client.__aexit__(None, None, None), self.timeout)
        except (aiomqtt.MqttError, OSError, asyncio.TimeoutError) as exc:
            log.warning("MQTT bus: disconnect was not clean: %s", exc or type(exc).__name__)

    def _lost(self, exc: BaseException) -> None:
        if self.connected:
            self.connected = False
            self.error = str(exc) or type(exc).__name__
            log.error("MQTT bus (%s) lost the broker at mqtt://%s:%d: %s", self.role,
                      self._host, self._port, self.error)
        self._idle.set()
        if self._run_found is not None and not self._run_found.done():
            self._run_found.set_exception(ExecutiveError(
                f"lost the MQTT broker at mqtt://{self._host}:{self._port} before finding a "
                f"run: {self.error}"))
            self._run_found.exception()  # retrieved: nobody may be waiting

    async def wait_for_run(self, timeout: float) -> str:
        """The run this bus carries: at once when known, else the one discovery finds."""
        if self._run_found is None:
            raise ExecutiveError("start() the MQTT bus before waiting for a run")
        try:
            return await asyncio.wait_for(asyncio.shield(self._run_found), timeout)
        except asyncio.TimeoutError:
            raise ExecutiveError(f"no mission is starting or running on the MQTT broker at "
                                 f"mqtt://{self._host}:{self._port} (waited {timeout:g} s for "
                                 "a status on isr/+/status)") from None

    # ----- out -------------------------------------------------------------------------

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        if topic not in TOPICS:
            raise ExecutiveError(f"unknown bus topic {topic!r}")
        if self.role == "watcher":
            if topic != CMD:
                raise ExecutiveError(f"a watcher's MQTT bus sends only {CMD!r}, not {topic!r}")
            self._enqueue(topic, payload)
            return
        self.published += 1
        self._local.deliver(topic, payload)
        if topic != CMD:  # a local command is for the local host only
            self._enqueue(topic, payload)

    def _enqueue(self, topic: str, payload: dict[str, Any]) -> None:
        if self._stopped or (self._started and not self.connected):
            self._count_drop(topic)
            return
        if TOPICS[topic].latest_only:
            waiting = self._waiting_latest.get(topic)
            if waiting is not None:  # conflate: the newer value takes the older one's place
                waiting[1] = payload
                self._count_drop(topic)
                return
        if len(self._out) >= self.max_outgoing:
            old = self._out.popleft()
            if self._waiting_latest.get(old[0]) is old:
                del self._waiting_latest[old[0]]
            self._count_drop(old[0])
        entry = [topic, payload]
        self._out.append(entry)
        if TOPICS[topic].latest_only:
            self._waiting_latest[topic] = entry
        self._idle.clear()
        self._wakeup.set()

    def _count_drop(self, topic: str) -> None:
        self.dropped[topic] = self.dropped.get(topic, 0) + 1

    def pending(self) -> int:
        """Messages waiting to be sent."""
        return len(self._out)

    async def _drain(self) -> None:
        client = self._client
        assert client is not None
        if self._run_id is None:  # a watcher's commands wait until it knows its run
            assert self._run_found is not None
            try:
                await asyncio.shield(self._run_found)
            except ExecutiveError:
                return
        while True:
            if not self._out:
                self._idle.set()
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            batch = []
            while self._out and len(batch) < _BATCH:
                entry = self._out.popleft()
                if self._waiting_latest.get(entry[0]) is entry:
                    del self._waiting_latest[entry[0]]
                batch.append(entry)
            topics, sends = [], []
            for topic, payload in batch:
                if topic == "status":  # lets a watcher tell the newest run
                    payload = {**payload, "at": payload.get("at", time.time())}
                try:
                    data = _encode(payload)
                except (TypeError, ValueError) as exc:
                    log.error("MQTT bus: cannot encode a %s message: %s", topic, exc)
                    self._count_drop(topic)
                    continue
                spec = TOPICS[topic]
                # gathered coroutines start in this order, so the wire keeps it
                topics.append(topic)
                sends.append(client.publish(self._topic(topic), data, qos=spec.qos,
                                            retain=spec.retained))
            results = await asyncio.gather(*sends, return_exceptions=True)
            for topic, result in zip(topics, results):
                if isinstance(result, BaseException):
                    if isinstance(result, asyncio.CancelledError):
                        raise result
                    self._count_drop(topic)
                    if isinstance(result, aiomqtt.MqttError):
                        self._lost(result)
                else:
                    self.sent += 1
            if not self.connected:
                for topic, _ in self._out:
                    self._count_drop(topic)
                self._out.clear()
                self._waiting_latest.clear()

    # ----- in --------------------------------------------------------------------------

    def subscribe(self, topics: Iterable[str], *, maxsize: int = 256) -> Subscription:
        return self._local.subscribe(topics, maxsize=maxsize)

    def subscribers(self) -> list[Subscription]:
        return list(self._local.subscriptions)

    def _deliver(self, topic: str, payload: Any, retained: bool) -> None:
        self.received += 1
        self._local.deliver(topic, payload, retained=retained)

    async def _read(self) -> None:
        client = self._client
        assert client is not None
        try:
            if self._run_id is None:
                await self._discover(client)
            prefix = f"isr/{self._run_id}/"
            async for m in client.messages:
                topic = str(m.topic)
                if not topic.startswith(prefix):
                    continue  # left over from discovery
                name = topic[len(prefix):]
                if self.role == "executive":
                    if name == CMD:
                        self._deliver(CMD, self._decode_cmd(m.payload), False)
                elif name in OUT_TOPICS:
                    payload = self._decode(m.payload, topic)
                    if payload is not None:
                        self._deliver(name, payload, bool(m.retain))
        except aiomqtt.MqttError as exc:
            self._lost(exc)

    @staticmethod
    def _decode_cmd(raw: Any) -> Any:
        text = raw.decode("utf-8", "replace") if isinstance(raw, (bytes, bytearray)) else str(raw)
        try:
            return json.loads(text)
        except ValueError:
            return text[:500]

    def _decode(self, raw: Any, topic: str) -> dict | None:
        if not raw:
            return None  # an empty message clears a retained topic: nothing to show
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            self.bad_messages += 1
            log.warning("MQTT bus: ignored a message on %s that is not a JSON object", topic)
            return None
        return payload

    async def _discover(self, client: aiomqtt.Client) -> None:
        """Pick the run to watch from ``isr/+/status``, then subscribe to its topics."""
        assert self._run_found is not None
        best: tuple[float, str] | None = None
        retained_batch = len(client.messages)  # all retained statuses are queued (start())
        messages = aiter(client.messages)
        for _ in range(retained_batch):
            best = self._better(await anext(messages), best)
        while best is None:  # none yet: the first run that starts
            best = self._better(await anext(messages), None)
        run_id = best[1]
        self._run_id = run_id
        await client.unsubscribe("isr/+/status")
        await client.subscribe(self._topic("+"), qos=1)
        log.info("MQTT bus: watching run %s", run_id)
        if not self._run_found.done():
            self._run_found.set_result(run_id)

    def _better(self, m: aiomqtt.Message,
                best: tuple[float, str] | None) -> tuple[float, str] | None:
        parts = str(m.topic).split("/")
        payload = self._decode(m.payload, str(m.topic)) if m.payload else None
        if payload is None or len(parts) != 3 or payload.get("state") not in _LIVE_STATES:
            return best
        at = payload.get("at")
        at = float(at) if isinstance(at, (int, float)) else 0.0
        if not m.retain:
            at = float("inf")  # published while we listen: newer than any retained one
        return (at, parts[1]) if best is None or at >= best[0] else best
