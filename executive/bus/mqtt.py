"""The MQTT bus (aiomqtt): the executive, its dashboards and commanders in separate processes.

Contract
--------
Options
    ``MqttBus(url, *, run_id=None, role="executive" | "watcher", client_id=None,
    password=None, ca_file=None, token=None, max_outgoing=10_000, max_incoming=10_000,
    keepalive=10, timeout=5.0, backoff=(0.25, 2.0), stale_after=15.0, follow=None)``.
    ``url`` is ``mqtt[s]://[USER[:PASSWORD]@]HOST[:PORT]`` (port 1883, or 8883 for
    ``mqtts``); the password comes from the URL or ``password`` (never both) and is never
    printed: errors and logs name the broker as ``mqtt://USER@HOST:PORT``. ``mqtts`` is TLS,
    checked against ``ca_file`` (PEM) or the system's CAs. ``token`` is the run's control
    token: with it every message is signed and checked (``executive.bus.signing``); without
    it nothing is (a test, or a broker no one else can reach). Topics live under
    ``isr/<run_id>/`` with the QoS and retention of ``executive.bus.topics.TOPICS``.
Role ``executive`` (the process that runs the mission)
    Produces: every out topic to ``isr/<run_id>/<topic>``, signed, and to local
    subscriptions, as the in-process bus does (a dashboard in the same process works
    unchanged). Status messages carry ``at`` (Unix time) so watchers can tell the newest
    run. The last will, set at each connection, is ``{"run_id", "state": "crashed"}`` on
    ``isr/<run_id>/status``, retained, QoS 1, signed. Consumes: ``isr/<run_id>/cmd``; with a
    token only a signed, fresh, never seen command is delivered to the local ``cmd``
    subscriptions (that is how ``MissionHost`` hears commands); any other is refused: a
    ``CMD_REJECTED`` event naming why goes out on ``events`` (at most 10 a second) and
    nothing reaches the host. Without a token a ``cmd`` payload that is not a JSON object is
    delivered as it is (text if it is not JSON), so the host rejects it. ``publish("cmd",
    ...)`` here stays local.
Role ``watcher`` (a dashboard in another process)
    Consumes: ``isr/<run_id>/<topic>`` for each out topic, delivered to local subscriptions
    (with a token, only what the executive signed: the rest is ignored and counted in
    ``stats()["refused"]``); the newest retained ``plan`` / ``scene`` / ``status`` is kept
    so that a subscription made later still starts with them. Produces: ``publish("cmd",
    payload)`` -> ``isr/<run_id>/cmd`` QoS 1, signed with ``ts`` and ``nonce``; any other
    topic is refused. After a reconnection ``link.commands`` stays False until a message of
    the run arrives live (not a retained copy): until the run's executive is back on the
    broker, subscribed, a command would be dropped there. With ``run_id=None`` it follows (``follow``): it discovers the run,
    the newest status (by ``at``) whose state is ``starting`` or ``running`` among the
    retained ones on ``isr/+/status``, else the first such status published live (``await
    wait_for_run(timeout)``), and it moves on to the newest live run when its run goes
    stale, or when its run is over and another one is heard starting. A run is stale when
    its last status says ``running`` and nothing came from it for ``stale_after`` seconds
    while the link was up (``starting``: 4 times as long, at least 60 s).
Delivery
    ``publish`` never blocks and never awaits: it puts the message into a bounded outgoing
    queue (``max_outgoing``; when full the oldest is dropped) drained by a background task.
    ``latest_only`` topics (``telemetry``, ``scene``) are conflated: a newer message
    replaces one still waiting, so a sender that falls behind sends only the latest.
    ``dropped`` counts what was thrown away, per topic; ``stats()`` splits it into
    ``superseded`` (a newer value of a latest-only topic took its place) and ``lost``
    (could not be sent: queue full, not encodable, QoS 0 cut by a lost link, still queued
    when ``stop()`` gave up, published after ``stop()``). Local subscriptions are the same
    bounded ``Subscription`` as the in-process bus; the client's incoming queue is bounded
    by ``max_incoming``.
Link
    A lost broker is reconnected for as long as the bus runs: the first try at once, then
    after ``backoff[0]`` seconds doubling up to ``backoff[1]`` (times 0.8 to 1.2). Meanwhile
    ``publish`` keeps queueing (bounded, as above); QoS 1 messages that were in flight and
    not confirmed are sent again (at least once: a watcher may see one twice). On each
    reconnection the bus subscribes again, and the executive publishes again its newest
    ``status``, ``scene`` and ``plan`` (the broker may have restarted without them) unless
    a newer one is waiting. ``link`` (a ``LinkState``) says ``up`` / ``down`` /
    ``connecting``, since when and why, and whether a command can reach the mission now.
Lifecycle
    ``await start()`` / ``await stop()``, or ``async with MqttBus(...) as bus``. The run id
    must be known at ``start()`` for the executive role (the last will names it): build the
    ``Executive`` first, then set ``bus.run_id = executive.run_id`` (or pass ``run_id=``),
    then ``start()``, then ``MissionHost(executive, bus).run()``; the host sets the same id
    again, which is fine, a different one is refused. ``start()`` raises ``ExecutiveError``
    when the broker cannot be reached or refuses the connection (wrong password, TLS):
    only the first connection fails fast. ``close_run(state)`` publishes a final status
    (``interrupted``, ``crashed``: ``executive.bus.exits``) unless the run's last one is
    over, ahead of anything still queued; leaving ``async with`` on an exception does it
    (``crashed``, or ``interrupted`` for a Ctrl-C, ``crashed`` for a SIGTERM).
    ``stop()`` sends what is still queued (for at most ``timeout`` seconds, the link given
    that long to come back), counts the rest as lost, cancels its tasks and disconnects
    cleanly, so the broker does not send the last will; it never hangs. A final status
    that did not go out gets three more seconds on its own; failing that, the bus leaves
    without a clean goodbye so that the broker publishes the last will (``crashed``) rather
    than keep a dead run ``running``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import ssl
import time
import uuid
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple
from urllib.parse import unquote, urlsplit

import aiomqtt
from aiomqtt.exceptions import MqttConnectError
from pydantic import SecretStr

from executive.bus.base import LIVE_STATES, TERMINAL_STATES, Fanout, LinkState, Subscription
from executive.bus.exits import close_status
from executive.bus.signing import SIG, Refused, Signer
from executive.bus.topics import CMD, OUT_TOPICS, TOPICS, mqtt_topic
from executive.errors import ExecutiveError

__all__ = ["BrokerAddress", "MqttBus", "mask_url", "parse_mqtt_url"]

log = logging.getLogger(__name__)

Role = Literal["executive", "watcher"]
_BATCH = 32  # messages handed to the client at once: one broker round trip per batch
_REFUSAL_EVENTS_PER_S = 10  # CMD_REJECTED events the bus publishes at most, per second
_MAX_RUNS_SEEN = 1000  # statuses of other runs a following watcher remembers
_PREVIEW = 2000  # characters of a refused command echoed in its CMD_REJECTED event
# How long stop() waits for the broker to confirm the run's final status, behind what the
# client had already written: a stopping run can spare it, and a status confirmed late
# would otherwise be overwritten by the last will (crashed) on a loaded machine.
_FINAL_STATUS_S = 3.0


class BrokerAddress(NamedTuple):
    """A parsed broker URL; ``display`` names it without the password."""

    host: str
    port: int
    user: str | None
    password: SecretStr | None
    tls: bool

    @property
    def display(self) -> str:
        """``mqtt[s]://[USER@]HOST:PORT``: safe to print."""
        scheme = "mqtts" if self.tls else "mqtt"
        user = f"{self.user}@" if self.user else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{user}{host}:{self.port}"


