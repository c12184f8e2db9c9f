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

Modules, one idea each: ``ids`` (finding target, drone and SAM ids in words), ``regions``
(region names and the targets inside them), ``intent`` (classifying the text and each
clause), ``decision`` (the decision being read), ``constraints`` (a command clause into
moves, forbidden and required targets), ``what_if`` (a what-if clause into changes),
``memory`` (what to remember), ``decide`` (``coordinate``: the decision dict), ``hook``
(over a ``planner.model.Environment``, and the executive's hook).
"""

from __future__ import annotations

from executive.agents.coordinator.decide import coordinate
from executive.agents.coordinator.hook import coordinate_environment, make_coordinate
from executive.agents.coordinator.intent import Intent, classify
from executive.agents.coordinator.regions import REGIONS, region_box, region_targets

__all__ = [
    "REGIONS",
    "Intent",
    "classify",
    "coordinate",
    "coordinate_environment",
    "make_coordinate",
    "region_box",
    "region_targets",
]
