"""The MQTT bus (aiomqtt): the executive, its dashboards and commanders in separate processes.

``MqttBus(url, role=...)`` is an ``ExecutiveLink`` (``executive.bus.executive_link``) or a
``WatcherLink`` (``executive.bus.watcher_link``), both ``MqttLink``s (``executive.bus.link``:
the connection, its supervision, the sender) with an ``Outbox`` (``executive.bus.outbox``)
and a broker address (``executive.bus.address``: URL, password, TLS). This module is the
contract and the public face.

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
Hostile peers (issue 24)
    The executive refuses a ``cmd`` over ``CMD_MAX_BYTES`` (64 KB) unread and asks the
    broker (MQTT 5 maximum packet size) not to send bigger; a signature is checked on the
    bytes before any parse; parsing is bounded; each signed sender (``by``) is rate-limited;
    a refusal echoes a short excerpt; what a message raises is caught and counted
    (``bad_messages``), never a reconnection. Out-topic messages carry an envelope
    (``_bus``: boot, seq, at, status; ``executive.bus.messages.Envelope``) inside what is
    signed: a watcher ignores older or replayed ones (counted ``refused["old"]``) and a
    status older than the newest the run names (commands wait meanwhile). Commands carry an
    ``id`` kept across requeues; ``MissionHost`` applies each id once.
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
    (``crashed``, or ``interrupted`` for a Ctrl-C or a SIGTERM).
    ``stop()`` sends what is still queued (for at most ``timeout`` seconds, the link given
    that long to come back), counts the rest as lost, cancels its tasks and disconnects
    cleanly, so the broker does not send the last will; it never hangs. A final status
    that did not go out gets three more seconds on its own; failing that, the bus leaves
    without a clean goodbye so that the broker publishes the last will (``crashed``) rather
    than keep a dead run ``running``.
"""

from __future__ import annotations

from executive.bus.address import BrokerAddress, mask_url, parse_mqtt_url
from executive.bus.executive_link import ExecutiveLink
from executive.bus.link import MqttLink
from executive.bus.watcher_link import WatcherLink

__all__ = [
    "BrokerAddress",
    "ExecutiveLink",
    "MqttBus",
    "MqttLink",
    "WatcherLink",
    "mask_url",
    "parse_mqtt_url",
]

MqttBus = MqttLink  # MqttBus(url, role="executive" | "watcher", ...): the link of that role
