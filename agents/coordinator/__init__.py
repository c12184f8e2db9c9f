"""The coordinator: a deterministic pre-pass over the operator's words (seed 000 §1).

No LLM here: token and pattern rules, so the same words always give the same decision.

``classify(text) -> Intent``
    ``what_if`` ("what if D1 had 300 fuel?", "suppose SAM2 were removed"), ``debug``
    ("why is the solver crashing?"), ``memory`` ("remember that ...", "always ...", "never
    use greedy allocation", "I prefer ..."), ``explain`` ("why did D1 visit T3 before T5?",
    "explain ..."), ``question`` (ends with "?" or starts with what / which / where / how /
    is / tell / show / list / compare ...), ``reallocate`` (a command naming targets or
    drones: move, assign, forbid, keep out of a region, require), ``replan`` (cut,
    checkpoint, continue, replan ...), ``plan`` (plan, optimise, solve, compute, generate
    ...), else ``unknown``. "Can you / please ..." before an order makes it an order.

``coordinate(text, known_targets, known_drones, *, known_sams, airports, collected,
environment, fleet, in_force, preferences) -> dict``
    The JSON of a ``CoordinatorDecision`` (``schema``: seed 000 B.5 plus what the executive
    reads)::

        {"intent": "reallocate", "confidence": 0.95, "rules_hit": [...],
         "policy": {"allow_solver": true, "allocation_strategy": "efficient",
                    "post_opt": {...}, "drone_contracts": {"1": {...}}, ...},
         "constraints": {"moves": [{"target": "T5", "to_drone": "1"}],
                         "forbidden": {"2": ["T4"]}, "required_targets": ["T9"],
                         "forbidden_targets": [], "fixed_endpoints": {"1": "A1"}},
         "explanation_only": false, "warnings": [...], "errors": [...],
         "trace_events": [{"agent": "coordinator", "stage": "intent", ...}],
         "refused": [...], "replaced": [...],
         "regions": [{"drone": "2", "region": "north-east", "box": [...], "targets": [...]}],
         "what_if": [{"kind": "set_fuel", "drone": "1", "fuel": 300.0}, ...],
         "memory": {"kind": "note", "text": "..."} | None, "text": "..."}

    With the fleet (``fleet``: sensors, fuel left, position, ends) a move the drone cannot
    carry out (its sensors cannot see the target, the target is inside a known SAM or
    collected, the drone cannot reach it and an end with its fuel) is refused at once: an
    error with the reason, the move dropped. With ``in_force`` (the constraints already
    applied) a command that replaces an earlier order says so in ``warnings``/``replaced``.

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
    error naming it; it is never dropped silently. ``verdict_of`` turns a decision into the
    ``CoordinatorVerdict`` the executive applies, which applies nothing when there is an
    error (``agents.words.command.coordinate_live`` is the executive's ``Coordinate``).

Modules, one idea each: ``schema`` (the decision's pydantic model), ``fleet`` (what is
known of each drone, and the checks that refuse an impossible command), ``ids`` (finding target, drone and SAM ids in words), ``regions``
(region names and the targets inside them), ``intent`` (classifying the text and each
clause), ``decision`` (the decision being read), ``constraints`` (a command clause into
moves, forbidden and required targets), ``what_if`` (a what-if clause into changes),
``memory`` (what to remember), ``decide`` (``coordinate``: the decision dict), ``hook``
(over an environment, a scenario or a mission state, and the verdict the executive applies).
"""

from __future__ import annotations

from agents.coordinator.decide import coordinate
from agents.coordinator.fleet import (
    DroneFacts,
    fleet_from_scenario,
    fleet_from_state,
)
from agents.coordinator.hook import (
    coordinate_environment,
    coordinate_scenario,
    coordinate_state,
    only_drones,
    verdict_of,
)
from agents.coordinator.intent import Intent, classify
from agents.coordinator.regions import REGIONS, region_box, region_targets
from agents.coordinator.schema import CoordinatorDecision, planner_constraints

__all__ = [
    "REGIONS",
    "CoordinatorDecision",
    "DroneFacts",
    "Intent",
    "classify",
    "coordinate",
    "coordinate_environment",
    "coordinate_scenario",
    "coordinate_state",
    "fleet_from_scenario",
    "fleet_from_state",
    "only_drones",
    "planner_constraints",
    "region_box",
    "region_targets",
    "verdict_of",
]