def mask_url(url: object) -> str:
    """``url`` with any password in it replaced by ``***`` (for error messages)."""
    text = str(url)
    head, sep, rest = text.partition("://")
    if not sep:
        head, rest = "", text
    at = rest.rfind("@")
    if at < 0:
        return text
    userinfo = rest[:at]
    user, colon, _ = userinfo.partition(":")
    return f"{head}{sep}{user}{':***' if colon else ''}@{rest[at + 1 :]}"


def parse_mqtt_url(url: str) -> BrokerAddress:
    """``mqtt[s]://[user[:password]@]host[:port]`` -> a ``BrokerAddress``.

    The port defaults to 1883 (``mqtts``: 8883); user and password are percent-decoded,
    None when absent. Raises ``ExecutiveError`` naming what is wrong (the URL shown with its
    password masked): another scheme, no host, a port out of 1..65535, or anything after
    ``HOST:PORT``.
    """
    expected = "expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]"
    shown = repr(mask_url(url))
    if not isinstance(url, str):
        raise ExecutiveError(f"bad MQTT URL {shown}: {expected}")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("mqtt", "mqtts"):
        raise ExecutiveError(f"bad MQTT URL {shown}: the scheme must be mqtt or mqtts ({expected})")
    try:
        port = parts.port
    except ValueError:
        raise ExecutiveError(
            f"bad MQTT URL {shown}: the port must be a number from 1 to 65535 ({expected})"
        ) from None
    if not parts.hostname:
        raise ExecutiveError(f"bad MQTT URL {shown}: no host ({expected})")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ExecutiveError(f"bad MQTT URL {shown}: nothing may follow HOST:PORT ({expected})")
    if port == 0:
        raise ExecutiveError(
            f"bad MQTT URL {shown}: the port must be a number from 1 to 65535 ({expected})"
        )
    tls = parts.scheme == "mqtts"
    user = unquote(parts.username) if parts.username else None
    password = SecretStr(unquote(parts.password)) if parts.password else None
    return BrokerAddress(parts.hostname, port or (8883 if tls else 1883), user, password, tls)


