"""The bus's topics, their quality of service and retention, and the shape of the messages.

Every topic lives under ``isr/<run_id>/`` on MQTT; the in-process bus uses the bare names.
Payloads are JSON objects (``dict``); the executive publishes, dashboards subscribe, and
commands come back on ``cmd``. The models of these messages are in
``executive.bus.messages`` (their JSON Schemas: ``docs/schemas/bus/``). On MQTT each
out-topic message also carries an envelope (``_bus``: ``messages.Envelope``), and a
command an ``id`` (applied once), ``ts``, ``nonce`` and ``by`` (``executive.bus.signing``).

==============  ====  ========  ==========================================================
topic           QoS   retained  payload
==============  ====  ========  ==========================================================
``telemetry``   0     no        ``{"run_id", "tick", "time", "mode", "speed", "drones":
                                {id: {"x", "y", "heading", "fuel", "s", "status",
                                "points"}}}`` every published tick (up to the tick rate)
``events``      1     no        ``{"run_id", "tick", "kind", ...}``: sim events
                                (``target_collected``, ``sam_detected``, ``drone_lost``,
                                ``edit_applied`` ...) and executive actions
                                (``CUT_AND_FREEZE``, ``DRAFT_READY``, ``COMMIT_PLAN`` ...)
``plan``        1     yes       ``{"run_id", "tick", "plan_id", "status", "points",
                                "solution"}``: each committed plan, and drafts under review
``agents``      1     no        an agent run: seed 002's fields (``run_id``,
                                ``parent_run_id``, ``agent``, ``engine``, ``model``,
                                ``duration_ms``, tokens, ``validated_output``,
                                ``applied``, ``error``, ``clamp_actions``)
``scene``       1     yes       the whole picture a newly joined view needs (see
                                ``mission.live.scene``): airports, targets with status,
                                SAMs (known / hidden), each drone's flown, frozen and
                                planned path, the draft under review; on every change
``answers``     1     no        ``{"run_id", "id", "question", "intent", "answer",
                                "numbers", ...}``: replies to ``ask`` messages,
                                each after its stages (``{"id", "stage": {...}}``)
``status``      1     yes       ``{"run_id", "state": "starting" | "running" | "ended" | "failed" |
                                "crashed", ...}``; ``crashed`` is the MQTT last will
``cmd`` (in)    1     no        ``{"type": "command", "command": "PAUSE", "text": ...}``,
                                ``{"type": "edit", "edit": {"op": "add_sam", ...}}``,
                                ``{"type": "ask", "id": "...", "text": "..."}``,
                                ``{"type": "speed", "speed": 5}`` (``null``: as fast as
                                possible)
==============  ====  ========  ==========================================================
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CMD", "OUT_TOPICS", "RETAINED", "TOPICS", "TopicSpec", "mqtt_topic"]


@dataclass(frozen=True)
class TopicSpec:
    """How one topic travels: its MQTT QoS, whether the newest message is kept for late
    subscribers (``retained``), and how a slow subscriber drops (``latest_only``)."""

    name: str  # the bare topic name, the last level of the MQTT topic
    qos: int  # MQTT quality of service: 0 at most once, 1 at least once
    retained: bool  # the newest message is kept and handed to each new subscription
    latest_only: bool  # a slow subscriber keeps only the newest message (telemetry)


TOPICS: dict[str, TopicSpec] = {
    spec.name: spec
    for spec in (
        TopicSpec("telemetry", 0, False, True),
        TopicSpec("events", 1, False, False),
        TopicSpec("plan", 1, True, False),
        TopicSpec("agents", 1, False, False),
        TopicSpec("scene", 1, True, True),
        TopicSpec("answers", 1, False, False),
        TopicSpec("status", 1, True, False),
        TopicSpec("cmd", 1, False, False),
    )
}
CMD = "cmd"
OUT_TOPICS = tuple(name for name in TOPICS if name != CMD)
RETAINED = frozenset(name for name, spec in TOPICS.items() if spec.retained)


def mqtt_topic(run_id: str, topic: str) -> str:
    """The MQTT topic of a bare topic name in one run: ``isr/<run_id>/<topic>``."""
    return f"isr/{run_id}/{topic}"
