"""The coordinator's decision: the operator's words read against what the mission knows.

``coordinate(text, known_targets, known_drones, ...)`` classifies the words
(``intent``), reads each clause of a command (``constraints``), of a what-if
(``what_if``) or a memory (``memory``), checks every id a question names, and returns the
decision in the shape ``Executive._apply_words`` reads (see the package docstring). An id
the mission does not know is an error naming it, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from executive.agents.coordinator.constraints import parse_command
from executive.agents.coordinator.decision import Decision
from executive.agents.coordinator.ids import Ids, normalise, plain, tokens
from executive.agents.coordinator.intent import (
    Intent,
    classify_with_rules,
    imperative,
    split_clauses,
)
from executive.agents.coordinator.memory import parse_memory
from executive.agents.coordinator.regions import Point, region_box
from executive.agents.coordinator.what_if import parse_what_if

__all__ = ["coordinate"]

_T = TypeVar("_T")


def coordinate(
    text: str,
    known_targets: Mapping[str, Any] | Iterable[Any],
    known_drones: Iterable[str],
    *,
    known_sams: Iterable[Any] = (),
    airports: Iterable[Any] = (),
    collected: Iterable[str] = (),
) -> dict[str, Any]:
    """The coordinator's decision for ``text`` (see the package docstring).

    ``known_targets``: id -> (x, y), objects with ``id``, ``x``, ``y``, or bare ids (then a
    region cannot be resolved); ``known_sams``: ids or objects with ``id``; ``airports``
    (objects or (x, y)) widen the region box; ``collected`` targets are never forbidden by a
    region and draw a warning when named.
    """
    text = text or ""
    positions = _positions(known_targets)
    drones = [str(d) for d in known_drones]
    sam_ids = [str(getattr(s, "id", s)) for s in known_sams]
    ids = Ids(positions, drones, sam_ids)
    done = set(collected)
    box = region_box([p for p in positions.values() if p is not None] + _points(airports))
    intent, rules = classify_with_rules(text)
    d = Decision(intent, list(rules))
    norm = normalise(imperative(text), positions, drones)
    if intent == Intent.WHAT_IF:
        for clause in split_clauses(norm):
            parse_what_if(clause, ids, d, positions, box, done, text)
        d.what_if = _dedupe(d.what_if)
    elif intent == Intent.REALLOCATE:
        for clause in split_clauses(norm):
            if not parse_command(clause, ids, d, positions, box, done):
                d.warnings.append(f"not understood, ignored: {plain(clause)!r}")
    elif intent == Intent.MEMORY:
        d.memory = parse_memory(text)
    elif intent in (Intent.QUESTION, Intent.UNKNOWN):
        # a question naming ids is checked too: "where is D9?" should say D9 is unknown
        for written in tokens(norm, "@"):
            ids.target(written)
        for written in tokens(norm, "#"):
            ids.drone(written)
        for written in tokens(norm, "$"):
            ids.sam(written)
    constraints = {"moves": d.moves, "forbidden": d.forbidden, "required_targets": d.required}
    errors = list(ids.errors)
    if intent == Intent.REALLOCATE and not (d.moves or d.forbidden or d.required) and not errors:
        errors.append("no constraint could be read from the command")
    return {
        "intent": str(intent),
        "confidence": 0.5 if intent == Intent.UNKNOWN else (0.6 if errors else 0.9),
        "rules_hit": d.rules_hit,
        "constraints": constraints,
        "regions": d.regions,
        "what_if": d.what_if,
        "memory": d.memory,
        "policy": {
            "allow_solver": intent in (Intent.REALLOCATE, Intent.REPLAN, Intent.WHAT_IF),
            "explanation_only": intent in (Intent.QUESTION, Intent.UNKNOWN),
            "apply_to_live_plan": intent in (Intent.REALLOCATE, Intent.REPLAN),
            "plan_on_copy": intent == Intent.WHAT_IF,
        },
        "errors": errors,
        "warnings": _dedupe(d.warnings),
        "text": text,
    }


def _positions(known_targets: Mapping[str, Any] | Iterable[Any]) -> dict[str, Point | None]:
    out: dict[str, Point | None] = {}
    if isinstance(known_targets, Mapping):
        for k, v in known_targets.items():
            out[str(k)] = None if v is None else (float(v[0]), float(v[1]))
        return out
    for item in known_targets:
        if isinstance(item, str):
            out[item] = None
        else:
            out[str(item.id)] = (float(item.x), float(item.y))
    return out


def _points(items: Iterable[Any]) -> list[Point]:
    pts = []
    for item in items:
        if isinstance(item, (tuple, list)):
            pts.append((float(item[0]), float(item[1])))
        else:
            pts.append((float(item.x), float(item.y)))
    return pts


def _dedupe(items: list[_T]) -> list[_T]:
    out: list[_T] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out
