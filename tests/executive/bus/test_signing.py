"""Signed messages checked before they are parsed, and parsing that never raises."""

from __future__ import annotations

import json

import pytest

from executive.bus.signing import Refused, Signer

TOPIC = "isr/r1/events"


@pytest.mark.parametrize("payload", [{}, {"a": 1}, {"a": [1, 2.5], "b": "x", "c": None}])
def test_what_seal_writes_opens_to_the_same_payload(payload):
    signer = Signer("token")
    assert signer.open(TOPIC, signer.seal(TOPIC, payload)) == payload


def test_a_signature_in_another_place_is_still_checked():
    signer = Signer("token")
    sig = json.loads(signer.seal(TOPIC, {"a": 1}))["sig"]
    assert signer.open(TOPIC, json.dumps({"sig": sig, "a": 1})) == {"a": 1}
    with pytest.raises(Refused) as refused:
        signer.open(TOPIC, json.dumps({"sig": sig, "a": 2}))
    assert refused.value.reason == "bad_signature"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"[" * 5000, "not_json"),  # a RecursionError in json.loads, were it parsed
        (b'{"sig":' + b"[" * 5000, "not_json"),  # parsed: too deep, refused all the same
        (b"\xff\xfe{", "not_json"),
        (b'{"type": "command", "command": "PAUSE"}', "unsigned"),
        (Signer("another").seal(TOPIC, {"a": 1}), "bad_signature"),
        (Signer("token").seal("isr/r2/events", {"a": 1}), "bad_signature"),
    ],
)
def test_bad_messages_are_refused_never_raised(raw, reason):
    with pytest.raises(Refused) as refused:
        Signer("token").open(TOPIC, raw)
    assert refused.value.reason == reason


def test_a_command_keeps_its_id_and_names_its_sender_each_time_it_is_signed():
    signer = Signer("token")
    command = {"type": "command", "command": "PAUSE", "id": "c1"}
    first = signer.seal_command("isr/r1/cmd", command, sender="dash-1")
    again = signer.seal_command("isr/r1/cmd", command, sender="dash-1")
    assert first != again  # a fresh nonce: the replay check lets it through ...
    opened = [signer.open_command("isr/r1/cmd", raw) for raw in (first, again)]
    assert opened[0] == opened[1] == {**command, "by": "dash-1"}  # ... the id says it is one
