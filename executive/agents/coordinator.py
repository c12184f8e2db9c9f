"""The coordinator: a deterministic pre-pass over the operator's words (seed 000 §1).

No LLM here: token and pattern rules, so the same words always give the same decision.

``classify(text) -> Intent``
    ``what_if`` ("what if D1 had 300 fuel?", "suppose SAM2 were removed"), ``memory``
    ("remember that ...", "always ...", "never use greedy allocation", "I prefer ..."),
    ``question`` (ends with "?" or starts with what / which / where / why / how / is /
    tell / show / list ...), ``reallocate`` (a command naming targets or drones: move,
    assign, forbid, keep out of a region, require), ``replan`` (replan, optimise,
    recompute, cut, continue, solve ...), else ``unknown``. "Can you / please ..." before
    an order makes it an order, not a question.

``coordinate(text, known_targets, known_drones, *, known_sams, airports, collected) -> dict``
    The decision in the shape ``Executive._apply_words`` reads::

        {"intent": "reallocate", "confidence": 0.9, "rules_hit": [...],
         "constraints": {"moves": [{"target": "T5", "to_drone": "1"}],
                         "forbidden": {"2": ["T4"]}, "required_targets": ["T9"]},
         "regions": [{"drone": "2", "region": "north-east", "box": [...], "targets": [...]}],
         "what_if": [{"kind": "set_fuel", "drone": "1", "fuel": 300.0}, ...],
         "memory": {"kind": "note", "text": "..."} | None,
         "policy": {...}, "errors": [...], "warnings": [...], "text": "..."}

    Commands understood: "move T5 to D1", "transfer T3 from D1 to D2", "assign T3 and T7
    to drone 2", "D1 must visit T5" (moves); "D2 must not visit T4", "forbid T4 for D2",
    "don't let D2 visit T4", "keep D2 away from T4" (forbidden; with no drone named, for
    every drone); "keep D2 out of the north-east" (a region: forbidden targets for that
    drone, listed in ``regions``); "T9 is required", "make sure T9 is visited", "don't
    skip T9" (required). Several clauses join with "and", ";" or "then".

    Regions are relative to the bounding box of the known airports and targets: north /
    south / east / west are the halves beyond the box's middle line (a target on the line
    belongs to both), north-east etc. the quarters, centre the middle third on both axes.

    What-ifs: "what if D1 had 300 fuel?" (``set_fuel``; "50 more fuel" is a ``delta``),
    "what if D3 were lost?" (``lose_drone``), "what if T5 had priority 10?"
    (``set_priority``), "what if SAM2 were removed?" (``remove_sam``), "what if T5 were
    removed?" (``remove_target``), "what if T5 went to D1?" (``constraints``).

    Ids are matched case-insensitively ("d2", "drone 2", "target 5", "sam 2"); a drone id
    is returned in the scenario's spelling ("2" for "D2"). An id that is not known is an
    error naming it; it is never dropped silently. ``make_coordinate`` wraps this as the
    ``Executive(coordinate=...)`` hook, which applies nothing when there is an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from executive.agents.constraints import normalise_drone
from planner.model import drone_label

__all__ = ["Intent", "REGIONS", "classify", "coordinate", "coordinate_environment",
           "make_coordinate", "region_box", "region_targets"]


class Intent(StrEnum):
    QUESTION = "question"
    REALLOCATE = "reallocate"
    WHAT_IF = "what_if"
    REPLAN = "replan"
    MEMORY = "memory"
    UNKNOWN = "unknown"


REGIONS = ("north", "south", "east", "west", "north-east", "north-west", "south-east",
           "south-west", "centre")

# ----------------------------------------------------------------------------- ids

# Each reference becomes one token in a normalised clause: @T5 (target), #2 (drone as
# written, a number or a name), $SAM2 (SAM). Patterns first, then literal known ids.
_SAM_RE = re.compile(r"\bsam[\s_-]?(\d+)\b(?:'s)?", re.I)
_DRONE_RE = re.compile(r"\b(?:(?:drone|uav)s?\s*#?\s*d?(\d+)|d(\d+))\b(?:'s)?", re.I)
_TARGET_RE = re.compile(r"\b(?:targets?\s*#?\s*t?(\d+)|t(\d+))\b(?:'s)?", re.I)
_TOKEN_RE = re.compile(r"([@#$])(\S+?)(?=[\s,.;:!?)]|$)")


def _normalise(text: str, extra_targets: Iterable[str] = (), extra_drones: Iterable[str] = ()
               ) -> str:
    """The text with every id reference replaced by its token."""
    out = _SAM_RE.sub(lambda m: f" $SAM{m.group(1)} ", text)
    out = _DRONE_RE.sub(lambda m: f" #{m.group(1) or m.group(2)} ", out)
    out = _TARGET_RE.sub(lambda m: f" @T{m.group(1) or m.group(2)} ", out)
    # ids that follow no pattern (e.g. a target called "Bridge") when the mission has them
    for prefix, ids in (("@", extra_targets), ("#", extra_drones)):
        plain = sorted((i for i in ids if not re.fullmatch(r"[TtDd]?\d+", i)), key=len,
                       reverse=True)
        if plain:
            rx = re.compile(r"(?<![@#$\w])(" + "|".join(map(re.escape, plain)) + r")\b", re.I)
            out = rx.sub(lambda m: f" {prefix}{m.group(1)} ", out)
    return re.sub(r"\s+", " ", out).strip()


def _tokens(clause: str, sigil: str) -> list[str]:
    return [m.group(2) for m in _TOKEN_RE.finditer(clause) if m.group(1) == sigil]


def _numbers(clause: str) -> list[float]:
    bare = _TOKEN_RE.sub(" ", clause)
    return [float(x) for x in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])", bare)]


class _Ids:
    """Resolves written ids against the mission's, collecting errors for unknown ones."""

    def __init__(self, targets: Iterable[str], drones: Iterable[str], sams: Iterable[str]):
        self.targets = {t.lower(): t for t in targets}
        self.drones = list(drones)
        self.sams = {s.lower(): s for s in sams}
        self.errors: list[str] = []

    def _unknown(self, what: str, written: str, known: list[str]) -> None:
        shown = ", ".join(known[:20]) + (" ..." if len(known) > 20 else "")
        msg = f"unknown {what} {written} (known: {shown or 'none'})"
        if msg not in self.errors:
            self.errors.append(msg)

    def target(self, written: str) -> str | None:
        found = self.targets.get(written.lower())
        if found is None:
            self._unknown("target", written, list(self.targets.values()))
        return found

    def drone(self, written: str) -> str | None:
        candidates = [written, f"D{written}"] if written.isdigit() else [written]
        for cand in candidates:
            found = normalise_drone(cand, self.drones)
            if found in self.drones:
                return found
            low = {d.lower(): d for d in self.drones}
            if cand.lower() in low:
                return low[cand.lower()]
        self._unknown("drone", drone_label(written) if written.isdigit() else written,
                      [drone_label(d) for d in self.drones])
        return None

    def sam(self, written: str) -> str | None:
        found = self.sams.get(written.lower())
        if found is None:
            self._unknown("SAM", written, list(self.sams.values()))
        return found


