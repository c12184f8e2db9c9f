"""A watcher's MQTT link: a dashboard (or ``isr`` command) in another process.

Role ``watcher`` of the MQTT bus (contract: ``executive.bus.mqtt``). Hears the run's out
topics, delivered to local subscriptions (with a token, only what the executive signed);
keeps the newest retained ``plan`` / ``scene`` / ``status`` for later subscriptions; sends
only ``cmd``, each message signed afresh (``ts``, ``nonce``) when it goes out. It says
whether a command can reach the mission now (``link.commands``: not while the run is stale,
nor after a reconnection until the run is heard live again) and, without a run id, follows
the newest live run.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import aiomqtt
from pydantic import ValidationError

from executive.bus.base import LIVE_STATES, TERMINAL_STATES, LinkState
from executive.bus.link import ENVELOPE, MqttLink, Role, encode, log
from executive.bus.messages import Envelope, new_command_id
from executive.bus.outbox import Entry
from executive.bus.signing import SIG, Refused, loads
from executive.bus.topics import CMD, OUT_TOPICS, TOPICS, mqtt_topic
from executive.errors import ExecutiveError

__all__ = ["WatcherLink"]

_MAX_RUNS_SEEN = 1000  # statuses of other runs a following watcher remembers
OUT_MAX_BYTES = 32 * 1024 * 1024  # an out-topic message (a big scene) is far less than this


@dataclass
class _Marks:
    """What a watcher heard of one run's envelopes (``executive.bus.messages.Envelope``)."""

    boot: float  # the run's bus start the marks are about
    seq: dict[str, int] = field(default_factory=dict)  # newest sequence number, per topic
    floor: int = 0  # the newest status's sequence number, as the run's messages name it
    believed: int = 0  # the sequence number of the status held


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


