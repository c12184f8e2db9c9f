"""Ground truth, and what a reader without it may see.

The run on the bus knows things the executive cannot: SAMs still hidden (the scene lists
them with ``known: false`` for the exercise controller's "truth" toggle), the outcome's
``excluded`` targets (inside a true SAM disk) and ``state_hash`` (a digest of the true
world), and, in the trace store, the ``truth:*`` events, the operator's hidden edits and the
scenario's timeline (the exercise's script: what happens when, hidden SAMs included). Only a
holder of the control token, or every reader of a dashboard started with ``show_truth``,
sees them (``dashboard.deps.TruthDep`` decides); everyone else gets the public view made
here: the same payloads with the truth taken out, never a copy that lags.

Every function is pure and cheap (a shallow copy of what changes) and takes the payloads as
they are published (``executive.bus.topics``); what it does not recognise it passes on.
``PublicTraceReader`` wraps a trace reader so that the rows it answers are public too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from executive.traces import TraceReader

__all__ = [
    "TRUTH_ONLY_OUTCOME",
    "TRUTH_TOPICS",
    "PublicTraceReader",
    "public_event",
    "public_events",
    "public_payload",
    "public_run",
    "public_scene",
    "public_state",
    "public_status",
]

# The topics whose payloads can carry ground truth; the others pass unchanged.
TRUTH_TOPICS = frozenset({"scene", "events", "status"})
# The fields of a run's outcome computed from the truth.
TRUTH_ONLY_OUTCOME = ("excluded", "state_hash")
_WITHHELD = "withheld: may name ground truth"


def _hidden_edit(edit: Any) -> bool:
    """Whether an edit (as JSON) adds a hidden SAM."""
    return isinstance(edit, dict) and bool(edit.get("hidden"))


def public_scene(scene: dict[str, Any] | None) -> dict[str, Any] | None:
    """The scene with only the known SAMs (a hidden one has ``known`` false)."""
    if not isinstance(scene, dict) or not isinstance(scene.get("sams"), list):
        return scene
    sams = [s for s in scene["sams"] if isinstance(s, dict) and s.get("known") is True]
    return {**scene, "sams": sams}


def public_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """The event as a reader without the truth may see it, or None when it is truth itself:
    a ``truth:*`` record, or an edit adding a hidden SAM (the sim reports those on its
    truth-only channel; this is the second lock). A ``CMD_REJECTED`` echoes the operator's
    raw message: its edit, which may name a hidden SAM, is withheld."""
    if not isinstance(event, dict):
        return event
    kind = str(event.get("kind") or "")
    if kind.startswith("truth:"):
        return None
    if kind in ("edit_applied", "edit_rejected") and _hidden_edit(event.get("edit")):
        return None
    if kind == "CMD_REJECTED":
        message = event.get("message")
        if isinstance(message, dict) and "edit" in message:
            return {**event, "message": {**message, "edit": _WITHHELD}}
    return event


def public_events(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of a history, the truth taken out (see ``public_event``)."""
    out = []
    for event in events:
        shown = public_event(event)
        if shown is not None:
            out.append(shown)
    return out


def _public_outcome(outcome: Any) -> Any:
    if not isinstance(outcome, dict):
        return outcome
    return {k: v for k, v in outcome.items() if k not in TRUTH_ONLY_OUTCOME}


def public_status(status: dict[str, Any] | None) -> dict[str, Any] | None:
    """The run's status with its outcome's truth-only fields left out."""
    if not isinstance(status, dict) or "outcome" not in status:
        return status
    return {**status, "outcome": _public_outcome(status["outcome"])}


def public_payload(topic: str, payload: Any) -> Any:
    """A bus payload of ``topic`` as a reader without the truth may see it; None when the
    whole message is truth (then it is not sent at all)."""
    if not isinstance(payload, dict):
        return payload
    if topic == "scene":
        return public_scene(payload)
    if topic == "events":
        return public_event(payload)
    if topic == "status":
        return public_status(payload)
    return payload


