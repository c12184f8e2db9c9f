"""What both MQTT links share: the connection, its supervision, the outbox's sender.

``MqttLink`` is the ``Bus`` over an MQTT broker (the contract: ``executive.bus.mqtt``).
Built as ``MqttLink(url, role=...)`` (or ``MqttBus``), it is an ``ExecutiveLink`` or a
``WatcherLink``: each role is a subclass that says what it subscribes to, how it reads
what arrives, how it signs what it sends, and what it publishes. This class connects,
reconnects with backoff, sends the outbox in batches and counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
import uuid
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

import aiomqtt
from aiomqtt.exceptions import MqttConnectError
from pydantic import SecretStr

from executive.bus.address import broker_address, check_run_id, tls_context
from executive.bus.base import Fanout, LinkState, Subscription
from executive.bus.outbox import Entry, Outbox
from executive.bus.signing import Refused, Signer
from executive.bus.topics import TOPICS, mqtt_topic
from executive.errors import ExecutiveError

__all__ = ["BATCH", "ENVELOPE", "MqttLink", "Role", "encode", "excerpt"]

log = logging.getLogger("executive.bus.mqtt")

Role = Literal["executive", "watcher"]
BATCH = 32  # messages handed to the client at once: one broker round trip per batch
ENVELOPE = "_bus"  # the out-topic member holding the envelope (messages.Envelope)
_BAD_LOG_S = 60.0  # a message that could not be handled is logged at most this often
# How long stop() waits for the broker to confirm the run's final status, behind what the
# client had already written: a stopping run can spare it, and a status confirmed late
# would otherwise be overwritten by the last will (crashed) on a loaded machine.
_FINAL_STATUS_S = 30.0  # 3 s, then 10 s, were not enough behind 20 MB at load 8 on 2 cores


def _json_default(value: Any) -> Any:
    # numpy scalars and arrays, sets: whatever the payload builders let through becomes
    # plain JSON rather than failing the send
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    return str(value)


def encode(payload: Any) -> bytes:
    """Compact JSON bytes (numpy values and sets made plain)."""
    return json.dumps(payload, separators=(",", ":"), default=_json_default).encode()


def excerpt(data: bytes | bytearray, most: int = 80) -> str:
    """The first ``most`` characters of ``data`` as text, marked when cut: what a log line
    or a refusal may show of a message, never more."""
    text = bytes(data[: most * 4]).decode("utf-8", "replace")
    return text[:most] + (
        f"... ({len(data)} bytes)" if len(text) > most or len(data) > most * 4 else ""
    )


class MqttLink:
    """The ``Bus`` over an MQTT broker, one role per subclass (see the module docstring)."""

    role: ClassVar[Role]
    _roles: ClassVar[dict[str, type[MqttLink]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        role = cls.__dict__.get("role")
        if role is not None:
            MqttLink._roles[role] = cls

    def __new__(cls, url: str, *, role: Role | None = None, **options: Any) -> MqttLink:
        """The link of ``role`` (``executive`` by default) when built as ``MqttLink``."""
        if cls is MqttLink:
            chosen = MqttLink._roles.get(role or "executive")
            if chosen is None:
                raise ExecutiveError(f"MQTT bus role {role!r} is not one of executive, watcher")
            cls = chosen
        elif role is not None and role != cls.role:
            raise ExecutiveError(f"a {cls.__name__} has the role {cls.role}, not {role!r}")
        return object.__new__(cls)

    def __init__(
        self,
        url: str,
        *,
        run_id: str | None = None,
        role: Role | None = None,
        client_id: str | None = None,
        password: str | SecretStr | None = None,
        ca_file: str | None = None,
        token: str | SecretStr | None = None,
        max_outgoing: int = 10_000,
        max_incoming: int = 10_000,
        keepalive: int = 10,
        timeout: float = 5.0,
        backoff: tuple[float, float] = (0.25, 2.0),
        stale_after: float = 15.0,
        follow: bool | None = None,
    ) -> None:
        address = broker_address(url, password)
        self.address = address
        self.url = address.display  # never holds the password
        if max_outgoing < 1 or max_incoming < 1:
            raise ExecutiveError("max_outgoing and max_incoming must be at least 1")
        if not 0 < backoff[0] <= backoff[1]:
            raise ExecutiveError(
                f"backoff {backoff!r}: expected (first, most) seconds, 0 < first <= most"
            )
        if stale_after <= 0:
            raise ExecutiveError("stale_after must be a positive number of seconds")
        self._tls = tls_context(address, ca_file)
        self.ca_file = ca_file
        self._run_id = check_run_id(run_id)
        self.follow = False  # a watcher's: it follows the newest live run
        self.client_id = client_id or f"isr-{self.role}-{uuid.uuid4().hex[:12]}"
        self.max_outgoing = max_outgoing
        self.max_incoming = max_incoming
        self.keepalive = keepalive
        self.timeout = timeout
        self.backoff = backoff
        self.stale_after = stale_after
        token_value = token.get_secret_value() if isinstance(token, SecretStr) else token
        self._signer = Signer(token_value) if token_value else None
        self.outbox = Outbox(max_outgoing)
        self.refused: dict[str, int] = {}  # incoming messages not trusted, per reason
        self.published = 0  # the executive role's publish() calls (a watcher's: not counted)
        self.received = 0  # messages from the broker handed to local subscriptions
        self.bad_messages = 0  # incoming payloads that could not be decoded
        self.reconnects = 0  # connections made again after a loss
        self._local = Fanout()
        self._client: aiomqtt.Client | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._started = False
        self._stopped = False
        self.connected = False
        self.error: str | None = None  # why the connection was last lost or refused
        self._state: Literal["connecting", "up", "down"] = "connecting"
        self._since = time.time()
        self._down_at: float | None = None  # time.monotonic() when the link was lost
        self._down_s = 0.0  # seconds spent down, all losses together
        self._run_found: asyncio.Future[str] | None = None
        self._refusals_logged: set[tuple[str, str]] = set()
        self._bad_logged = -_BAD_LOG_S  # time.monotonic() of the last bad message logged

    # ----- the outbox's counts, under the names the bus has always had ----------------------

    @property
    def dropped(self) -> dict[str, int]:
        """Thrown away, per topic: superseded + lost."""
        return self.outbox.dropped

    @property
    def superseded(self) -> dict[str, int]:
        """A newer latest-only value took the place, per topic."""
        return self.outbox.superseded

    @property
    def lost(self) -> dict[str, int]:
        """Could not be sent, per topic."""
        return self.outbox.lost

    @property
    def sent(self) -> int:
        """Messages the broker confirmed (QoS 1) or took (QoS 0)."""
        return self.outbox.sent

    @property
    def resent(self) -> int:
        """QoS 1 messages queued again after a lost link."""
        return self.outbox.resent

    def pending(self) -> int:
        """Messages waiting to be sent (and sent but not yet confirmed)."""
        return self.outbox.pending()

    # ----- the run id ------------------------------------------------------------------

    @property
    def run_id(self) -> str | None:
        """The run this bus carries; None for a watcher still to discover it."""
        return self._run_id

    @run_id.setter
    def run_id(self, value: str | None) -> None:
        """Set before ``start()``; afterwards only the same id is accepted.

        Raises ``ExecutiveError`` for an id that cannot be an MQTT topic level (empty, or
        holding ``/``, ``+``, ``#``) or for a different id after ``start()``.
        """
        value = check_run_id(value)
        if self._started and value != self._run_id:
            raise ExecutiveError(
                f"the MQTT bus already carries run {self._run_id!r}; it cannot "
                f"switch to {value!r} after start() (set run_id before)"
            )
        self._run_id = value

    def _topic(self, topic: str) -> str:
        assert self._run_id is not None
        return mqtt_topic(self._run_id, topic)

    # ----- the link --------------------------------------------------------------------

    @property
    def link(self) -> LinkState:
        """How the bus is linked now (see ``LinkState``); never blocks."""
        raise NotImplementedError

    def _link_state(
        self,
        commands: bool,
        *,
        stale: bool = False,
        reason: str | None = None,
        last_message_age_s: float | None = None,
        stale_after_s: float | None = None,
    ) -> LinkState:
        return LinkState(
            self._state,
            commands,
            stale=stale,
            reason=reason,
            since=self._since,
            broker=self.url,
            role=self.role,
            reconnects=self.reconnects,
            last_message_age_s=last_message_age_s,
            stale_after_s=stale_after_s,
        )

    def stats(self) -> dict[str, Any]:
        """The bus's counts as plain JSON data (see the module's contract for ``lost`` and
        ``superseded``): what a run report or ``/api/health`` shows."""
        down = self._down_s + (
            time.monotonic() - self._down_at if self._down_at is not None else 0.0
        )
        return {
            "transport": "mqtt",
            "role": self.role,
            "broker": self.url,
            "state": self._state,
            "signed": self._signer is not None,
            "published": self.published,
            "sent": self.sent,
            "received": self.received,
            "pending": self.pending(),
            "lost": dict(self.lost),
            "lost_total": sum(self.lost.values()),
            "superseded": dict(self.superseded),
            "resent": self.resent,
            "refused": dict(self.refused),
            "bad_messages": self.bad_messages,
            "reconnects": self.reconnects,
            "down_s": round(down, 3),
            "last_error": self.error,
        }

    # ----- lifecycle -------------------------------------------------------------------

    async def __aenter__(self) -> MqttLink:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self._closing_on(exc if exc is not None else exc_type())
        await self.stop()

    def _closing_on(self, exc: BaseException) -> None:
        """Leaving ``async with`` on ``exc``: the executive closes its run."""

    def _check_startable(self) -> None:
        """Raise ``ExecutiveError`` when this role cannot start as it is."""

    async def start(self) -> None:
        """Connect, subscribe for the role and start the link's background task.

        Idempotent while running. Raises ``ExecutiveError`` when the broker cannot be reached
        within about ``timeout`` seconds or refuses the connection (its words, and a hint),
        when the executive role has no run id yet, or when this bus was already stopped (a
        bus is not restarted).
        """
        if self._started:
            return
        if self._stopped:
            raise ExecutiveError("this MQTT bus was stopped; make a new one")
        self._check_startable()
        if self._signer is None:
            log.warning(
                "MQTT bus (%s) on %s without a control token: messages are neither signed "
                "nor checked",
                self.role,
                self.url,
            )
        self._run_found = asyncio.get_running_loop().create_future()
        client = await self._connect()
        try:
            await self._setup(client)
        except aiomqtt.MqttError as exc:
            await self._close(client, clean=True)
            raise ExecutiveError(f"cannot subscribe on MQTT broker at {self.url}: {exc}") from exc
        self._started = True
        if self._run_id is not None:
            self._run_found.set_result(self._run_id)
        self._up(client)
        self._supervisor = asyncio.get_running_loop().create_task(
            self._supervise(client), name="mqtt-link"
        )
        log.info(
            "MQTT bus (%s) connected to %s as %s, run %s%s",
            self.role,
            self.url,
            self.client_id,
            self._run_id or "(to discover)",
            ", signed" if self._signer else "",
        )

    async def stop(self) -> None:
        """Send what is queued (for at most ``timeout`` seconds), count the rest as lost,
        close the local subscriptions and disconnect cleanly (no last will). Idempotent;
        never raises for a lost broker."""
        if self._stopped:
            return
        self._stopped = True
        if self._started and self._run_id is not None:
            # send what is still queued (the final status and scene), within a bound
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.outbox.idle.wait(), self.timeout)
        self.outbox.closed = True
        if self._client is not None:
            # the batch on the wire finishes and its confirmations are read: a socket closed
            # with unread data is reset (TCP RST), which a loaded broker may take before our
            # DISCONNECT, publishing the last will (crashed) over the final status
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.outbox.settled.wait(), _FINAL_STATUS_S)
        if self._supervisor is not None:
            self._supervisor.cancel()
            await asyncio.gather(self._supervisor, return_exceptions=True)
            self._supervisor = None
        left = self.outbox.close()
        final = self._final_status(left)
        if left:
            log.warning(
                "MQTT bus (%s): %d message(s) could not be sent before stopping (%s)",
                self.role,
                len(left),
                ", ".join(sorted({e.topic for e in left})),
            )
        self._local.close_all()
        if self._run_found is not None and not self._run_found.done():
            self._run_found.set_exception(ExecutiveError("the MQTT bus was stopped"))
            self._run_found.exception()  # retrieved: nobody may be waiting
        client, self._client = self._client, None
        self.connected = False
        if client is not None:
            if final is not None:  # one last try, on its own, for the run's final status
                final = await self._send_final(client, final)
            # a final status that could not go out: no clean goodbye, so that the broker
            # publishes the last will (crashed) instead of keeping "running" for a dead run
            await self._close(client, clean=final is None)

    def close_run(self, state: str, **fields: Any) -> bool:
        """Publish the final status ``state`` with ``fields`` unless the run's last status is
        already over (or this is a watcher); whether it did. ``stop()`` sends it."""
        return False

    def _final_status(self, left: list[Entry]) -> Entry | None:
        """The run's final status among the messages ``stop()`` could not send."""
        return None

    async def _send_final(self, client: aiomqtt.Client, entry: Entry) -> Entry | None:
        """Send the final status alone, within ``_FINAL_STATUS_S``; None once it went out."""
        try:
            await asyncio.wait_for(self._send(client, entry, self._wire(entry)), _FINAL_STATUS_S)
        except (TimeoutError, aiomqtt.MqttError, OSError) as exc:
            log.warning("MQTT bus: the run's final status could not be sent: %s", exc)
            return entry
        self.outbox.unlose("status")  # counted lost above; it went out after all
        return None

    def _will(self) -> aiomqtt.Will | None:
        """The last will the broker publishes if this link dies (the executive's)."""
        return None

    def _client_options(self) -> dict[str, Any]:
        """More ``aiomqtt.Client`` options of the role (its protocol, packet size)."""
        return {}

    async def _connect(self) -> aiomqtt.Client:
        """A new connected client, or ``ExecutiveError`` saying why not (no password)."""
        password = self.address.password
        client = aiomqtt.Client(
            self.address.host,
            self.address.port,
            identifier=self.client_id,
            username=self.address.user,
            password=password.get_secret_value() if password is not None else None,
            will=self._will(),
            keepalive=self.keepalive,
            timeout=self.timeout,
            max_queued_incoming_messages=self.max_incoming,
            tls_context=self._tls,
            **self._client_options(),
        )
        client.pending_calls_threshold = 4 * BATCH  # a full batch in flight is normal
        try:
            await asyncio.wait_for(client.__aenter__(), self.timeout + 1.0)
        except MqttConnectError as exc:
            raise ExecutiveError(
                f"the MQTT broker at {self.url} refused the connection: {exc}"
                + (
                    " (wrong user name or password, or not allowed: check the URL's user, "
                    "--mqtt-password-file or $ISR_MQTT_PASSWORD)"
                    if getattr(exc.rc, "value", exc.rc) in (4, 5, 134, 135)
                    else ""
                )
            ) from None
        except (aiomqtt.MqttError, OSError) as exc:
            raise ExecutiveError(f"cannot reach MQTT broker at {self.url}: {exc}") from None
        except TimeoutError:
            raise ExecutiveError(
                f"cannot reach MQTT broker at {self.url}: no answer within {self.timeout:g} s"
            ) from None
        return client

    async def _close(self, client: aiomqtt.Client, *, clean: bool) -> None:
        # a clean DISCONNECT: the broker discards the last will; a lost client: release it
        try:
            await asyncio.wait_for(client.__aexit__(None, None, None), self.timeout)
        except (TimeoutError, aiomqtt.MqttError, OSError) as exc:
            if clean:
                log.warning("MQTT bus: disconnect was not clean: %s", exc or type(exc).__name__)

    async def _setup(self, client: aiomqtt.Client) -> None:
        """Subscribe for the role (again, after a reconnection)."""
        raise NotImplementedError

    def _up(self, client: aiomqtt.Client) -> None:
        self._client = client
        self.connected = True
        self._state = "up"
        self._since = time.time()
        if self._down_at is not None:
            down = time.monotonic() - self._down_at
            self._down_s += down
            self._down_at = None
            log.warning(
                "MQTT bus (%s) is back on %s after %.1f s down (%d message(s) waiting)",
                self.role,
                self.url,
                down,
                self.pending(),
            )

    def _lost(self, exc: BaseException) -> None:
        self.connected = False
        self._client = None
        self.error = str(exc) or type(exc).__name__
        if self._state != "down":
            self._state = "down"
            self._since = time.time()
            self._down_at = time.monotonic()
            log.error(
                "MQTT bus (%s) lost the broker at %s: %s; reconnecting",
                self.role,
                self.url,
                self.error,
            )

    def _reconnected(self) -> None:
        """Called once a lost link is back, before it serves again."""

    async def _supervise(self, client: aiomqtt.Client) -> None:
        """Serve the connection; when it is lost, reconnect with backoff and serve again."""
        delay = self.backoff[0]
        while True:
            began = time.monotonic()
            try:
                await self._serve(client)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a lost link (or a bug): never the end of the bus
                if not isinstance(exc, (aiomqtt.MqttError, OSError)):
                    log.exception("MQTT bus (%s): unexpected error; reconnecting", self.role)
                self._lost(exc)
            self.outbox.requeue_inflight()
            await self._close(client, clean=False)
            if time.monotonic() - began > 5.0:  # a connection that lasted: start over
                delay = self.backoff[0]
            client, delay = await self._reconnect(delay)
            self.reconnects += 1
            self._reconnected()
            self._up(client)

    async def _reconnect(self, delay: float) -> tuple[aiomqtt.Client, float]:
        """Connect and subscribe again, retrying with backoff until it works; returns the
        client and the next delay to start from."""
        tries = 0
        last_log = time.monotonic()
        while True:
            tries += 1
            try:
                client = await self._connect()
                try:
                    await self._setup(client)
                except aiomqtt.MqttError as exc:
                    await self._close(client, clean=False)
                    raise ExecutiveError(f"cannot subscribe on {self.url}: {exc}") from None
                return client, delay
            except ExecutiveError as exc:
                self.error = str(exc)
                if tries == 1 or time.monotonic() - last_log > 30.0:
                    last_log = time.monotonic()
                    log.warning("MQTT bus (%s): %s; trying again", self.role, exc)
            await asyncio.sleep(delay * random.uniform(0.8, 1.2))
            delay = min(delay * 2, self.backoff[1])

    def _more_tasks(self, client: aiomqtt.Client) -> list[asyncio.Task[None]]:
        """Tasks of the role that serve beside reading and sending (a watcher's watchdog)."""
        return []

    async def _serve(self, client: aiomqtt.Client) -> None:
        """Read, send (and whatever the role adds) until the link fails."""
        loop = asyncio.get_running_loop()
        tasks = {
            loop.create_task(self._read(client), name="mqtt-in"),
            loop.create_task(self._drain(client), name="mqtt-out"),
            *self._more_tasks(client),
        }
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        for task in done:
            failure = None if task.cancelled() else task.exception()
            if failure is not None:
                raise failure
        raise aiomqtt.MqttError("the connection's tasks ended")

    async def wait_for_run(self, timeout: float) -> str:
        """The run this bus carries: at once when known, else the one discovery finds.

        ``timeout`` is in seconds. Raises ``ExecutiveError`` before ``start()``, when no
        live run shows up in time (saying how many statuses were refused as unsigned), or
        when the bus is stopped first.
        """
        if self._run_found is None:
            raise ExecutiveError("start() the MQTT bus before waiting for a run")
        try:
            return await asyncio.wait_for(asyncio.shield(self._run_found), timeout)
        except TimeoutError:
            refused = sum(self.refused.values())
            raise ExecutiveError(
                f"no mission is starting or running on the MQTT broker at {self.url} (waited "
                f"{timeout:g} s for a status on isr/+/status"
                + (
                    f"; {refused} message(s) refused: not signed with this control token"
                    if refused
                    else ""
                )
                + ")"
            ) from None

    # ----- out -------------------------------------------------------------------------

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        """Send a message; never blocks and never awaits (see the role's)."""
        raise NotImplementedError

    def _wire(self, entry: Entry) -> bytes:
        """The bytes of ``entry`` on the wire (signed as the role signs)."""
        raise NotImplementedError

    async def _drain(self, client: aiomqtt.Client) -> None:
        if self._run_id is None:  # a watcher's commands wait until it knows its run
            assert self._run_found is not None
            try:
                await asyncio.shield(self._run_found)
            except ExecutiveError:
                return
        outbox = self.outbox
        while True:
            batch = await outbox.take(BATCH)
            sends, kept = [], []
            for entry in batch:
                try:
                    data = self._wire(entry)
                except (TypeError, ValueError) as exc:
                    log.error("MQTT bus: cannot encode a %s message: %s", entry.topic, exc)
                    outbox.count_lost(entry.topic)
                    continue
                kept.append(entry)
                # gathered coroutines start in this order, so the wire keeps it
                sends.append(self._send(client, entry, data))
            outbox.inflight = kept
            results = await asyncio.gather(*sends, return_exceptions=True)
            failure = next((r for r in results if isinstance(r, BaseException)), None)
            if failure is not None:
                raise failure  # the link is lost: the supervisor requeues what was not sent
            outbox.inflight = []

    async def _send(self, client: aiomqtt.Client, entry: Entry, data: bytes) -> None:
        spec = TOPICS[entry.topic]
        await client.publish(self._topic(entry.topic), data, qos=spec.qos, retain=spec.retained)
        entry.sent = True
        self.outbox.sent += 1

    # ----- in --------------------------------------------------------------------------

    def subscribe(self, topics: Iterable[str], *, maxsize: int = 256) -> Subscription:
        """A bounded local subscription, fed by both local publishes and the broker; the
        newest retained message of each topic arrives first."""
        return self._local.subscribe(topics, maxsize=maxsize)

    def subscribers(self) -> list[Subscription]:
        """The open local subscriptions (a copy), e.g. to read their drop counts."""
        return list(self._local.subscriptions)

    def _deliver(self, topic: str, payload: Any, retained: bool) -> None:
        self.received += 1
        self._local.deliver(topic, payload, retained=retained)

    async def _read(self, client: aiomqtt.Client) -> None:
        """Read what the broker sends until the link fails."""
        raise NotImplementedError

    def _bad_message(self, topic: str, raw: Any, exc: Exception) -> None:
        """A message whose handling raised: counted, logged (a short excerpt, at most once
        a minute), and the link reads on."""
        self.bad_messages += 1
        now = time.monotonic()
        if now - self._bad_logged >= _BAD_LOG_S:
            self._bad_logged = now
            data = raw if isinstance(raw, (bytes, bytearray)) else str(raw).encode()
            log.warning(
                "MQTT bus (%s): could not handle a message on %s (%s: %s): %r; %d so far",
                self.role,
                topic,
                type(exc).__name__,
                str(exc)[:200],
                excerpt(data),
                self.bad_messages,
            )

    def _count_refused(self, topic: str, refused: Refused) -> None:
        self.refused[refused.reason] = self.refused.get(refused.reason, 0) + 1
        key = (topic, refused.reason)
        if key not in self._refusals_logged:
            self._refusals_logged.add(key)
            log.warning(
                "MQTT bus (%s): refused a message on %s: %s (further ones are only counted)",
                self.role,
                topic,
                refused,
            )