class WatcherLink(MqttLink):
    """A watcher's side of the MQTT bus (see the module docstring)."""

    role: ClassVar[Role] = "watcher"

    def __init__(self, url: str, *, follow: bool | None = None, **options: Any) -> None:
        super().__init__(url, **options)
        self.follow = self._run_id is None if follow is None else follow
        # the run followed, when it was last heard from, what it said last
        self._heard = time.monotonic()
        # after a reconnection: nothing heard live from the run yet, so its executive may
        # not be subscribed again and a command now would be dropped
        self._rejoining = False
        self._run_state: str | None = None
        self._runs: dict[str, _RunSeen] = {}
        self._stale_runs: set[str] = set()
        self._switch_lock = asyncio.Lock()
        self._marks: dict[str, _Marks] = {}

    def _run_topics(self, run_id: str) -> list[tuple[str, int]]:
        # a follower hears every status on isr/+/status already: not twice
        names = [t for t in OUT_TOPICS if not (self.follow and t == "status")]
        return [(mqtt_topic(run_id, t), 1) for t in names]

    # ----- the link --------------------------------------------------------------------

    @property
    def link(self) -> LinkState:
        """How the bus is linked now, and whether a command reaches the mission now."""
        stale = self._is_stale()
        reason = self.error if self._state != "up" else None
        if stale:
            reason = (
                f"run {self._run_id} says it is {self._run_state} but sent nothing for "
                f"{time.monotonic() - self._heard:.0f} s"
            )
        doubted = self._doubted()
        commands = (
            self._state == "up"
            and self._run_id is not None
            and not stale
            and not self._rejoining
            and not doubted
        )
        if self._state == "up" and self._run_id is None:
            reason = "no run found on the broker yet"
        elif self._state == "up" and doubted and not stale:
            reason = (
                f"the status held of run {self._run_id} is older than the run's newest, "
                "which has not arrived (a replayed status?)"
            )
        elif self._state == "up" and self._rejoining and not stale:
            reason = (
                f"reconnected to the broker; waiting to hear from run {self._run_id} "
                "again (its executive may not be back on the broker yet)"
            )
        return self._link_state(
            commands,
            stale=stale,
            reason=reason,
            last_message_age_s=(
                round(time.monotonic() - self._heard, 3) if self._run_id is not None else None
            ),
            stale_after_s=self.stale_after,
        )

    def _stale_limit(self) -> float | None:
        if self._run_state == "running":
            return self.stale_after
        if self._run_state == "starting":
            return max(4 * self.stale_after, 60.0)
        return None

    def _is_stale(self) -> bool:
        if self._state != "up" or self._run_id is None:
            return False
        limit = self._stale_limit()
        return limit is not None and time.monotonic() - self._heard > limit

    def _up(self, client: aiomqtt.Client) -> None:
        super()._up(client)
        self._heard = time.monotonic()  # staleness counts from (re)connection

    def _reconnected(self) -> None:
        # a watcher may command again once it hears the run live (not a retained copy)
        self._rejoining = True

    def _more_tasks(self, client: aiomqtt.Client) -> list[asyncio.Task[None]]:
        return [
            asyncio.get_running_loop().create_task(self._watchdog(client), name="mqtt-watchdog")
        ]

    async def _setup(self, client: aiomqtt.Client) -> None:
        """Subscribe to the run's topics (and, following, to every run's status)."""
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

    # ----- out -------------------------------------------------------------------------

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        """Send a command: only ``cmd``, queued for the broker (sent once the run is known),
        with an ``id`` (kept if it has one) that stays with it through requeues.
        A full queue drops its oldest message, counted in ``dropped``; so is a message
        published after ``stop()``. Raises ``ExecutiveError`` for an unknown topic, or for
        any topic but ``cmd``."""
        if topic not in TOPICS:
            raise ExecutiveError(f"unknown bus topic {topic!r}")
        if topic != CMD:
            raise ExecutiveError(f"a watcher's MQTT bus sends only {CMD!r}, not {topic!r}")
        if not payload.get("id"):  # one id, kept however often it is signed and sent
            payload = {**payload, "id": new_command_id()}
        self.outbox.put(topic, payload)

    def _wire(self, entry: Entry) -> bytes:
        if self._signer is None:
            return encode(entry.payload)
        return self._signer.seal_command(
            self._topic(entry.topic), entry.payload, sender=self.client_id
        )

    # ----- in --------------------------------------------------------------------------

    async def _read(self, client: aiomqtt.Client) -> None:
        if self.follow and self._run_id is None:
            await self._discover(client)
        async for m in client.messages:
            topic = str(m.topic)
            parts = topic.split("/")
            if len(parts) != 3 or parts[0] != "isr" or parts[2] not in OUT_TOPICS:
                continue  # left over from discovery, or not ours
            run_id, name = parts[1], parts[2]
            try:
                payload = self._open(topic, m.payload)
                if payload is None or not self._fresh(run_id, name, payload, bool(m.retain)):
                    continue
            except Exception as exc:  # one bad message never costs the link
                self._bad_message(topic, m.payload, exc)
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

    def _open(self, topic: str, raw: Any) -> dict[str, Any] | None:
        """A watcher's incoming payload: checked when there is a token, else decoded;
        None for an empty one (a cleared retained topic) or one refused. Never raises:
        too big, not JSON, nested too deep are counted and refused."""
        if not raw:
            return None
        data = raw if isinstance(raw, (bytes, bytearray)) else str(raw).encode()
        name = topic.rsplit("/", 1)[-1]
        if len(data) > OUT_MAX_BYTES:
            self._count_refused(name, Refused("too_large", f"{len(data)} bytes"))
            return None
        if self._signer is not None:
            try:
                return self._signer.open(topic, data)
            except Refused as refused:
                self._count_refused(name, refused)
                return None
        try:
            payload = loads(data)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            self.bad_messages += 1
            log.warning("MQTT bus: ignored a message on %s that is not a JSON object", topic)
            return None
        payload.pop(SIG, None)
        return payload

    def _fresh(self, run_id: str, topic: str, payload: dict[str, Any], retained: bool) -> bool:
        """Take the envelope out of ``payload``; whether the message is new: not older than
        one already heard on its topic, nor a status older than the run's newest (which
        every message names). One without an envelope is taken as it is."""
        raw = payload.pop(ENVELOPE, None)
        if raw is None:
            return True
        try:
            env = Envelope.model_validate(raw)
        except ValidationError:
            self._count_refused(topic, Refused("bad_envelope", "a malformed envelope"))
            return False
        marks = self._marks.get(run_id)
        if marks is None or env.boot > marks.boot:  # first heard, or the run's bus restarted
            marks = self._marks[run_id] = _Marks(env.boot)
            while len(self._marks) > _MAX_RUNS_SEEN:
                del self._marks[next(iter(self._marks))]
        elif env.boot < marks.boot:
            return self._old(topic, "from an earlier start of the run")
        if env.will:  # the broker's word that the run's link died: its last status
            marks.believed = marks.floor
            return True
        last = marks.seq.get(topic, 0)
        if env.seq < last or (env.seq == last and not retained):
            return self._old(topic, "older than one already received (replayed?)")
        if topic == "status" and env.seq < marks.floor:
            return self._old(topic, "a status older than the run's newest")
        marks.seq[topic] = env.seq
        marks.floor = max(marks.floor, env.status)
        if topic == "status":
            marks.believed = env.seq
        return True

    def _old(self, topic: str, why: str) -> bool:
        self._count_refused(topic, Refused("old", why))
        return False

    def _doubted(self) -> bool:
        """Whether the run watched has said (in any message) that it has a newer status than
        the one held: the one held is not believed, and commands wait for the newer."""
        marks = self._marks.get(self._run_id or "")
        return marks is not None and marks.floor > marks.believed

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
            if payload is not None and self._fresh(parts[1], "status", payload, bool(m.retain)):
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
