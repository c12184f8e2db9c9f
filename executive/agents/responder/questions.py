"""Classifying the operator's question: which topic the rules answer covers, about which ids.

``topic_of(question, state)`` decides, in this order: fuel margins (a margin or a fuel
comparison that names no drone), why named targets are excluded or skipped, the named
drones, points, the known SAMs, the targets not collected (or not assigned), the named
targets, else the mission's status. Drones ("D2", "drone 2", "uav 2") and targets ("T5",
"target 5") are matched case-insensitively and kept only when the state knows them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from executive.words.state import MissionState

__all__ = [
    "Drones",
    "Margins",
    "OpenTargets",
    "Points",
    "Sams",
    "Status",
    "Topic",
    "Why",
    "drones_in",
    "targets_in",
    "topic_of",
]


@dataclass(frozen=True)
class Margins:
    """Which drone has the most (or the ``least``) fuel margin, and all the others'."""

    least: bool = False


@dataclass(frozen=True)
class Why:
    """Why each of ``targets`` is excluded, planned, collected or left out."""

    targets: tuple[str, ...]


@dataclass(frozen=True)
class Drones:
    """Where each of ``drones`` is, what it does, its fuel and its points."""

    drones: tuple[str, ...]


@dataclass(frozen=True)
class Points:
    """Points collected, planned and possible."""


@dataclass(frozen=True)
class Sams:
    """The known SAMs and the targets inside them."""


@dataclass(frozen=True)
class OpenTargets:
    """The targets not collected yet (or, ``only_unassigned``, on no drone's route)."""

    only_unassigned: bool = False


@dataclass(frozen=True)
class Status:
    """The mission's status: tick, mode, each drone, points, exclusions, losses."""


Topic = Margins | Why | Drones | Points | Sams | OpenTargets | Status

_TARGET_ID = re.compile(r"\b(?:target\s*#?\s*)?(T\d+)\b", re.I)
_DRONE_ID = re.compile(r"\b(?:(?:drone|uav)\s*#?\s*d?(\d+)|d(\d+))\b", re.I)

# over the lower-cased question
_MARGINS = re.compile(
    r"\bmargin|\b(?:most|least|more|less|lowest|highest|enough)\b.*\bfuel\b|"
    r"\bfuel\b.*\b(?:most|least|left|remaining|lowest|highest)\b"
)
_LEAST = re.compile(r"\b(?:least|less|lowest|smallest|worst)\b")
_WHY = re.compile(r"\bwhy\b|\bexcluded?\b|\bskipped\b")
_POINTS = re.compile(r"\bpoints?\b|\bscore\b")
_SAMS = re.compile(r"\bsams?\b|\bthreats?\b|\bmissiles?\b|air\s+defen")
_OPEN = re.compile(
    r"not\s+(?:yet\s+)?(?:collected|visited|assigned|planned)|uncollected|"
    r"unassigned|unvisited|unplanned|\bmissed\b|\bopen\b|\bleft\b|remaining\s+"
    r"targets|\bwhich\s+targets\b|\bexcluded\b"
)
_UNASSIGNED = re.compile(r"unassigned|not\s+assigned|unplanned|not\s+planned")


def drones_in(question: str, state: MissionState) -> list[str]:
    """The ids of the state's drones that ``question`` names, in order, once each."""
    found: list[str] = []
    for m in _DRONE_ID.finditer(question):
        d = state.drone(f"D{m.group(1) or m.group(2)}") or state.drone(m.group(1) or m.group(2))
        if d is not None and d.id not in found:
            found.append(d.id)
    return found


def targets_in(question: str, state: MissionState) -> list[str]:
    """The ids of the state's targets that ``question`` names, in order, once each."""
    known = {t.lower(): t for t in state.target_ids}
    out: list[str] = []
    for m in _TARGET_ID.finditer(question):
        t = known.get(m.group(1).lower())
        if t is not None and t not in out:
            out.append(t)
    return out


def topic_of(question: str, state: MissionState) -> Topic:
    """The topic of ``question`` (see the module docstring for the order of the rules)."""
    text = question or ""
    q = text.lower()
    drones = drones_in(text, state)
    targets = targets_in(text, state)
    if _MARGINS.search(q) and not drones:
        return Margins(least=bool(_LEAST.search(q)))
    if _WHY.search(q) and targets:
        return Why(tuple(targets))
    if drones:
        return Drones(tuple(drones))
    if _POINTS.search(q):
        return Points()
    if _SAMS.search(q):
        return Sams()
    if _OPEN.search(q):
        return OpenTargets(only_unassigned=bool(_UNASSIGNED.search(q)))
    if targets:
        return Why(tuple(targets))
    return Status()