# ----------------------------------------------------------------------------- classify

_WHAT_IF_RE = re.compile(r"^\s*(?:and\s+)?(?:what\s+(?:if|would\s+happen\s+if|happens\s+if|about\s+if)"
                         r"|suppose|supposing|imagine|hypothetically|assume|assuming|say)\b", re.I)
_WHAT_IF_ANY = re.compile(r"\bwhat\s+(?:if|would\s+happen\s+if|happens\s+if)\b", re.I)
_POLITE_RE = re.compile(r"^\s*(?:please\s+|pls\s+|kindly\s+)?(?:(?:can|could|would|will)\s+you\s+"
                        r"(?:please\s+)?)?", re.I)
_QUESTION_START = re.compile(
    r"^(?:what|which|where|why|how|who|whom|whose|when|is|are|was|were|does|do|did|has|have|"
    r"had|can|could|will|would|should|shall|tell|show|list|explain|describe|give\s+me|"
    r"summari[sz]e|status|report)\b", re.I)
_MEMORY_START = re.compile(
    r"^(?:remember|note|fyi|keep\s+in\s+mind|from\s+now\s+on|always|never|i\s+prefer|"
    r"we\s+prefer|prefer|i'd\s+rather|we'd\s+rather|warning|warn|beware|caution|avoid|"
    r"instruction|preference|memo)\b", re.I)
