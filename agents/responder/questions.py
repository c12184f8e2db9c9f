"""Classifying the operator's question: which topic the rules answer covers, about which ids.

``topic_of(question, state)`` decides, in this order: a debugging question ("why is the
solver crashing?", the coordinator's debug intent), the order of two targets ("why did
D1 visit T3 before T5?"), fuel used (most / least / total / per drone), a comparison of
drones ("compare D1 and D2", "D1 vs D3"), fuel budgets, fuel margins (a margin or a fuel
comparison that names no drone), why a target went to a drone or a drone got nothing
("why did D2 get T5?", "why is D1 idle?"), why named targets are excluded or skipped, the
named drones, points, totals, the targets visited, the known SAMs, the targets not
collected (or not assigned), the named targets, else the mission's status. Drones ("D2",
"drone 2", "uav 2") and targets ("T5", "target 5") are matched case-insensitively and kept
only when the state knows them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.coordinator.intent import Intent, classify
from agents.words.state import MissionState

__all__ = [
    "Allocation",
    "Budgets",
    "Compare",
    "Debug",
    "Drones",
    "FuelLeft",
    "FuelUsed",
    "Home",
    "Margins",
    "OpenTargets",
    "Order",
    "Points",
    "Remaining",
    "Sams",
    "Status",
    "Topic",
    "Totals",
    "Visited",
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
    """Points collected, planned and possible (``rank``: "most" / "least" for "which drone
    has the most points", first; ``drones``: the named drones' collected and planned)."""

    rank: str | None = None
    drones: tuple[str, ...] = ()


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


@dataclass(frozen=True)
class Order:
    """Why ``first`` comes before ``second`` on a route (``drone``: the one the question
    names, whose premise is checked; None when it names none)."""

    first: str
    second: str
    drone: str | None = None


@dataclass(frozen=True)
class FuelUsed:
    """Fuel used per drone: which uses the ``most`` / ``least``, the ``total``, or ``each``
    (of ``drones`` when the question names some)."""

    which: str = "each"  # most | least | total | each
    drones: tuple[str, ...] = ()


@dataclass(frozen=True)
class FuelLeft:
    """Fuel LEFT in the tanks (not the margin): which drone has the ``most`` / ``least``
    (among ``drones`` when two or more are named), or ``each`` named drone's."""

    which: str = "each"  # most | least | each
    drones: tuple[str, ...] = ()


@dataclass(frozen=True)
class Remaining:
    """The path each of ``drones`` (all when none is named) still has to fly."""

    drones: tuple[str, ...] = ()


@dataclass(frozen=True)
class Home:
    """Which drones make it home (``negated``: which do NOT), with each one's margin."""

    negated: bool = False


@dataclass(frozen=True)
class Budgets:
    """Each drone's fuel budget, used, left and margin (of ``drones`` if some are named)."""

    drones: tuple[str, ...] = ()


@dataclass(frozen=True)
class Compare:
    """``drones`` side by side: fuel used, left, budget, margin, points, targets."""

    drones: tuple[str, ...]


@dataclass(frozen=True)
class Allocation:
    """Why ``target`` went to the drone it went to (``drone``: the one the question names),
    or, with no target, why ``drone`` has the targets it has (or none)."""

    target: str | None
    drone: str | None
    negated: bool = False  # "why was T5 NOT given to D1": no premise to check


@dataclass(frozen=True)
class Debug:
    """What went wrong in planning: failed or rejected rounds, agent failures, refusals."""


@dataclass(frozen=True)
class Totals:
    """The mission's totals: points, fuel used, targets visited and not."""


@dataclass(frozen=True)
class Visited:
    """The targets collected so far, by whom, in order (``rank``: "most" / "least" for
    "which drone collected the most targets", first)."""

    rank: str | None = None


Topic = (
    Margins
    | Why
    | Drones
    | Points
    | Sams
    | OpenTargets
    | Status
    | Order
    | FuelUsed
    | Budgets
    | Compare
    | Allocation
    | Totals
    | Visited
    | Debug
    | FuelLeft
    | Remaining
    | Home
)

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
_ORDER = re.compile(r"\b(?:before|after|then|first|order|sequence|earlier|later)\b")
_USED = re.compile(
    r"\b(?:uses?|used|using|burn(?:s|ed|t|ing)?|consum\w*|spen[dt]\w*|flew|flown|fly|"
    r"distance|km\s+flown)\b"
)
_FUEL = re.compile(r"\bfuel\b|\bkm\b|\bdistance\b|\bflew\b|\bflown\b|\bhow\s+far\b")
_MOST = re.compile(
    r"\b(?:most|more|highest|largest|biggest|greatest|max(?:imum)?|farthest|furthest|longest)\b"
)
_TOTAL = re.compile(r"\b(?:total|overall|altogether|in\s+all|combined|sum|whole\s+fleet)\b")
_COMPARE = re.compile(r"\bcompare\b|\bcomparison\b|\bvs\.?\b|\bversus\b|\bdifference\b")
_BUDGET = re.compile(r"\bbudgets?\b")
_ALLOC = re.compile(
    r"\b(?:get|got|gets|given|give|assigned|assign|allocated|allocate|allocation|"
    r"idle|nothing|no\s+targets?|unused|not\s+fly|didn'?t\s+fly|stay(?:ed)?|parked|"
    r"took|take|handled?)\b"
)
_TOTALS = re.compile(r"\btotals?\b|\bsummary\b|\bsummari[sz]e\b|\boverview\b")
_VISITED = re.compile(r"\b(?:visited|collected|covered|done|completed|captured)\b")
# fuel in the tanks now ("fuel left", "fuel remaining", "how much fuel does D1 have")
_FUEL_LEFT = re.compile(
    r"\bfuel\b.*\b(?:left|remaining|remains)\b|\b(?:left|remaining)\s+fuel\b|"
    r"\bhow\s+much\s+fuel\s+(?:does|do|did|has|have|is)\b|\bfuel\s+(?:level|state)\b"
)
# path still to fly ("how far does D2 still have to fly", "distance remaining")
_STILL_TO_FLY = re.compile(
    r"\bstill\b.*\bfly\b|\bleft\s+to\s+fly\b|\bremaining\s+(?:path|distance|route|km)\b|"
    r"\b(?:distance|km|path)\s+(?:left|remaining|to\s+go)\b|\bhow\s+far\s+to\s+go\b"
)
_HOME = re.compile(
    r"\b(?:make|makes|making|get|gets|getting|come|comes|coming|fly|flies)\s+(?:it\s+)?"
    r"(?:home|back)\b|\breturn\s+(?:home|to\s+base)|\breach\s+(?:home|base|its\s+base)\b"
)
_NEGATED = re.compile(r"\bnot\b|\bun\w+|\bn't\b|\bmissed\b|\bleft\b|\bremaining\b")


def _rank(q: str) -> str | None:
    """ "most" / "least" when ``q`` asks which drone ranks first, else None."""
    if not re.search(r"\b(?:which|what|who)\s+(?:drone|uav)\b", q):
        return None
    if _LEAST.search(q):
        return "least"
    return "most" if _MOST.search(q) else None


def _negated(q: str) -> bool:
    return bool(re.search(r"\bnot\b|n't\b|\bnever\b|\binstead\b", q))


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
    if classify(text) == Intent.DEBUG:
        return Debug()
    drones = drones_in(text, state)
    targets = targets_in(text, state)
    if len(targets) >= 2 and _ORDER.search(q):
        return Order(targets[0], targets[1], drones[0] if drones else None)
    if _HOME.search(q) and not targets:
        return Home(negated=_negated(q))
    if _STILL_TO_FLY.search(q) and "margin" not in q:
        return Remaining(tuple(drones))
    # fuel LEFT is not the margin (fuel left minus the path still to fly): asked apart
    if _FUEL_LEFT.search(q) and "margin" not in q and not _USED.search(q):
        if _TOTAL.search(q) and not drones:
            return FuelUsed("total")  # the fleet's fuel left is in the total's answer
        if _LEAST.search(q):
            return FuelLeft("least", tuple(drones))
        if _MOST.search(q) or (len(drones) >= 2 and (" or " in q or "which" in q)):
            return FuelLeft("most", tuple(drones))
        return FuelLeft("each", tuple(drones))
    if _FUEL.search(q) and _USED.search(q) and "margin" not in q:
        if _LEAST.search(q):
            which = "least"
        elif _MOST.search(q):
            which = "most"
        elif _TOTAL.search(q):
            which = "total"
        else:
            which = "each"
        return FuelUsed(which, tuple(drones))
    if (len(drones) >= 2 and (_COMPARE.search(q) or " or " in q or "which" in q)) or (
        _COMPARE.search(q) and not targets
    ):
        return Compare(tuple(drones or state.drones))
    if _BUDGET.search(q):
        return Budgets(tuple(drones))
    if _FUEL.search(q) and _TOTAL.search(q) and not drones and "margin" not in q:
        return FuelUsed("total")
    if _MARGINS.search(q) and not drones:
        return Margins(least=bool(_LEAST.search(q)))
    if "why" in q and _ALLOC.search(q) and (drones or targets) and "exclu" not in q:
        return Allocation(
            targets[0] if targets else None, drones[0] if drones else None, _negated(q)
        )
    if "why" in q and drones and targets:
        return Allocation(targets[0], drones[0], _negated(q))
    if _WHY.search(q) and targets:
        return Why(tuple(targets))
    if "why" in q and drones:
        return Allocation(None, drones[0])
    if drones and _POINTS.search(q) and not targets:
        return Points(None, tuple(drones))
    if drones:
        return Drones(tuple(drones))
    if _POINTS.search(q):
        return Points(_rank(q))
    if _TOTALS.search(q) or (_TOTAL.search(q) and not targets):
        return Totals()
    if _VISITED.search(q) and not _NEGATED.search(q):
        return Visited(_rank(q))
    if _SAMS.search(q):
        return Sams()
    if _OPEN.search(q):
        return OpenTargets(only_unassigned=bool(_UNASSIGNED.search(q)))
    if targets:
        return Why(tuple(targets))
    return Status()
