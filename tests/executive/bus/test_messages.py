"""The bus's typed messages: the committed JSON Schemas are the models', and what the
doors build and the executive publishes validates against them."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from cli.schema import bus_schema_texts
from executive.bus.messages import (
    CMD_MESSAGE,
    OUT_MESSAGES,
    CommandMessage,
    SpeedMessage,
    StatusMessage,
)
from executive.bus.topics import OUT_TOPICS, TOPICS
from tests.conftest import ROOT

SCHEMAS = ROOT / "docs" / "schemas" / "bus"


def test_committed_schemas_match_the_models():
    expected = bus_schema_texts()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in SCHEMAS.glob("*.json")}
    assert on_disk == expected, "run: isr schema --bus docs/schemas/bus"
    # one schema per topic, and the envelope
    assert set(expected) == {f"{t}.json" for t in TOPICS} | {"envelope.json"}


def test_every_out_topic_has_a_model():
    assert set(OUT_MESSAGES) == set(OUT_TOPICS)


def test_cmd_messages_round_trip_and_refuse_strangers():
    wire = CommandMessage(command="PAUSE", source="dashboard").wire()
    assert wire == {"type": "command", "command": "PAUSE", "source": "dashboard"}
    assert CMD_MESSAGE.validate_python(wire) == CommandMessage(command="PAUSE", source="dashboard")
    assert SpeedMessage(speed=None).wire() == {"type": "speed", "speed": None}
    with pytest.raises(ValidationError):
        CMD_MESSAGE.validate_python({"type": "command", "command": "FLY_AWAY"})
    with pytest.raises(ValidationError):
        CMD_MESSAGE.validate_python({"type": "launch"})


def test_status_is_typed_but_open():
    status = StatusMessage.model_validate_json(
        json.dumps({"run_id": "r", "state": "ended", "at": 1.5, "outcome": {"points": 3}})
    )
    assert status.state == "ended" and status.wire()["outcome"] == {"points": 3}
    with pytest.raises(ValidationError):
        StatusMessage.model_validate({"run_id": "r", "state": "flying"})