_REPLAN_RE = re.compile(r"\b(?:replan|re-plan|optimi[sz]e|re-?optimi[sz]e|recompute|re-compute|"
                        r"cut|checkpoint|continue|solve|generate|rerun|re-run|plan\s+again|"
                        r"new\s+plan|plan\s+the\s+(?:mission|rest|remainder)|maximi[sz]e)\b", re.I)


def _imperative(text: str) -> str:
    """The text without a polite "can you / please" in front."""
    return _POLITE_RE.sub("", text, count=1).strip()


def classify(text: str) -> Intent:
    """The intent of ``text`` (see the module docstring for the rules, in order)."""
    return _classify(text)[0]


def _classify(text: str) -> tuple[Intent, list[str]]:
    raw = (text or "").strip()
    if not raw:
        return Intent.UNKNOWN, ["empty"]
    if _WHAT_IF_RE.search(raw) or _WHAT_IF_ANY.search(raw):
        return Intent.WHAT_IF, ["what_if_token"]
    bare = _imperative(raw)
    polite = bare != raw
    norm = _normalise(bare)
    has_ids = bool(_TOKEN_RE.search(norm))
    if re.match(r"^(?:remember|note|fyi|keep\s+in\s+mind|memo)\b", bare, re.I):
        return Intent.MEMORY, ["memory_token"]
    if _MEMORY_START.match(bare) and not has_ids:
        return Intent.MEMORY, ["memory_token"]
    question = raw.endswith("?") or bool(_QUESTION_START.match(bare))
    if question and not (polite and not re.match(r"^(?:tell|show|list|explain|describe|give\s+me)\b",
                                                  bare, re.I)):
        return Intent.QUESTION, ["question_token"]
    clauses = [_clause_kind(c) for c in _split(norm)]
    if any(kind in ("move", "forbid", "require") for kind, _ in clauses):
        return Intent.REALLOCATE, [hit for _, hit in clauses if hit]
    if _REPLAN_RE.search(bare):
        return Intent.REPLAN, ["replan_token"]
    if question:
        return Intent.QUESTION, ["question_token"]
    return Intent.UNKNOWN, ["no_rule"]


# ----------------------------------------------------------------------------- clauses

_SPLIT_RE = re.compile(
    r"\s*(?:;|\n|(?<!\d)\.(?!\d)|,?\s+(?:and\s+)?then\s+|,?\s+also\s+|,?\s+and\s+(?=(?:also\s+)?"
    r"(?:move|assign|reassign|re-assign|transfer|give|allocate|keep|forbid|ban|make\s+sure|"
    r"ensure|require|don'?t|do\s+not|never|let|#\S+|\$\S+)))\s*", re.I)
_SKIP_NEG = re.compile(r"\b(?:don'?t|do\s+not|never|must\s+not|mustn'?t|should\s+not|"
                       r"shouldn'?t)\s+(?:skip|miss|drop|leave\s+out|forget)\b", re.I)
_NEG_RE = re.compile(r"\b(?:forbid|forbidden|forbids|ban|banned|bans|exclude|excluded|never|not|"
                     r"no|avoid|avoids|prohibit|prohibited|disallow|disallowed)\b|n't\b|"
                     r"\bkeep\b.*\b(?:out|away)\b|\bstay\s+(?:out|away|clear)\b|\baway\s+from\b"
                     r"|\bout\s+of\b", re.I)
_REQUIRED_RE = re.compile(r"\b(?:required|require|requires|requirement|make\s+sure|ensure|"
                          r"must\s+be\s+(?:visited|covered|collected|included)|mandatory|"
                          r"no\s+matter\s+what|at\s+all\s+costs)\b", re.I)
