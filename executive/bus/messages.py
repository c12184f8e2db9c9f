"""The bus's messages as typed models: one per out topic, one per kind of ``cmd``.

The table in ``executive.bus.topics`` says what each topic carries; these models are the
same words as code, and the JSON Schemas in ``docs/schemas/bus/`` are generated from them
(``isr schema --bus DIR``; a test checks that the committed files match).

Out-topic models allow members they do not name (``extra="allow"``): an event carries its
own fields, a scene is a whole picture built by the mission layer. ``cmd`` models are strict
(``extra="forbid"``) but for ``ts``, ``nonce`` and ``sig``, which the signing layer adds and
strips (``executive.bus.signing``). ``id`` is a command's one id from the door to the
executive: kept across requeues and re-signing, applied once (``MissionHost``).

Builders call ``CommandMessage(...).wire()`` (the dict the bus publishes, without the
members left unset); readers call ``parse_cmd`` or ``OUT_MESSAGES[topic].model_validate``.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from executive.contracts import HumanCommandKind

__all__ = [
    "CMD_KINDS",
    "CMD_MESSAGE",
    "OUT_MESSAGES",
    "AgentRunMessage",
    "AnswerMessage",
    "AskMessage",
    "CmdMessage",
    "CommandMessage",
    "EditMessage",
    "Envelope",
    "EventMessage",
    "PlanMessage",
    "SceneMessage",
    "SpeedMessage",
    "StatusMessage",
    "StopMessage",
    "TelemetryMessage",
    "bus_json_schemas",
    "new_command_id",
]

RunState = Literal["starting", "running", "ended", "interrupted", "failed", "crashed"]


def new_command_id() -> str:
    """A fresh command id (random hex): given once, at the door that accepts the command."""
    return uuid.uuid4().hex


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")

    run_id: str | None = Field(None, description="the run that published it")

    def wire(self) -> dict[str, Any]:
        """The plain JSON object the bus carries."""
        return self.model_dump(mode="json", exclude_unset=True)


class DroneFrame(BaseModel):
    """One drone in a telemetry frame."""

    model_config = ConfigDict(extra="allow")

    x: float = Field(description="km east")
    y: float = Field(description="km north")
    heading: float = Field(description="radians, counter-clockwise from east")
    fuel: float = Field(description="km of flight left")
    s: float = Field(description="arc length flown along the current flight")
    status: str
    points: float = Field(description="collected so far")


class TelemetryMessage(_Out):
    """``telemetry``: every published tick (QoS 0; only the latest when the link lags)."""

    tick: int
    time: float
    mode: str
    drones: dict[str, DroneFrame] | None = None


class EventMessage(_Out):
    """``events``: a sim event or an executive action, with the kind's own members."""

    tick: int
    kind: str


class PlanMessage(_Out):
    """``plan`` (retained): the plan in force."""

    tick: int
    plan_id: str | None = None
    solution: dict[str, Any]
    provenance: dict[str, Any] | None = None


class AgentRunMessage(_Out):
    """``agents``: one agent run (the trace's agent-run record)."""

    agent: str | None = None
    engine: str | None = None
    model: str | None = None


class SceneMessage(_Out):
    """``scene`` (retained): the whole picture a newly joined view needs
    (``mission.live.scene``)."""

    tick: int
    drones: Any = None
    targets: Any = None
    sams: Any = None
    airports: Any = None


class AnswerMessage(_Out):
    """``answers``: the reply to an ``ask``, by the ask's ``id``; before it, each stage of
    the answer as it happens (``stage`` set: a progress report, not the reply)."""

    id: str
    question: str
    intent: str | None = None
    answer: Any = None
    stage: dict[str, Any] | None = Field(
        None, description="a stage of the answer (agents.words.stages): plan, thinking, ..."
    )


class StatusMessage(_Out):
    """``status`` (retained): the run's state; ``crashed`` is also the MQTT last will."""

    state: RunState
    at: float | None = Field(None, description="Unix time it was published (MQTT)")
    started_at: float | None = None
    phase: str | None = None
    outcome: dict[str, Any] | None = None
    error: str | None = None
    agents: dict[str, Any] | None = Field(
        None,
        description="running: the planning agents (roles), those off (role -> why) and"
        " their cadences (cadence_s); each AGENTS event after it says which are off",
    )


class Envelope(BaseModel):
    """What the MQTT executive link adds to each out-topic message on the wire (inside what
    is signed) so that a watcher ignores old or replayed ones (``executive.bus.mqtt``)."""

    model_config = ConfigDict(extra="forbid")

    boot: float = Field(description="when the run's bus started (Unix time): a run-scoped epoch")
    seq: int = Field(ge=0, description="the message's number in the run, all topics together")
    at: float = Field(description="Unix time it was published")
    status: int = Field(ge=0, description="the seq of the run's newest status (0: none yet)")
    will: bool = Field(False, description="the MQTT last will (``crashed``): no sequence")


OUT_MESSAGES: dict[str, type[_Out]] = {
    "telemetry": TelemetryMessage,
    "events": EventMessage,
    "plan": PlanMessage,
    "agents": AgentRunMessage,
    "scene": SceneMessage,
    "answers": AnswerMessage,
    "status": StatusMessage,
}


class _Cmd(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(
        None,
        max_length=64,
        description="the command's one id from the door to the executive (applied once)",
    )

    def wire(self) -> dict[str, Any]:
        """The plain JSON object the bus carries (members left unset are left out)."""
        return self.model_dump(mode="json", exclude_none=True)


class CommandMessage(_Cmd):
    """A human command (``executive.contracts.HUMAN_COMMANDS``), for the mission or one
    drone."""

    type: Literal["command"] = "command"
    command: HumanCommandKind
    text: str | None = None
    drone: str | None = None
    source: str | None = None


class EditMessage(_Cmd):
    """An environment edit (``planner.edits``), km or lat/lon."""

    type: Literal["edit"] = "edit"
    edit: dict[str, Any]


class AskMessage(_Cmd):
    """A question; the reply comes on ``answers`` with the same ``id``."""

    type: Literal["ask"] = "ask"
    text: str


class SpeedMessage(_Cmd):
    """The pace: K times real time, or null for as fast as possible."""

    type: Literal["speed"] = "speed"
    speed: float | None

    def wire(self) -> dict[str, Any]:
        """As ``_Cmd.wire``, but ``speed`` is always there (null: as fast as possible)."""
        return {**super().wire(), "speed": self.speed}


class StopMessage(_Cmd):
    """End the mission after this tick."""

    type: Literal["stop"] = "stop"
    reason: str | None = None


CmdMessage = Annotated[
    CommandMessage | EditMessage | AskMessage | SpeedMessage | StopMessage,
    Field(discriminator="type"),
]
CMD_MESSAGE: TypeAdapter[CmdMessage] = TypeAdapter(CmdMessage)
# the ``type`` of each kind of command, as the union above names them
CMD_KINDS: tuple[str, ...] = tuple(
    model.model_fields["type"].default for model in get_args(get_args(CmdMessage)[0])
)


def bus_json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every topic's message (and of the envelope), by file stem."""
    schemas: dict[str, dict[str, Any]] = {
        topic: model.model_json_schema() for topic, model in OUT_MESSAGES.items()
    }
    schemas["cmd"] = CMD_MESSAGE.json_schema()
    schemas["envelope"] = Envelope.model_json_schema()
    for name, schema in schemas.items():
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema.setdefault("title", name)
    return schemas
