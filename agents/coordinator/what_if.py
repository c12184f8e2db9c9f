"""What-ifs in words: the changes a "what if ...?" asks to plan on a copy of the mission.

"what if D1 had 300 fuel?" (``set_fuel``; "50 more fuel" or "50 less fuel" is a ``delta``),
"what if D3 were lost?" (``lose_drone``), "what if T5 had priority 10?" (``set_priority``),
"what if SAM2 were removed?" (``remove_sam``), "what if T5 were removed?"
(``remove_target``), "what if T5 went to D1?" (``constraints``, read as a command). Nothing
here changes the live plan: ``agents.words.whatif`` plans the changes on a copy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Set

from agents.coordinator.constraints import parse_command
from agents.coordinator.decision import Decision
from agents.coordinator.ids import Ids, numbers, tokens
from agents.coordinator.intent import Intent, strip_what_if
from agents.coordinator.regions import Box, Point

__all__ = ["parse_what_if"]

_FUEL_RE = re.compile(r"\b(?:fuel|budget|km|range|endurance|gas)\b", re.I)
_LOST_RE = re.compile(
    r"\b(?:lost|lose|loses|losing|destroyed|shot\s+down|disabled|down|gone|"
    r"crash(?:ed|es)?|fail(?:ed|s)?|unavailable|grounded|without|out\s+of\s+"
    r"action|killed|dead|broke\s+down|removed)\b",
    re.I,
)
_PRIORITY_RE = re.compile(r"\b(?:priority|priorities|worth|points?|value|score)\b", re.I)
_REMOVED_RE = re.compile(
    r"\b(?:removed|remove|gone|destroyed|didn'?t\s+exist|did\s+not\s+exist|"
    r"not\s+there|disappeared|absent|taken\s+out|neutrali[sz]ed|without|no|"
    r"off|deleted|switched\s+off|dismantled)\b",
    re.I,
)
_MORE_RE = re.compile(r"\b(?:more|extra|additional|increase[ds]?\s+by|plus|added)\b", re.I)
_LESS_RE = re.compile(r"\b(?:less|fewer|decrease[ds]?\s+by|minus|reduced?\s+by|cut\s+by)\b", re.I)


def parse_what_if(
    clause: str,
    ids: Ids,
    d: Decision,
    positions: Mapping[str, Point | None],
    box: Box,
    collected: Set[str],
    original: str = "",
) -> None:
    """Adds the changes a what-if clause asks for to ``d.what_if`` (or an error to ``ids``).

    ``original`` is the operator's whole text, quoted in the error when nothing is understood.
    """
    body = strip_what_if(clause)
    sams, drones, targets = tokens(body, "$"), tokens(body, "#"), tokens(body, "@")
    values = numbers(body)
    if sams and _REMOVED_RE.search(body):
        for written in sams:
            sam = ids.sam(written)
            if sam is not None:
                d.what_if.append({"kind": "remove_sam", "sam": sam})
        d.rules_hit.append("what_if:remove_sam")
        return
    if drones and _FUEL_RE.search(body) and values:
        drone = ids.drone(drones[0])
        value = values[-1]
        if drone is not None:
            if _MORE_RE.search(body):
                d.what_if.append({"kind": "set_fuel", "drone": drone, "delta": abs(value)})
            elif _LESS_RE.search(body):
                d.what_if.append({"kind": "set_fuel", "drone": drone, "delta": -abs(value)})
            elif re.search(r"\bbudget\b", body, re.I):
                # "increase D1's fuel budget to 300": the budget, not the fuel left now
                d.what_if.append(
                    {"kind": "set_fuel", "drone": drone, "fuel": abs(value), "basis": "budget"}
                )
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
    if targets and not drones and _PRIORITY_RE.search(body) and values:
        target = ids.target(targets[0])
        if target is not None:
            d.what_if.append(
                {"kind": "set_priority", "target": target, "priority": abs(values[-1])}
            )
        d.rules_hit.append("what_if:set_priority")
        return
    if targets and not drones and _REMOVED_RE.search(body):
        for written in targets:
            target = ids.target(written)
            if target is not None:
                d.what_if.append({"kind": "remove_target", "target": target})
        d.rules_hit.append("what_if:remove_target")
        return
    sub = Decision(Intent.REALLOCATE, [])
    if parse_command(body, ids, sub, positions, box, collected) and (
        sub.moves or sub.forbidden or sub.required
    ):
        d.what_if.append(
            {
                "kind": "constraints",
                "constraints": {
                    "moves": sub.moves,
                    "forbidden": sub.forbidden,
                    "required_targets": sub.required,
                },
            }
        )
        d.regions += sub.regions
        d.warnings += sub.warnings
        d.rules_hit.append("what_if:constraints")
        return
    if not ids.errors:
        shown = (original or clause).strip()
        ids.errors.append(
            f"what if: cannot tell what to change in {shown!r}; say e.g."
            " 'what if D1 had 300 fuel?', 'what if D3 were lost?', 'what if T5"
            " had priority 10?', 'what if SAM2 were removed?'"
        )
