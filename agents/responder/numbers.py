"""Checking a model's answer against the state: every number it states must be one the state
supports, and a number it ties to a drone's quantity must be that drone's.

``supported(state, rules, whatif, question)`` lists the facts an answer may cite: per drone
its fuel left, budget, fuel used, remaining path, margin, points, position and counts; per
target its priority and position; per SAM and airport its position (and range); the
fleet's totals and counts; the tick and time; every number of the rules answer to the same
question (distances, detours ..., cited or in its text); a what-if's figures; the numbers in
the question itself; the numbers the responder's tools answered; and the few figures
derived from those (the difference of two drones' same quantity, a quantity as a
percentage of a budget or of the points possible).

``number_problems(output, facts, state)`` returns what is wrong, one phrase each: a number
in the text or in ``numbers`` that no fact supports, or a drone quantity stated with
another value than the state's ("D1 has 999 km margin", "D1 fuel margin" = 50.5 when D1's
margin is 200.0). A number matches a fact when it equals the fact rounded as written (as
many decimals as it shows), or lies within 0.5 % of it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from agents.responder.role import ResponderOutput
from agents.words.state import DroneState, MissionState

__all__ = ["Fact", "number_problems", "numbers_in", "supported"]

REL_TOL = 0.005  # a number within 0.5 % of a fact matches it

# a number not glued to a letter (T12, D3, SAM2, x2 are ids, not numbers)
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?![A-Za-z0-9_])")
_QUANTITY_WORDS = {
    "margin": "margin",
    "fuel margin": "margin",
    "left": "fuel",
    "fuel left": "fuel",
    "remaining fuel": "fuel",
    "used": "used",
    "fuel used": "used",
    "budget": "budget",
    "fuel budget": "budget",
    "remaining path": "remaining",
    "points": "points",
    "burned": "used",
    "burnt": "used",
    "flew": "used",
    "flown": "used",
    "consumed": "used",
}
# a drone and its quantity are tied only across a few linking words, so that "what if D3
# were lost: 64 points" ties nothing to D3
_LINK = (
    r"(?:(?:has|had|have|keeps|kept|retains|with|is|was|the|most|least|highest|lowest|"
    r"largest|smallest|best|worst|a|an|its|only|about|exactly|remaining|current|still|"
    r"collected|scored|earned|gathered|gets|got)\s+){0,4}"
)
# "D1 has 999 km margin", "D3: 50.5 km margin", "D3 collected 35 points"
_TIED_AFTER = re.compile(
    r"\b(D\d+)(?:'s)?\s*:?\s*" + _LINK + r"(\d+(?:\.\d+)?)\s*(?:km\s+)?(?:of\s+)?"
    r"(fuel margin|margin|fuel left|left|fuel used|used|fuel budget|budget|remaining path|"
    r"points)\b",
    re.I,
)
# "D1's margin is 200.0 km", "D1 has the most fuel margin: 200.0", "D1 fuel budget: 200"
_TIED_BEFORE = re.compile(
    r"\b(D\d+)(?:'s)?\s+" + _LINK + r"(fuel margin|margin|fuel left|remaining fuel|"
    r"fuel used|fuel budget|budget|remaining path|points)\s*(?:is|was|of|=|:)?\s*"
    r"(\d+(?:\.\d+)?)",
    re.I,
)
# "D3 used 180 km", "D2 flew 165.3 km" (not "D3 used 10 km more than D1")
_TIED_VERB = re.compile(
    r"\b(D\d+)\s+(?:has\s+|had\s+)?(used|burned|burnt|flew|flown|consumed)\s+"
    r"(\d+(?:\.\d+)?)(?![\d.])(?!\s*(?:km\s+)?(?:of\s+fuel\s+)?(?:more|less|fewer|extra))",
    re.I,
)
_LABEL = re.compile(
    r"^(D\d+)\s+(fuel margin|fuel left|fuel used|fuel budget|remaining path|points)$", re.I
)


@dataclass(frozen=True)
class Fact:
    """One number the state supports, and what it is."""

    label: str
    value: float


def _drone_quantities(d: DroneState) -> dict[str, float]:
    """A drone's quantities by the keys ``_QUANTITY_WORDS`` map to."""
    out = {
        "fuel": d.fuel,
        "budget": d.budget,
        "used": max(0.0, d.budget - d.fuel),
        "points": d.points,
    }
    if d.remaining_km is not None:
        out["remaining"] = d.remaining_km
    if d.margin_km is not None:
        out["margin"] = d.margin_km
    return out