_MOVE_RE = re.compile(r"\b(?:move|moves|assign|assigns|reassign|re-assign|transfer|give|gives|"
                      r"allocate|reallocate|hand|send|take|takes|visit|visits|cover|covers|"
                      r"collect|collects|handle|handles|get|gets|go\s+to|goes\s+to|went\s+to|"
                      r"fly\s+to|moved|assigned|given|handled|taken|visited|covered|"
                      r"reassigned|transferred)\b", re.I)
_REGION_RE = re.compile(
    r"\b(?:(north|south)[\s-]*(east|west)(?:ern)?|(north|south)(east|west)(?:ern)?|"
    r"(north|south|east|west)(?:ern)?|(cent(?:re|er|ral)|middle))\b", re.I)


def _split(norm: str) -> list[str]:
    return [c for c in _SPLIT_RE.split(norm) if c and c.strip()]


def _regions(clause: str) -> list[str]:
    found = []
    for m in _REGION_RE.finditer(clause):
        if m.group(1) or m.group(3):
            ns, ew = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            name = f"{ns.lower()}-{ew.lower()}"
        elif m.group(5):
            name = m.group(5).lower()
        else:
            name = "centre"
        if name not in found:
            found.append(name)
    return found


def _clause_kind(clause: str) -> tuple[str | None, str | None]:
    """(move | forbid | require | None, the rule that decided) from a normalised clause."""
    targets, drones = _tokens(clause, "@"), _tokens(clause, "#")
    if not targets and not drones:
        return None, None
    if _SKIP_NEG.search(clause):
        return ("move", "required_by_drone") if drones and targets else ("require", "dont_skip")
    unnegated = re.sub(r"\bno\s+matter\s+what\b", "", clause, flags=re.I)
    if _NEG_RE.search(unnegated) and (targets or (drones and _regions(clause))):
        return "forbid", "region" if _regions(clause) and drones else "negation"
    if _REQUIRED_RE.search(clause) and targets:
        return ("move", "required_by_drone") if drones else ("require", "required_token")
    if _MOVE_RE.search(clause) and targets and drones:
        return "move", "move_token"
    return None, None


# ----------------------------------------------------------------------------- regions