def _check_run_id(run_id: str | None) -> str | None:
    if run_id is None:
        return None
    if not isinstance(run_id, str) or not run_id or any(c in run_id for c in "/+#\0"):
        raise ExecutiveError(
            f"run id {run_id!r} cannot name an MQTT topic level "
            "(it must be non-empty, without '/', '+', '#')"
        )
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


class _Entry:
    """One message waiting to be sent; ``payload`` may be replaced while it waits."""

    __slots__ = ("payload", "sent", "topic")

    def __init__(self, topic: str, payload: dict[str, Any]) -> None:
        self.topic = topic
        self.payload = payload
        self.sent = False


@dataclass
class _RunSeen:
    """A following watcher's note of one run's newest status."""

    payload: dict[str, Any]  # the status as received (checked)
    at: float
    live: bool  # heard while connected (not a retained message): the run is there now

    @property
    def state(self) -> Any:
        """The status's ``state``."""
        return self.payload.get("state")


class MqttBus:
    """The ``Bus`` over an MQTT broker; see the module docstring for the contract."""

    def __init__(
        self,
        url: str,
        *,
        run_id: str | None = None,
        role: Role = "executive",
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
        address = parse_mqtt_url(url)
        if password is not None:
            if address.password is not None:
                raise ExecutiveError(
                    f"the MQTT password is given twice for {address.display}: "
                    "in the URL and on its own; give it once"
                )
            secret = password if isinstance(password, SecretStr) else SecretStr(password)
            address = address._replace(password=secret)
        if address.password is not None and not address.user:
            raise ExecutiveError(
                f"an MQTT password needs a user name: mqtt://USER@HOST:PORT (broker {address.display})"
            )
        self.address = address
        self.url = address.display  # never holds the password
        if role not in ("executive", "watcher"):
            raise ExecutiveError(f"MQTT bus role {role!r} is not one of executive, watcher")
        if max_outgoing < 1 or max_incoming < 1:
            raise ExecutiveError("max_outgoing and max_incoming must be at least 1")
        if not 0 < backoff[0] <= backoff[1]:
            raise ExecutiveError(
                f"backoff {backoff!r}: expected (first, most) seconds, 0 < first <= most"
            )
        if stale_after <= 0:
            raise ExecutiveError("stale_after must be a positive number of seconds")
        self._tls = self._tls_context(address, ca_file)
        self.ca_file = ca_file
        self.role: Role = role
        self._run_id = _check_run_id(run_id)
        self.follow = role == "watcher" and (run_id is None if follow is None else follow)
        self.client_id = client_id or f"isr-{role}-{uuid.uuid4().hex[:12]}"
        self.max_outgoing = max_outgoing
        self.max_incoming = max_incoming
        self.keepalive = keepalive
        self.timeout = timeout
        self.backoff = backoff
        self.stale_after = stale_after
        token_value = token.get_secret_value() if isinstance(token, SecretStr) else token
        self._signer = Signer(token_value) if token_value else None
        # outgoing: entries in order; a latest-only topic has at most one entry waiting,
        # whose payload a newer message overwrites
        self._out: deque[_Entry] = deque()
        self._waiting_latest: dict[str, _Entry] = {}
        self._inflight: list[_Entry] = []
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self.dropped: dict[str, int] = {}  # thrown away, per topic: superseded + lost
        self.superseded: dict[str, int] = {}  # a newer latest-only value took the place
        self.lost: dict[str, int] = {}  # could not be sent
        self.refused: dict[str, int] = {}  # incoming messages not trusted, per reason
        self.sent = 0  # messages the broker confirmed (QoS 1) or took (QoS 0)
        self.resent = 0  # QoS 1 messages queued again after a lost link
        self.published = 0  # the executive role's publish() calls (a watcher's: not counted)
        self.received = 0  # messages from the broker handed to local subscriptions
        self.bad_messages = 0  # incoming payloads that were not JSON objects (watcher)
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
        # executive: what the run published last (final status, republish on reconnect)
        self._last_status: dict[str, Any] | None = None
        self._last_retained: dict[str, dict[str, Any]] = {}
        self._last_tick = 0
        self._refusal_window = (0.0, 0)  # (second, events published in it)
        self._refusals_logged: set[tuple[str, str]] = set()
        # watcher: the run followed, when it was last heard from, what it said last
        self._heard = time.monotonic()
        # watcher, after a reconnection: nothing heard live from the run yet, so its
        # executive may not be subscribed again and a command now would be dropped
        self._rejoining = False
        self._run_state: str | None = None
        self._runs: dict[str, _RunSeen] = {}
        self._stale_runs: set[str] = set()
        self._switch_lock = asyncio.Lock()

    @staticmethod
    def _tls_context(address: BrokerAddress, ca_file: str | None) -> ssl.SSLContext | None:
        if not address.tls:
            if ca_file is not None:
                raise ExecutiveError(
                    f"a CA file is for TLS: use mqtts://HOST[:PORT] (broker {address.display})"
                )
            return None
        try:
            return ssl.create_default_context(cafile=ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ExecutiveError(f"cannot use the CA file {ca_file}: {exc}") from None

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
        value = _check_run_id(value)
        if self._started and value != self._run_id:
            raise ExecutiveError(
                f"the MQTT bus already carries run {self._run_id!r}; it cannot "
                f"switch to {value!r} after start() (set run_id before)"
            )
        self._run_id = value

    def _topic(self, topic: str) -> str:
        assert self._run_id is not None
        return mqtt_topic(self._run_id, topic)

    def _run_topics(self, run_id: str) -> list[tuple[str, int]]:
        # a follower hears every status on isr/+/status already: not twice
        names = [t for t in OUT_TOPICS if not (self.follow and t == "status")]
        return [(mqtt_topic(run_id, t), 1) for t in names]

    # ----- the link --------------------------------------------------------------------

    @property
    def link(self) -> LinkState:
        """How the bus is linked now (see ``LinkState``); never blocks."""
        stale = self._is_stale()
        reason = self.error if self._state != "up" else None
        if stale:
            reason = (
                f"run {self._run_id} says it is {self._run_state} but sent nothing for "
                f"{time.monotonic() - self._heard:.0f} s"
            )
        if self.role == "executive":
            commands = True  # the local host hears local commands whatever the broker does
        else:
            commands = (
                self._state == "up"
                and self._run_id is not None
                and not stale
                and not self._rejoining
            )
            if self._state == "up" and self._run_id is None:
                reason = "no run found on the broker yet"
            elif self._state == "up" and self._rejoining and not stale:
                reason = (
                    f"reconnected to the broker; waiting to hear from run {self._run_id} "
                    "again (its executive may not be back on the broker yet)"
                )
        return LinkState(
            self._state,
            commands,
            stale=stale,
            reason=reason,
            since=self._since,
            broker=self.url,
            role=self.role,
            reconnects=self.reconnects,
            last_message_age_s=(
                round(time.monotonic() - self._heard, 3)
                if self.role == "watcher" and self._run_id is not None
                else None
            ),
            stale_after_s=self.stale_after if self.role == "watcher" else None,
        )

    def _stale_limit(self) -> float | None:
        if self._run_state == "running":
            return self.stale_after
        if self._run_state == "starting":
            return max(4 * self.stale_after, 60.0)
        return None

    def _is_stale(self) -> bool:
        if self.role != "watcher" or self._state != "up" or self._run_id is None:
            return False
        limit = self._stale_limit()
        return limit is not None and time.monotonic() - self._heard > limit

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
            "reconnects": self.reconnects,
            "down_s": round(down, 3),
            "last_error": self.error,
        }

    # ----- lifecycle -------------------------------------------------------------------

    async def __aenter__(self) -> MqttBus:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: Any, tb: Any) -> None:
        if exc_type is not None and self.role == "executive":
            state, fields = close_status(exc if exc is not None else exc_type())
            self.close_run(state, **fields)
        await self.stop()

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
        if self.role == "executive" and self._run_id is None:
            raise ExecutiveError(
                "the executive's MQTT bus needs its run id before start() "
                "(set bus.run_id = executive.run_id): the last will names it"
            )
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
        if self._started and not (self.role == "watcher" and self._run_id is None):
            # send what is still queued (the final status and scene), within a bound
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._idle.wait(), self.timeout)
        if self._supervisor is not None:
            self._supervisor.cancel()
            await asyncio.gather(self._supervisor, return_exceptions=True)
            self._supervisor = None
        left = [e for e in self._inflight if not e.sent] + list(self._out)
        final = self._final_status(left)
        self._inflight, self._waiting_latest = [], {}
        self._out.clear()
        for entry in left:
            self._count_lost(entry.topic)
        if left:
            log.warning(
                "MQTT bus (%s): %d message(s) could not be sent before stopping (%s)",
                self.role,
                len(left),
                ", ".join(sorted({e.topic for e in left})),
            )
        self._idle.set()
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
        last = self._last_status
        if self.role != "executive" or last is None or last.get("state") not in LIVE_STATES:
            return False
        self.publish("status", {"run_id": self._run_id, "state": state, **fields})
        # the final word goes out first (a backlog must not keep it past stop()'s bound),
        # and alone: an older status still queued would overwrite it on the broker
        statuses = [e for e in self._out if e.topic == "status"]
        for entry in statuses:
            self._out.remove(entry)
        for _ in statuses[:-1]:
            self._count_superseded("status")
        if statuses:
            self._out.appendleft(statuses[-1])
        return True

    def _final_status(self, left: list[_Entry]) -> _Entry | None:
        """The executive's final status among the messages ``stop()`` could not send."""
        if self.role != "executive":
            return None
        final = next((e for e in reversed(left) if e.topic == "status"), None)
        if final is None or final.payload.get("state") not in TERMINAL_STATES:
            return None
        return final

    async def _send_final(self, client: aiomqtt.Client, entry: _Entry) -> _Entry | None:
        """Send the final status alone, within ``_FINAL_STATUS_S``; None once it went out."""
        try:
            await asyncio.wait_for(
                self._send(client, entry, self._wire("status", entry.payload)), _FINAL_STATUS_S
            )
        except (TimeoutError, aiomqtt.MqttError, OSError) as exc:
            log.warning("MQTT bus: the run's final status could not be sent: %s", exc)
            return entry
        self.lost["status"] -= 1  # counted lost above; it went out after all
        self.dropped["status"] -= 1
        return None

    async def _connect(self) -> aiomqtt.Client:
        """A new connected client, or ``ExecutiveError`` saying why not (no password)."""
        will = None
        if self.role == "executive":
            crashed = {"run_id": self._run_id, "state": "crashed"}
            will = aiomqtt.Will(
                self._topic("status"), self._wire("status", crashed), qos=1, retain=True
            )
        password = self.address.password
        client = aiomqtt.Client(
            self.address.host,
            self.address.port,
            identifier=self.client_id,
            username=self.address.user,
            password=password.get_secret_value() if password is not None else None,
            will=will,
            keepalive=self.keepalive,
            timeout=self.timeout,
            max_queued_incoming_messages=self.max_incoming,
            tls_context=self._tls,
        )
        client.pending_calls_threshold = 4 * _BATCH  # a full batch in flight is normal
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
        """Subscribe for the role (again, after a reconnection); the executive queues its
        newest retained messages to be published again."""
        if self.role == "executive":
            await client.subscribe(self._topic(CMD), qos=1)
            self._republish_retained()
            return
        if self.follow:
            await client.subscribe("isr/+/status", qos=1)
        if self._run_id is not None:
            await client.subscribe(self._run_topics(self._run_id))
        elif self.follow:
            # The broker sends the retained statuses right after the SUBACK, before it
            # answers our next packet: once a second subscription is acknowledged, all of
            # them are in the client's queue (see _discover).
            barrier = f"isr/_barrier/{self.client_id}"
            await client.subscribe(barrier, qos=0)
            await client.unsubscribe(barrier)

    def _up(self, client: aiomqtt.Client) -> None:
        self._client = client
        self.connected = True
        self._state = "up"
        self._since = time.time()
        self._heard = time.monotonic()  # staleness counts from (re)connection
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
            self._requeue_inflight()
            await self._close(client, clean=False)
            if time.monotonic() - began > 5.0:  # a connection that lasted: start over
                delay = self.backoff[0]
            client, delay = await self._reconnect(delay)
            self.reconnects += 1
            # a watcher may command again once it hears the run live (not a retained copy)
            self._rejoining = self.role == "watcher"
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

    async def _serve(self, client: aiomqtt.Client) -> None:
        """Read, send (and, for a watcher, watch for staleness) until the link fails."""
        loop = asyncio.get_running_loop()
        tasks = {
            loop.create_task(self._read(client), name="mqtt-in"),
            loop.create_task(self._drain(client), name="mqtt-out"),
        }
        if self.role == "watcher":
            tasks.add(loop.create_task(self._watchdog(client), name="mqtt-watchdog"))
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
        """Send a message; never blocks and never awaits.

        Executive role: delivered to the local subscriptions, and queued for the broker
        unless it is ``cmd`` (a local command stays local); a ``status`` gets its ``at``.
        Watcher: only ``cmd``, queued for the broker (sent once the run is known). A full
        queue drops its oldest message and a latest-only topic replaces its waiting one,
        both counted in ``dropped``; so is a message published after ``stop()``. While the
        link is down messages wait in the same bounded queue. Raises ``ExecutiveError`` for
        an unknown topic, or for any topic but ``cmd`` on a watcher.
        """
        if topic not in TOPICS:
            raise ExecutiveError(f"unknown bus topic {topic!r}")
        if self.role == "watcher":
            if topic != CMD:
                raise ExecutiveError(f"a watcher's MQTT bus sends only {CMD!r}, not {topic!r}")
            self._enqueue(topic, payload)
            return
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
        self._enqueue(topic, payload)

    def _enqueue(self, topic: str, payload: dict[str, Any]) -> None:
        if self._stopped:
            self._count_lost(topic)
            return
        if TOPICS[topic].latest_only:
            waiting = self._waiting_latest.get(topic)
            if waiting is not None:  # conflate: the newer value takes the older one's place
                waiting.payload = payload
                self._count_superseded(topic)
                return
        if len(self._out) >= self.max_outgoing:
            old = self._out.popleft()
            if self._waiting_latest.get(old.topic) is old:
                del self._waiting_latest[old.topic]
            self._count_lost(old.topic)
        entry = _Entry(topic, payload)
        self._out.append(entry)
        if TOPICS[topic].latest_only:
            self._waiting_latest[topic] = entry
        self._idle.clear()
        self._wakeup.set()

    def _count_lost(self, topic: str) -> None:
        self.lost[topic] = self.lost.get(topic, 0) + 1
        self.dropped[topic] = self.dropped.get(topic, 0) + 1

    def _count_superseded(self, topic: str) -> None:
        self.superseded[topic] = self.superseded.get(topic, 0) + 1
        self.dropped[topic] = self.dropped.get(topic, 0) + 1

    def pending(self) -> int:
        """Messages waiting to be sent (and sent but not yet confirmed)."""
        return len(self._out) + sum(1 for e in self._inflight if not e.sent)

    def _republish_retained(self) -> None:
        """Queue, first, the newest status / plan / scene the run published, unless a newer
        one of the same topic is waiting: a restarted broker may have lost them."""
        waiting = {e.topic for e in self._out}
        for topic in ("scene", "plan", "status"):  # appendleft: status goes out first
            payload = self._last_retained.get(topic)
            if payload is not None and topic not in waiting:
                entry = _Entry(topic, payload)
                self._out.appendleft(entry)
                if TOPICS[topic].latest_only:
                    self._waiting_latest[topic] = entry
        if self._out:
            self._idle.clear()
            self._wakeup.set()

    def _requeue_inflight(self) -> None:
        """After a lost link: QoS 1 messages not confirmed go back to the front of the queue
        (a newer latest-only value waiting supersedes them); QoS 0 ones are lost."""
        inflight, self._inflight = self._inflight, []
        back: list[_Entry] = []
        for entry in inflight:
            if entry.sent:
                continue
            if TOPICS[entry.topic].qos == 0:
                self._count_lost(entry.topic)
            elif TOPICS[entry.topic].latest_only and entry.topic in self._waiting_latest:
                self._count_superseded(entry.topic)
            else:
                back.append(entry)
                if TOPICS[entry.topic].latest_only:
                    self._waiting_latest[entry.topic] = entry
        self.resent += len(back)
        self._out.extendleft(reversed(back))
        if self._out:
            self._idle.clear()
            self._wakeup.set()

    def _wire(self, topic: str, payload: dict[str, Any]) -> bytes:
        if self._signer is None:
            return _encode(payload)
        if self.role == "watcher":
            return self._signer.seal_command(self._topic(topic), payload)
        return self._signer.seal(self._topic(topic), payload)

    async def _drain(self, client: aiomqtt.Client) -> None:
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
            batch: list[_Entry] = []
            while self._out and len(batch) < _BATCH:
                entry = self._out.popleft()
                if self._waiting_latest.get(entry.topic) is entry:
                    del self._waiting_latest[entry.topic]
                batch.append(entry)
            sends, kept = [], []
            for entry in batch:
                try:
                    data = self._wire(entry.topic, entry.payload)
                except (TypeError, ValueError) as exc:
                    log.error("MQTT bus: cannot encode a %s message: %s", entry.topic, exc)
                    self._count_lost(entry.topic)
                    continue
                kept.append(entry)
                # gathered coroutines start in this order, so the wire keeps it
                sends.append(self._send(client, entry, data))
            self._inflight = kept
            results = await asyncio.gather(*sends, return_exceptions=True)
            failure = next((r for r in results if isinstance(r, BaseException)), None)
            if failure is not None:
                raise failure  # the link is lost: the supervisor requeues what was not sent
            self._inflight = []

    async def _send(self, client: aiomqtt.Client, entry: _Entry, data: bytes) -> None:
        spec = TOPICS[entry.topic]
        await client.publish(self._topic(entry.topic), data, qos=spec.qos, retain=spec.retained)
        entry.sent = True
        self.sent += 1

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
        if self.follow and self._run_id is None:
            await self._discover(client)
        async for m in client.messages:
            topic = str(m.topic)
            if self.role == "executive":
                if topic == self._topic(CMD):
                    self._command(topic, m.payload)
                continue
            parts = topic.split("/")
            if len(parts) != 3 or parts[0] != "isr" or parts[2] not in OUT_TOPICS:
                continue  # left over from discovery, or not ours
            run_id, name = parts[1], parts[2]
            payload = self._open(topic, m.payload)
            if payload is None:
                continue
            if name == "status" and self.follow:
                await self._saw_status(client, run_id, payload, bool(m.retain))
            if run_id != self._run_id:
                continue
            self._heard = time.monotonic()
            self._stale_runs.discard(run_id)
            if not m.retain:  # sent by the run since we are back: it is there
                self._rejoining = False
            if name == "status":
                self._run_state = payload.get("state")
            self._deliver(name, payload, bool(m.retain))

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
            if len(_encode(message)) > _PREVIEW:
                message = _encode(message).decode()[:_PREVIEW]
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

    @staticmethod
    def _decode_cmd(raw: Any) -> Any:
        text = raw.decode("utf-8", "replace") if isinstance(raw, (bytes, bytearray)) else str(raw)
        try:
            return json.loads(text)
        except ValueError:
            return text[:500]

    def _open(self, topic: str, raw: Any) -> dict[str, Any] | None:
        """A watcher's incoming payload: checked when there is a token, else decoded;
        None for an empty one (a cleared retained topic) or one refused."""
        if not raw:
            return None
        if self._signer is not None:
            try:
                return self._signer.open(topic, raw)
            except Refused as refused:
                self._count_refused(topic.rsplit("/", 1)[-1], refused)
                return None
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            self.bad_messages += 1
            log.warning("MQTT bus: ignored a message on %s that is not a JSON object", topic)
            return None
        payload.pop(SIG, None)
        return payload

    # ----- following the newest live run (watcher) ----------------------------------------

    async def _discover(self, client: aiomqtt.Client) -> None:
        """Read the retained statuses (all queued: see _setup) and watch the best run."""
        messages = aiter(client.messages)
        for _ in range(len(client.messages)):
            m = await anext(messages)
            parts = str(m.topic).split("/")
            if len(parts) != 3 or parts[2] != "status":
                continue
            payload = self._open(str(m.topic), m.payload)
            if payload is not None:
                self._note_run(parts[1], payload, bool(m.retain))
        best = self._candidate()
        if best is not None:
            await self._watch(client, best)

    def _note_run(self, run_id: str, payload: dict[str, Any], retained: bool) -> None:
        at = payload.get("at")
        at = float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else 0.0
        old = self._runs.pop(run_id, None)
        # a retained copy of what was heard live (a resubscription) keeps it live
        live = not retained or (old is not None and old.live and old.at == at)
        seen = _RunSeen(payload, at, live)
        self._runs[run_id] = seen
        if seen.live:
            self._stale_runs.discard(run_id)
        while len(self._runs) > _MAX_RUNS_SEEN:
            del self._runs[next(iter(self._runs))]

    def _candidate(self, *, live_only: bool = False) -> str | None:
        """The newest live run other than the one watched: heard live first, then by
        ``at``; never one found stale."""
        best: tuple[tuple[bool, float], str] | None = None
        for run_id, seen in self._runs.items():
            if (
                run_id == self._run_id
                or run_id in self._stale_runs
                or seen.state not in LIVE_STATES
                or (live_only and not seen.live)
            ):
                continue
            key = (seen.live, seen.at)
            if best is None or key >= best[0]:
                best = (key, run_id)
        return best[1] if best is not None else None

    async def _saw_status(
        self, client: aiomqtt.Client, run_id: str, payload: dict[str, Any], retained: bool
    ) -> None:
        self._note_run(run_id, payload, retained)
        if run_id == self._run_id or retained or payload.get("state") not in LIVE_STATES:
            return
        # a run heard starting or running now: watch it if ours is not there, or is over
        # (_read then delivers this status as the new run's first message)
        if self._run_id is None or self._is_stale() or self._run_state in TERMINAL_STATES:
            await self._watch(client, run_id, announce=False)

    async def _watchdog(self, client: aiomqtt.Client) -> None:
        """Every second: note a stale run (once), and a follower moves on from it."""
        while True:
            await asyncio.sleep(min(1.0, self.stale_after / 4))
            run_id = self._run_id
            if run_id is None or not self._is_stale():
                continue
            if run_id not in self._stale_runs:
                self._stale_runs.add(run_id)
                log.warning("MQTT bus: %s", self.link.reason)
            if self.follow:
                candidate = self._candidate()
                if candidate is not None:
                    await self._watch(client, candidate)

    async def _watch(self, client: aiomqtt.Client, run_id: str, *, announce: bool = True) -> None:
        """Watch ``run_id`` from now on (a follower's switch): its topics subscribed, the
        previous run's dropped; the view sees the new run's messages only, starting with
        its status as last heard (``announce``)."""
        async with self._switch_lock:
            old = self._run_id
            if old == run_id:
                return
            if old is not None:
                await client.unsubscribe([t for t, _ in self._run_topics(old)])
            self._run_id = run_id
            seen = self._runs.get(run_id)
            self._run_state = seen.state if seen is not None else None
            self._heard = time.monotonic()
            await client.subscribe(self._run_topics(run_id))
            if announce and seen is not None:  # heard on isr/+/status before: not again
                self._deliver("status", seen.payload, True)
            log.info(
                "MQTT bus: watching run %s%s", run_id, f" (was {old})" if old is not None else ""
            )
            assert self._run_found is not None
            if not self._run_found.done():
                self._run_found.set_result(run_id)