def supported(
    state: MissionState,
    rules: Mapping[str, Any] | None = None,
    whatif: Any | None = None,
    question: str = "",
    tool_data: Iterable[Any] = (),
) -> list[Fact]:
    """The facts an answer about ``state`` may cite (see the module docstring); with
    ``tool_data``, every number the responder's tools answered (read from the same state)."""
    facts: list[Fact] = []

    def add(label: str, value: float | None) -> None:
        if value is not None and math.isfinite(float(value)):
            facts.append(Fact(label, float(value)))

    env = state.environment
    families: dict[str, list[float]] = {}
    for d in state.drones.values():
        q = _drone_quantities(d)
        for key, value in q.items():
            add(f"{d.label} {key}", value)
            families.setdefault(key, []).append(value)
            if key in ("fuel", "used", "margin", "remaining") and d.budget > 0:
                add(f"{d.label} {key} % of budget", 100.0 * value / d.budget)
        add(f"{d.label} used once flown", q["used"] + (d.remaining_km or 0.0))
        add(f"{d.label} x", d.x)
        add(f"{d.label} y", d.y)
        add(f"{d.label} heading", math.degrees(d.heading) % 360)
        add(f"{d.label} targets collected", len(state.collected_by(d.id)))
        add(f"{d.label} targets planned", len(d.planned_targets))
        add(f"{d.label} points planned", sum(state.priority(t) for t in d.planned_targets))
    for key, values in families.items():
        add(f"{key} in total", sum(values))
        for a, b in combinations(values, 2):
            add(f"{key} difference", abs(a - b))
    for t in env.targets:
        add(f"{t.id} priority", t.priority)
        add(f"{t.id} x", t.x)
        add(f"{t.id} y", t.y)
    for s in env.sams:
        add(f"{s.id} x", s.x)
        add(f"{s.id} y", s.y)
        add(f"{s.id} range", s.range)
    for ap in env.airports:
        add(f"{ap.id} x", ap.x)
        add(f"{ap.id} y", ap.y)
    possible = sum(t.priority for t in env.targets if t.id not in state.excluded)
    for label, value in (
        ("points collected", state.collected_points),
        ("points planned in total", state.planned_points),
        ("points still to collect", state.points_to_collect),
        ("points possible", possible),
        ("points of all targets", sum(t.priority for t in env.targets)),
        ("drones", len(state.drones)),
        ("targets", len(env.targets)),
        ("targets collected", len(state.collected)),
        ("targets open", len(state.open_targets)),
        ("targets excluded", len(state.excluded)),
        ("targets unassigned", len(state.unassigned)),
        ("targets planned", len(state.planned_by)),
        ("SAMs", len(env.sams)),
        ("airports", len(env.airports)),
        ("tick", state.tick),
        ("time", state.time),
        ("fuel reserve", state.fuel_reserve),
    ):
        add(label, value)
    if possible > 0:
        add("points collected % of possible", 100.0 * state.collected_points / possible)
        add("points planned % of possible", 100.0 * state.planned_points / possible)
    everything = sum(t.priority for t in env.targets)
    if everything > 0:
        add("points collected % of all", 100.0 * state.collected_points / everything)
        add("points planned % of all", 100.0 * state.planned_points / everything)
    if env.targets:
        add("targets collected %", 100.0 * len(state.collected) / len(env.targets))
        add("targets planned %", 100.0 * len(state.planned_by) / len(env.targets))
    for n in (rules or {}).get("numbers") or []:
        add(str(n.get("label")), n.get("value"))
    for value in numbers_in(str((rules or {}).get("answer") or "")):
        add("in the rules answer", value)
    if whatif is not None:
        for value in _walk(whatif.model_dump(mode="json")):
            add("what-if figure", value)
    for value in numbers_in(question):
        add("in the question", value)
    for value in _walk(list(tool_data)):
        add("a tool's answer", value)
    return facts


def _walk(obj: Any) -> Iterable[float]:
    """Every number in a JSON-like value."""
    if isinstance(obj, bool):
        return
    if isinstance(obj, (int, float)):
        yield float(obj)
    elif isinstance(obj, Mapping):
        for v in obj.values():
            yield from _walk(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _walk(v)


def numbers_in(text: str) -> list[float]:
    """The numbers written in ``text`` (not the digits of ids such as T12 or SAM2)."""
    return [float(m.group(0).replace(",", "")) for m in _NUMBER.finditer(text or "")]


def _decimals(written: str) -> int:
    return len(written.split(".", 1)[1]) if "." in written else 0


def _matches(value: float, fact: float, decimals: int | None) -> bool:
    """``value`` is ``fact`` as written (rounded to ``decimals``) or within REL_TOL of it."""
    if decimals is not None and abs(value - fact) <= 0.5 * 10.0**-decimals + 1e-9:
        return True
    return abs(value - fact) <= max(REL_TOL * abs(fact), 1e-6)


def _supported(value: float, facts: list[Fact], decimals: int | None) -> bool:
    return any(_matches(abs(value), abs(f.value), decimals) for f in facts)


def _tied(state: MissionState, drone: str, word: str) -> tuple[str, float] | None:
    """(quantity, the state's value) of ``word`` for drone ``drone`` ("D1"), if known."""
    d = state.drone(drone.upper())
    key = _QUANTITY_WORDS.get(" ".join(word.lower().split()))
    if d is None or key is None:
        return None
    value = _drone_quantities(d).get(key)
    return None if value is None else (key, value)


# "T10 (priority 8", "T10, priority 8": a target's priority is its own
_PRIORITY = re.compile(r"\b(T\d+)\b\s*[(,:]?\s*priority\s+(\d+(?:\.\d+)?)", re.I)
# a clause about one drone: "D1 (parked): fuel used 0.0 of 200.0 km, left 200.0, margin ..."
_SEGMENT_HEAD = re.compile(r"^\s*(?:others:\s*)?(D\d+)\b", re.I)
_SEGMENT_SPLIT = re.compile(r";|\.\s+|\.$")
_ANY_DRONE = re.compile(r"\bD\d+\b")
# keyword then value ("left 200.0", "margin 14.7 km"); not a difference ("... 10 km more")
_KEY_VALUE = re.compile(
    r"\b(fuel used|used|fuel left|left|margin|fuel budget|budget|remaining path|fuel)\s+"
    r"(?:of\s+)?(\d+(?:\.\d+)?)(?![\d.])(?!\s*(?:km\s+)?(?:more|less|fewer|extra))"
    r"(?:\s+of\s+(?:its\s+)?(\d+(?:\.\d+)?))?",
    re.I,
)
# value then keyword ("0 points", "14.7 km margin")
_VALUE_KEY = re.compile(
    r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:km\s+)?(?:of\s+)?(margin|points|fuel left|left|used)\b",
    re.I,
)