def public_state(state: dict[str, Any]) -> dict[str, Any]:
    """``LiveView.state()`` with the public scene and status."""
    return {
        **state,
        "scene": public_scene(state.get("scene")),
        "status": public_status(state.get("status")),
    }


def public_run(row: dict[str, Any]) -> dict[str, Any]:
    """A stored run's row without its scenario's timeline (the exercise's script: hidden
    SAMs and every change to come) and without the outcome's truth-only fields."""
    out = dict(row)
    scenario = out.get("scenario")
    if isinstance(scenario, dict) and "timeline" in scenario:
        out["scenario"] = {k: v for k, v in scenario.items() if k != "timeline"}
    if "outcome" in out:
        out["outcome"] = _public_outcome(out["outcome"])
    return out


def _hidden_sam_ids(reader: TraceReader, run_id: str) -> set[str]:
    """The SAMs of a stored run that were ever added hidden (timeline or operator)."""
    ids: set[str] = set()
    try:
        timeline = (reader.run(run_id).get("scenario") or {}).get("timeline") or []
    except Exception:  # an unknown run: the caller's own query says so
        timeline = []
    for item in timeline:
        if _hidden_edit(item):
            ids.add(str(item.get("id")))
    for row in reader.inputs(run_id):
        if row.get("kind") == "edit" and _hidden_edit(row.get("payload")):
            ids.add(str(row["payload"].get("id")))
    return ids


class PublicTraceReader:
    """A trace reader whose answers are public: runs without their timeline and truth-only
    outcome, events without the ``truth:*`` ones, inputs without the edits that name a SAM
    added hidden. Anything else is the wrapped reader's own (plans, agent runs, telemetry
    and hashes hold no truth the public stream does not show)."""

    def __init__(self, reader: TraceReader) -> None:
        self._reader = reader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)

    def run(self, run_id: str, *, prefix: bool = True) -> dict[str, Any]:
        """``TraceReader.run``, public."""
        return public_run(self._reader.run(run_id, prefix=prefix))

    def events(self, run_id: str, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        """``TraceReader.events``, public (each row's ``kind`` and ``payload`` judged)."""
        return _public_rows(self._reader.events(run_id, *args, **kwargs))

    def events_range(self, run_id: str, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        """``TraceReader.events_range``, public."""
        return _public_rows(self._reader.events_range(run_id, *args, **kwargs))

    def snapshot_at(self, run_id: str, tick: int) -> dict[str, Any] | None:
        """``TraceReader.snapshot_at`` with only the known SAMs in its scene."""
        snap = self._reader.snapshot_at(run_id, tick)
        return snap if snap is None else {**snap, "scene": public_scene(snap["scene"])}

    def snapshots(self, run_id: str, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        """``TraceReader.snapshots`` with only the known SAMs in their scenes."""
        return [
            {**s, "scene": public_scene(s["scene"])}
            for s in self._reader.snapshots(run_id, *args, **kwargs)
        ]

    def inputs(self, run_id: str) -> list[dict[str, Any]]:
        """``TraceReader.inputs`` without the edits adding, moving or removing a SAM that
        was added hidden."""
        hidden = _hidden_sam_ids(self._reader, run_id)
        out = []
        for row in self._reader.inputs(run_id):
            payload = row.get("payload")
            if row.get("kind") == "edit" and isinstance(payload, dict):
                names_hidden = str(payload.get("op", "")).endswith("_sam") and (
                    str(payload.get("id")) in hidden
                )
                if _hidden_edit(payload) or names_hidden:
                    continue
            out.append(row)
        return out


def _public_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored event rows, public (each row's ``kind`` and ``payload`` judged)."""
    out = []
    for row in rows:
        payload = row.get("payload")
        event = {**(payload if isinstance(payload, dict) else {}), "kind": row.get("kind")}
        shown = public_event(event)
        if shown is None:
            continue
        if shown is not event:
            shown = {k: v for k, v in shown.items() if k != "kind"}
            row = {**row, "payload": shown}
        out.append(row)
    return out
