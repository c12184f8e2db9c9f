"""Orders over the whole plan, read deterministically from a normalised clause: priority
thresholds, a fuel reserve, keeping the plan as it is, and swaps.

"only targets with priority 7 or higher", "priority at least 7", "D1 may not visit priority 4
targets", "no targets below priority 5" (``PRIORITY_RE``: the priorities a drone, or every
drone, may visit; the targets outside are forbidden pairs); "keep 20 km in reserve", "D2
keeps 30 km of fuel in reserve" (``RESERVE_RE``); "do not recompute routes", "keep the
allocation", "only reorder" (``KEEP_RE``: answered from the plan as it is); "swap T3 and T5"
(each goes to the other's drone in the plan).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Set
from typing import Any

from agents.coordinator.decision import Decision
from agents.coordinator.ids import Ids, tokens
from planner.model import drone_label

__all__ = [
    "KEEP_RE",
    "PRIORITY_RE",
    "RESERVE_RE",
    "SWAP_RE",
    "keep_of",
    "parse_priority",
    "parse_reserve",
    "parse_swap",
    "priority_range",
]

_N = r"(\d+(?:\.\d+)?)"
PRIORITY_RE = re.compile(r"\bpriority\b|\bpriorities\b|\bp\d+\b", re.I)
_MIN = [
    re.compile(
        rf"\bpriority\s+(?:of\s+)?{_N}\s*(?:\+|or\s+(?:higher|above|more|greater|better))", re.I
    ),
    re.compile(rf"\bpriority\s*(?:>=|≥|of\s+at\s+least|at\s+least|no\s+less\s+than)\s*{_N}", re.I),
    re.compile(rf"\bat\s+least\s+priority\s+{_N}", re.I),
]
_MIN_STRICT = [
    re.compile(
        rf"\bpriority\s*(?:>|above|over|greater\s+than|higher\s+than|more\s+than)\s*{_N}", re.I
    ),
]
_MAX = [
    re.compile(rf"\bpriority\s+(?:of\s+)?{_N}\s*or\s+(?:lower|below|less|fewer)", re.I),
    re.compile(rf"\bpriority\s*(?:<=|≤|of\s+at\s+most|at\s+most|no\s+more\s+than)\s*{_N}", re.I),
]
_MAX_STRICT = [
    re.compile(rf"\bpriority\s*(?:<|below|under|less\s+than|lower\s+than)\s*{_N}", re.I),
    re.compile(rf"\bbelow\s+priority\s+{_N}", re.I),
]
_EQ = [
    re.compile(rf"\bpriority[\s-]+{_N}\b", re.I),
    re.compile(rf"\bp{_N}\b", re.I),
]
_NEGATED = re.compile(
    r"\b(?:not|never|no|don'?t|avoid|skip|forbid|forbidden|exclude|excluding|without|except|"
    r"ignore|ignoring|drop|dropping|leave\s+out)\b"
    r"|n't\b",
    re.I,
)
RESERVE_RE = re.compile(
    rf"(?:{_N}\s*(?:km|kilomet(?:er|re)s?)?\s*(?:of\s+fuel\s+)?(?:in|as|for)\s+(?:a\s+)?reserve"
    rf"|reserve\s+(?:of\s+)?{_N}\s*(?:km|kilomet(?:er|re)s?)?"
    rf"|{_N}\s*(?:km|kilomet(?:er|re)s?)\s+(?:of\s+)?(?:fuel\s+)?(?:reserve|spare|left\s+over|margin))",
    re.I,
)
KEEP_RE = re.compile(
    r"\b(?:(?:do\s+not|don'?t|never|without|no)\s+(?:re-?compute|re-?plan|re-?calculate|change|"
    r"re-?optimi[sz]e|touch)(?:\s+(?:the|any))?\s+(?:routes?|plan|allocation|assignments?)"
    r"|(?:do\s+not|don'?t|without)\s+re-?(?:plan|allocate|assign)(?:ning|ing)?\b"
    r"|keep\s+(?:the\s+)?(?:current\s+|existing\s+|same\s+|present\s+)?"
    r"(?P<what>routes?|allocation|assignments?|plan)\b"
    r"|(?P<reorder>only\s+re-?order|re-?order\s+only|just\s+re-?order))",
    re.I,
)
SWAP_RE = re.compile(r"\b(?:swap|switch|exchange|trade)\b", re.I)


def keep_of(text: str) -> str | None:
    """``"routes"`` ("do not recompute routes", "keep the routes"), ``"allocation"`` ("keep
    the allocation", "only reorder") or None."""
    m = KEEP_RE.search(text)
    if m is None:
        return None
    what = (m.group("what") or "").lower()
    if m.group("reorder") or what.startswith(("allocation", "assignment")):
        return "allocation"
    return "routes"


def priority_range(clause: str) -> tuple[float | None, float | None, list[float]] | None:
    """(low, high, excluded) the clause's priority phrase names as its set, or None."""
    for rx in _MIN:
        if m := rx.search(clause):
            return float(m.group(1)), None, []
    for rx in _MIN_STRICT:
        if m := rx.search(clause):
            return float(m.group(1)), None, [float(m.group(1))]
    for rx in _MAX:
        if m := rx.search(clause):
            return None, float(m.group(1)), []
    for rx in _MAX_STRICT:
        if m := rx.search(clause):
            return None, float(m.group(1)), [float(m.group(1))]
    for rx in _EQ:
        if m := rx.search(clause):
            v = float(m.group(1))
            return v, v, []
    return None


def parse_priority(
    clause: str,
    ids: Ids,
    d: Decision,
    priorities: Mapping[str, float],
    collected: Set[str],
) -> bool:
    """A priority threshold in ``clause`` into ``d`` (a rule, and the forbidden pairs it
    amounts to over the known targets); False when the clause names none."""
    if not PRIORITY_RE.search(clause):
        return False
    found = priority_range(clause)
    if found is None:
        return False
    low, high, strict = found
    negated = bool(
        _NEGATED.search(re.sub(r"\bno\s+(?:less|more)\s+than\b", "", clause, flags=re.I))
    )
    if negated:  # the phrase names what is forbidden: allowed is the rest
        if low is not None and high is not None and low == high:
            rule: dict[str, Any] = {"low": None, "high": None, "excluded": [low]}
        elif low is not None:  # "not priority 7 or higher": below 7 only
            rule = {"low": None, "high": low, "excluded": [] if strict else [low]}
            if strict:  # "not above 7": up to 7
                rule = {"low": None, "high": low, "excluded": []}
        else:  # "not priority 3 or lower": above 3 only
            assert high is not None
            rule = {"low": high, "high": None, "excluded": [] if strict else [high]}
    else:
        rule = {"low": low, "high": high, "excluded": strict}
    written = tokens(clause, "#")
    drones = [x for x in (ids.drone(t) for t in written) if x is not None]
    scope: list[str | None] = list(drones) if written else [None]
    for drone in scope:

        def allowed(p: float) -> bool:
            return (
                (rule["low"] is None or p >= rule["low"] - 1e-9)
                and (rule["high"] is None or p <= rule["high"] + 1e-9)
                and not any(abs(p - x) < 1e-9 for x in rule["excluded"])
            )

        out = sorted(
            (t for t, p in priorities.items() if not allowed(p) and t not in collected),
            key=lambda t: (len(t), t),
        )
        who = drone_label(drone) if drone else "every drone"
        d.priority_rules.append(
            {**rule, "drone": drone, "targets": out, "text": f"{_describe(rule)} for {who}"}
        )
        for dr in [drone] if drone else ids.drones:
            d.forbid(dr, out)
            for t in out:
                if drone is None:
                    d.unrequire(t, f"{_describe(rule)} for every drone")
        if not out:
            d.warnings.append(f"{_describe(rule)} for {who}: no open target is outside it")
    d.rules_hit.append("priority:threshold")
    return True


def _describe(rule: Mapping[str, Any]) -> str:
    low, high, excluded = rule["low"], rule["high"], rule["excluded"]
    parts = []
    if low is not None:
        parts.append(f"priority >= {low:g}")
    if high is not None:
        parts.append(f"priority <= {high:g}")
    parts += [f"priority != {x:g}" for x in excluded]
    return "only " + " and ".join(parts) if parts else "any priority"


def parse_reserve(clause: str, ids: Ids, d: Decision) -> bool:
    """A fuel reserve in ``clause`` ("keep 20 km in reserve") into ``d``; False if none."""
    m = RESERVE_RE.search(clause)
    if m is None:
        return False
    km = float(next(g for g in m.groups() if g is not None))
    written = tokens(clause, "#")
    drones = [x for x in (ids.drone(t) for t in written) if x is not None]
    for drone in drones if written else ids.drones:
        before = d.fuel_reserve.get(drone)
        if before is not None and before != km:  # the last word wins, and says so
            d.overridden.append(
                (
                    "",
                    f"keep {before:g} km in reserve for {drone_label(drone)}",
                    f"keep {km:g} km in reserve for {drone_label(drone)}",
                )
            )
        d.fuel_reserve[drone] = km
    d.rules_hit.append("reserve:km")
    return True


def parse_swap(clause: str, ids: Ids, d: Decision) -> bool:
    """ "swap T3 and T5": each goes to the drone the plan gives the other; False if the
    clause is no swap. Without a plan the swap is an error saying so."""
    if not SWAP_RE.search(clause):
        return False
    targets = [x for x in (ids.target(t) for t in tokens(clause, "@")) if x is not None]
    if len(targets) != 2:
        ids.errors.append("a swap names two targets: 'swap T3 and T5'")
        return True
    a, b = targets
    da, db = d.planned.get(a), d.planned.get(b)
    if da is None or db is None:
        missing = ", ".join(t for t, x in ((a, da), (b, db)) if x is None)
        ids.errors.append(f"cannot swap {a} and {b}: {missing} in no drone's plan")
        return True
    d.sources[a], d.sources[b] = da, db
    d.move(a, db)
    d.move(b, da)
    d.rules_hit.append("swap:targets")
    return True