def _segment_problems(text: str, state: MissionState) -> list[str]:
    """Drone figures stated in a clause that starts with the drone ("D1 (parked): fuel used
    0.0 of 200.0 km, left 200.0, margin 200.0 km; ...") must be that drone's. A clause is
    read only up to the next drone it names."""
    problems: list[str] = []
    for segment in _SEGMENT_SPLIT.split(text):
        head = _SEGMENT_HEAD.match(segment)
        if head is None:
            continue
        rest = segment[head.end() :]
        other = _ANY_DRONE.search(rest)
        if other is not None:
            rest = rest[: other.start()]
        drone = head.group(1)
        pairs = []
        for m in _KEY_VALUE.finditer(rest):
            word = "fuel left" if m.group(1).lower() == "fuel" else m.group(1)
            pairs.append((word, m.group(2)))
            if m.group(3):  # "used X of B" / "fuel X of B": B is the budget
                pairs.append(("budget", m.group(3)))
        pairs += [(m.group(2), m.group(1)) for m in _VALUE_KEY.finditer(rest)]
        for word, written in pairs:
            tied = _tied(state, drone, word)
            if tied is not None and not _matches(float(written), tied[1], _decimals(written)):
                problems.append(f"{drone.upper()} {tied[0]} {written} (the state: {tied[1]:.1f})")
    return problems


def number_problems(
    output: ResponderOutput, facts: list[Fact], state: MissionState, *, hypothetical: bool = False
) -> list[str]:
    """What in ``output`` the state does not support (see the module docstring).

    ``hypothetical``: the answer is about a what-if's plan, whose per-drone figures are not
    the state's: only that each number is supported (by the what-if's figures) is checked.
    """
    problems: list[str] = []
    for m in _NUMBER.finditer(output.answer):
        written = m.group(0).replace(",", "")
        if not _supported(float(written), facts, _decimals(written)):
            problems.append(f"{written} in the answer")
    if hypothetical:
        for n in output.numbers:
            if not _supported(n.value, facts, None) and not _supported(n.value, facts, 1):
                problems.append(f"{n.label} = {n.value:g}")
        return list(dict.fromkeys(problems))
    tied_patterns = ((_TIED_AFTER, 1, 2, 3), (_TIED_BEFORE, 1, 3, 2), (_TIED_VERB, 1, 3, 2))
    for pattern, drone_at, value_at, word_at in tied_patterns:
        for m in pattern.finditer(output.answer):
            tied = _tied(state, m.group(drone_at), m.group(word_at))
            written = m.group(value_at)
            if tied is not None and not _matches(float(written), tied[1], _decimals(written)):
                problems.append(
                    f"{m.group(drone_at).upper()} {tied[0]} {written} (the state: {tied[1]:.1f})"
                )
    problems += _segment_problems(output.answer, state)
    for m in _PRIORITY.finditer(output.answer):
        target = state.environment.target(m.group(1).upper())
        if target is not None and not _matches(float(m.group(2)), target.priority, 0):
            problems.append(f"{target.id} priority {m.group(2)} (the state: {target.priority:g})")
    for n in output.numbers:
        label = _LABEL.match(n.label.strip())
        tied = _tied(state, label.group(1), label.group(2)) if label else None
        if tied is not None:
            if not _matches(n.value, tied[1], None) and not _matches(n.value, tied[1], 1):
                problems.append(f"{n.label} = {n.value:g} (the state: {tied[1]:.1f})")
        elif not _supported(n.value, facts, None) and not _supported(n.value, facts, 1):
            problems.append(f"{n.label} = {n.value:g}")
    return list(dict.fromkeys(problems))