@dataclass(frozen=True)
class _Box:
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def mid(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2


def region_box(points: Iterable[tuple[float, float]]) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1): the bounding box regions are relative to."""
    pts = list(points)
    if not pts:
        return (0.0, 0.0, 0.0, 0.0)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return (min(xs), min(ys), max(xs), max(ys))


def _in_region(region: str, x: float, y: float, box: _Box) -> bool:
    mx, my = box.mid
    if region == "centre":
        w, h = box.x1 - box.x0, box.y1 - box.y0
        return (box.x0 + w / 3 <= x <= box.x0 + 2 * w / 3
                and box.y0 + h / 3 <= y <= box.y0 + 2 * h / 3)
    ok = True
    for part in region.split("-"):
        ok &= {"north": y >= my, "south": y <= my, "east": x >= mx, "west": x <= mx}[part]
    return ok


def region_targets(region: str, targets: Mapping[str, tuple[float, float] | None],
                   box: tuple[float, float, float, float]) -> list[str]:
    """The targets (id -> position) inside ``region`` of ``box``, in the given order."""
    b = _Box(*box)
    return [t for t, p in targets.items() if p is not None and _in_region(region, p[0], p[1], b)]


# ----------------------------------------------------------------------------- parsing


@dataclass
class _Decision:
    intent: Intent
    rules_hit: list[str]
    moves: list[dict[str, str]] = field(default_factory=list)
    forbidden: dict[str, list[str]] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    regions: list[dict[str, Any]] = field(default_factory=list)
    what_if: list[dict[str, Any]] = field(default_factory=list)
    memory: dict[str, str] | None = None
    warnings: list[str] = field(default_factory=list)

    def forbid(self, drone: str, targets: Iterable[str]) -> None:
        have = self.forbidden.setdefault(drone, [])
        have += [t for t in targets if t not in have]

    def move(self, target: str, drone: str) -> None:
        self.moves = [m for m in self.moves if m["target"] != target]  # the last word wins
        self.moves.append({"target": target, "to_drone": drone})


def _positions(known_targets) -> dict[str, tuple[float, float] | None]:
    if isinstance(known_targets, Mapping):
        out = {}
        for k, v in known_targets.items():
            out[str(k)] = None if v is None else (float(v[0]), float(v[1]))
        return out
    out = {}
    for item in known_targets:
        if isinstance(item, str):
            out[item] = None
        else:
            out[str(item.id)] = (float(item.x), float(item.y))
    return out


def _points(items) -> list[tuple[float, float]]:
    pts = []
    for item in items:
        if isinstance(item, (tuple, list)):
            pts.append((float(item[0]), float(item[1])))
        else:
            pts.append((float(item.x), float(item.y)))
    return pts


def _parse_command(clause: str, ids: _Ids, d: _Decision, positions, box, collected) -> bool:
    """Adds what ``clause`` orders to ``d``; False when it orders nothing."""
    kind, hit = _clause_kind(clause)
    if kind is None:
        return False
    d.rules_hit.append(f"{kind}:{hit}")
    drones = [x for x in (ids.drone(t) for t in _tokens(clause, "#")) if x is not None]
    targets = [x for x in (ids.target(t) for t in _tokens(clause, "@")) if x is not None]
    for t in targets:
        if t in collected:
            d.warnings.append(f"{t} is already collected")
    if kind == "require":
        d.required += [t for t in targets if t not in d.required]
        return True
    if kind == "forbid":
        written = _tokens(clause, "#")
        named = drones if written else ids.drones  # an unknown drone forbids nothing
        if not written:
            d.warnings.append("no drone named: " + ", ".join(targets) + " forbidden for every drone")
        regions = _regions(clause) if written else []
        for drone in named:
            d.forbid(drone, targets)
            for region in regions:
                inside = [t for t in region_targets(region, positions, box) if t not in collected]
                if not any(p is not None for p in positions.values()):
                    ids.errors.append(f"region {region}: target positions are not known")
                    continue
                d.forbid(drone, inside)
                d.regions.append({"drone": drone, "region": region,
                                  "box": [round(v, 3) for v in box], "targets": inside})
                if not inside:
                    d.warnings.append(f"no open target lies in the {region}; nothing to forbid"
                                      f" for {drone_label(drone)}")
        return True
    # move: targets before "to #d" go to d; "from #d" names the drone they leave
    pending: list[str] = []
    paired = False
    words = clause.split()
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("@"):
            t = ids.targets.get(w[1:].lower())
            if t is not None:
                pending.append(t)
        elif w.lower() == "to" and i + 1 < len(words) and words[i + 1].startswith("#"):
            drone = ids.drone(words[i + 1][1:])
            if drone and pending:
                for t in pending:
                    d.move(t, drone)
                paired = True
            pending = []
            i += 1
        i += 1
    if pending:
        if len(drones) == 1 and not paired:
            for t in pending:
                d.move(t, drones[0])
        elif drones:
            ids.errors.append(f"which drone should take {', '.join(pending)}? name it after 'to'")
    return True


_FUEL_RE = re.compile(r"\b(?:fuel|budget|km|range|endurance|gas)\b", re.I)
_LOST_RE = re.compile(r"\b(?:lost|lose|loses|losing|destroyed|shot\s+down|disabled|down|gone|"
                      r"crash(?:ed|es)?|fail(?:ed|s)?|unavailable|grounded|without|out\s+of\s+"
                      r"action|killed|dead|broke\s+down|removed)\b", re.I)
_PRIORITY_RE = re.compile(r"\b(?:priority|priorities|worth|points?|value|score)\b", re.I)
_REMOVED_RE = re.compile(r"\b(?:removed|remove|gone|destroyed|didn'?t\s+exist|did\s+not\s+exist|"
                         r"not\s+there|disappeared|absent|taken\s+out|neutrali[sz]ed|without|no|"
                         r"off|deleted|switched\s+off|dismantled)\b", re.I)
_MORE_RE = re.compile(r"\b(?:more|extra|additional|increase[ds]?\s+by|plus|added)\b", re.I)
_LESS_RE = re.compile(r"\b(?:less|fewer|decrease[ds]?\s+by|minus|reduced?\s+by|cut\s+by)\b", re.I)


def _parse_what_if(clause: str, ids: _Ids, d: _Decision, positions, box, collected,
                   original: str = "") -> None:
    body = _WHAT_IF_RE.sub("", clause, count=1)
    body = _WHAT_IF_ANY.sub("", body).strip()
    sams, drones, targets = _tokens(body, "$"), _tokens(body, "#"), _tokens(body, "@")
    numbers = _numbers(body)
    if sams and _REMOVED_RE.search(body):
        for written in sams:
            sam = ids.sam(written)
            if sam is not None:
                d.what_if.append({"kind": "remove_sam", "sam": sam})
        d.rules_hit.append("what_if:remove_sam")
        return
    if drones and _FUEL_RE.search(body) and numbers:
        drone = ids.drone(drones[0])
        value = numbers[-1]
        if drone is not None:
            if _MORE_RE.search(body):
                d.what_if.append({"kind": "set_fuel", "drone": drone, "delta": abs(value)})
            elif _LESS_RE.search(body):
                d.what_if.append({"kind": "set_fuel", "drone": drone, "delta": -abs(value)})
            else:
                d.what_if.append({"kind": "set_fuel", "drone": drone, "fuel": abs(value)})
        d.rules_hit.append("what_if:set_fuel")
        return
    if drones and not targets and _LOST_RE.search(body):
        for written in drones:
            drone = ids.drone(written)
            if drone is not None:
                d.what_if.append({"kind": "lose_drone", "drone": drone})
        d.rules_hit.append("what_if:lose_drone")
        return
    if targets and not drones and _PRIORITY_RE.search(body) and numbers:
        target = ids.target(targets[0])
        if target is not None:
            d.what_if.append({"kind": "set_priority", "target": target,
                              "priority": abs(numbers[-1])})
        d.rules_hit.append("what_if:set_priority")
        return
    if targets and not drones and _REMOVED_RE.search(body):
        for written in targets:
            target = ids.target(written)
            if target is not None:
                d.what_if.append({"kind": "remove_target", "target": target})
        d.rules_hit.append("what_if:remove_target")
        return
    sub = _Decision(Intent.REALLOCATE, [])
    if _parse_command(body, ids, sub, positions, box, collected) and (
            sub.moves or sub.forbidden or sub.required):
        d.what_if.append({"kind": "constraints", "constraints": {
            "moves": sub.moves, "forbidden": sub.forbidden, "required_targets": sub.required}})
        d.regions += sub.regions
        d.warnings += sub.warnings
        d.rules_hit.append("what_if:constraints")
        return
    if not ids.errors:
        shown = (original or clause).strip()
        ids.errors.append(f"what if: cannot tell what to change in {shown!r}; say e.g."
                          " 'what if D1 had 300 fuel?', 'what if D3 were lost?', 'what if T5"
                          " had priority 10?', 'what if SAM2 were removed?'")


_MEMORY_KIND_RE = re.compile(
    r"^(?:please\s+)?(?:remember|note|memo)(?:\s+(?:this|that|it|as))*\s*(?:an?\s+|as\s+an?\s+)?"
    r"(instruction|note|preference|warning)\s*[:\-]?\s*(.*)$", re.I | re.S)
_MEMORY_STRIP = re.compile(r"^(?:please\s+)?(?:remember(?:\s+that)?|note(?:\s+that)?|fyi|"
                           r"keep\s+in\s+mind(?:\s+that)?|memo|instruction|preference|warning)"
                           r"\s*[:,\-]?\s*", re.I)


def _parse_memory(text: str) -> dict[str, str]:
    raw = text.strip()
    m = _MEMORY_KIND_RE.match(raw)
    if m:
        return {"kind": m.group(1).lower(), "text": m.group(2).strip() or raw}
    low = raw.lower()
    if re.match(r"^(?:please\s+)?(?:warning|warn|beware|caution|avoid|never)\b", low):
        kind = "warning"
    elif re.match(r"^(?:please\s+)?(?:i\s+prefer|we\s+prefer|prefer|preference|i'd\s+rather|"
                  r"we'd\s+rather)\b", low):
        kind = "preference"
    elif re.match(r"^(?:please\s+)?(?:always|from\s+now\s+on|instruction|remember\s+to)\b", low):
        kind = "instruction"
    else:
        kind = "note"
    stripped = raw if kind == "instruction" and low.startswith("remember to") else \
        _MEMORY_STRIP.sub("", raw, count=1)
    return {"kind": kind, "text": stripped.strip() or raw}


# ----------------------------------------------------------------------------- entry points


def coordinate(text: str, known_targets, known_drones: Iterable[str], *,
               known_sams: Iterable[str] = (), airports: Iterable = (),
               collected: Iterable[str] = ()) -> dict[str, Any]:
    """The coordinator's decision for ``text`` (see the module docstring).

    ``known_targets``: id -> (x, y), objects with ``id``, ``x``, ``y``, or bare ids (then a
    region cannot be resolved); ``airports`` (objects or (x, y)) widen the region box;
    ``collected`` targets are never forbidden by a region and draw a warning when named.
    """
    text = text or ""
    positions = _positions(known_targets)
    drones = [str(d) for d in known_drones]
    sam_ids = [str(getattr(s, "id", s)) for s in known_sams]
    ids = _Ids(positions, drones, sam_ids)
    done = set(collected)
    box = region_box([p for p in positions.values() if p is not None] + _points(airports))
    intent, rules = _classify(text)
    d = _Decision(intent, list(rules))
    norm = _normalise(_imperative(text), positions, drones)
    if intent == Intent.WHAT_IF:
        for clause in _split(norm):
            _parse_what_if(clause, ids, d, positions, box, done, text)
        d.what_if = _dedupe(d.what_if)
    elif intent == Intent.REALLOCATE:
        for clause in _split(norm):
            if not _parse_command(clause, ids, d, positions, box, done):
                d.warnings.append(f"not understood, ignored: {_plain(clause)!r}")
    elif intent == Intent.MEMORY:
        d.memory = _parse_memory(text)
    elif intent in (Intent.QUESTION, Intent.UNKNOWN):
        # a question naming ids is checked too: "where is D9?" should say D9 is unknown
        for written in _tokens(norm, "@"):
            ids.target(written)
        for written in _tokens(norm, "#"):
            ids.drone(written)
        for written in _tokens(norm, "$"):
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


def _plain(clause: str) -> str:
    """A normalised clause back in the operator's id spelling."""
    return _TOKEN_RE.sub(lambda m: drone_label(m.group(2)) if m.group(1) == "#" else m.group(2),
                         clause)


def _dedupe(items: list) -> list:
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def coordinate_environment(text: str, environment, drone_ids: Iterable[str],
                           collected: Iterable[str] = ()) -> dict[str, Any]:
    """``coordinate`` over a ``planner.model.Environment`` (its targets, SAMs, airports)."""
    return coordinate(text, environment.targets, drone_ids,
                      known_sams=[s.id for s in environment.sams],
                      airports=environment.airports, collected=collected)


def make_coordinate(environment: Callable[[], Any], drone_ids: Iterable[str],
                    collected: Callable[[], Iterable[str]] = lambda: ()
                    ) -> Callable[[str], dict[str, Any]]:
    """The ``Executive(coordinate=...)`` hook: words -> decision over the environment known
    at call time. A decision with errors carries no constraints (nothing half-applied)."""
    drones = [str(d) for d in drone_ids]

    def hook(text: str) -> dict[str, Any]:
        decision = coordinate_environment(text, environment(), drones, collected())
        if decision["errors"]:
            decision["constraints"] = {"moves": [], "forbidden": {}, "required_targets": []}
        return decision

    return hook
