"""The coordinator's decision: the operator's words read against what the mission knows.

``coordinate(text, known_targets, known_drones, ...)`` classifies the words
(``intent``), reads each clause of a command (``constraints``), of a what-if
(``what_if``) or a memory (``memory``), checks every id a question names, and returns the
decision in the shape ``Executive._apply_words`` reads (see the package docstring). An id
the mission does not know is an error naming it, never dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from agents.coordinator.constraints import parse_command
from agents.coordinator.decision import Decision
from agents.coordinator.fleet import DroneFacts, check_orders, contracts
from agents.coordinator.ids import Ids, normalise, plain, tokens
from agents.coordinator.intent import (
    Intent,
    classify_with_rules,
    imperative,
    split_clauses,
)
from agents.coordinator.memory import parse_memory
from agents.coordinator.orders import keep_of
from agents.coordinator.regions import Point, region_box
from agents.coordinator.schema import (
    STRATEGIES,
    Constraints,
    CoordinatorDecision,
    DecisionPolicy,
    MoveOrder,
    PostOpt,
    PriorityRule,
    Refusal,
    Replacement,
    TraceEvent,
)
from agents.coordinator.what_if import parse_what_if
from planner.model import Environment, drone_label

__all__ = ["coordinate"]

_T = TypeVar("_T")


def coordinate(
    text: str,
    known_targets: Mapping[str, Any] | Iterable[Any],
    known_drones: Iterable[str],
    *,
    known_sams: Iterable[Any] = (),
    airports: Iterable[Any] = (),
    collected: Iterable[str] | Mapping[str, str] = (),
    environment: Environment | None = None,
    fleet: Mapping[str, DroneFacts] | None = None,
    in_force: Mapping[str, Any] | None = None,
    preferences: Mapping[str, Any] | None = None,
    planned: Mapping[str, str] | None = None,
) -> CoordinatorDecision:
    """The coordinator's decision for ``text`` (see the package docstring).

    ``known_targets``: id -> (x, y), objects with ``id``, ``x``, ``y``, or bare ids (then a
    region cannot be resolved); ``known_sams``: ids or objects with ``id``; ``airports``
    (objects or (x, y)) widen the region box; ``collected`` targets (or target -> drone) are
    never forbidden by a region and cannot be moved or required. With ``environment`` and
    ``fleet`` every move and requirement is checked (sensor, SAM exclusion, fuel) and an
    impossible one refused; ``in_force`` (the operator's constraints already applied) lets a
    command say which earlier order it replaces; ``preferences`` (the seed's
    ``allocation_strategy``, ``crossing_removal``, ``trajectory_swap``, ``insert_unvisited``,
    ``solver_mode``) set the policy, the words' "greedy allocation" overriding them;
    ``planned`` (target -> the drone the plan gives it) lets a move's premise be checked
    ("transfer T3 from D1 to D2" when D2 has T3 draws a warning saying where T3 is).
    """
    text = text or ""
    positions = _positions(known_targets)
    drones = [str(d) for d in known_drones]
    sam_ids = [str(getattr(s, "id", s)) for s in known_sams]
    ids = Ids(positions, drones, sam_ids)
    done = set(collected)
    box = region_box([p for p in positions.values() if p is not None] + _points(airports))
    intent, rules = classify_with_rules(text)
    d = Decision(intent, list(rules), planned=dict(planned or {}))
    priorities = _priorities(known_targets)
    events = [_event("intent", "intent_classified", intent=str(intent), rules=list(rules))]
    norm = normalise(imperative(text), positions, drones)
    if intent == Intent.WHAT_IF:
        for clause in split_clauses(norm):
            parse_what_if(clause, ids, d, positions, box, done, text)
        d.what_if = _dedupe(d.what_if)
        events.append(_event("parse", "what_if_parsed", changes=list(d.what_if)))
    elif intent in (Intent.REALLOCATE, Intent.PLAN, Intent.REPLAN):
        # a plan request carries its orders too: "plan the mission without T4"
        for clause in split_clauses(norm):
            read = parse_command(clause, ids, d, positions, box, done, priorities)
            if not read and intent == Intent.REALLOCATE:
                d.warnings.append(f"not understood, ignored: {plain(clause)!r}")
        d.keep = keep_of(norm)
        if d.keep is not None:
            d.rules_hit.append(f"keep:{d.keep}")
    elif intent == Intent.MEMORY:
        d.memory = parse_memory(text)
    else:
        # a question naming ids is checked too: "where is D9?" should say D9 is unknown
        for written in tokens(norm, "@"):
            ids.target(written)
        for written in tokens(norm, "#"):
            ids.drone(written)
        for written in tokens(norm, "$"):
            ids.sam(written)
    for target, before, after in d.replaced:
        d.warnings.append(
            f"move {target} to {drone_label(after)} replaces move {target} to"
            f" {drone_label(before)} (the last order wins)"
        )
    replaced = [
        Replacement(
            target=t, before=f"move {t} to {drone_label(b)}", after=f"move {t} to {drone_label(a)}"
        )
        for t, b, a in d.replaced
    ]
    refused: list[Refusal] = []
    if environment is not None and fleet is not None and intent in _PLAN_FAMILY:
        refused = check_orders(d, fleet, environment, collected)
        for refusal in refused:
            events.append(_event("check", "command_refused", **refusal.model_dump()))
    if in_force:
        replaced += _replacements(d, in_force)
        d.warnings += [
            f"{r.after} replaces the earlier {r.before}" for r in replaced[len(d.replaced) :]
        ]
    for t, before, after in d.overridden:
        d.warnings.append(f"{after} replaces {before} (the last order wins)")
        replaced.append(Replacement(target=t, before=before, after=after))
    for r in replaced:
        events.append(_event("check", "order_replaced", **r.model_dump()))
    if planned is not None:
        for note in _premises(d, planned):
            d.warnings.append(note)
            events.append(_event("check", "premise_checked", note=note))
    errors = list(ids.errors)
    errors += [f"cannot {x.command}: {x.detail}" for x in refused]
    ordered = d.moves or d.forbidden or d.required or d.fuel_reserve or d.priority_rules
    if intent == Intent.REALLOCATE and not ordered and not errors and not refused:
        errors.append("no constraint could be read from the command")
    constraints = Constraints(
        moves=[MoveOrder(**m) for m in d.moves],
        forbidden=d.forbidden,
        required_targets=d.required,
        forbidden_targets=_for_everyone(d.forbidden, fleet or dict.fromkeys(drones)),
        fixed_endpoints={
            f.id: f.ends[0] for f in (fleet or {}).values() if len(f.ends) == 1 and f.available
        },
        fuel_reserve=d.fuel_reserve,
        priority_rules=[PriorityRule.model_validate(r) for r in d.priority_rules],
        keep=d.keep,
    )
    events.append(
        _event(
            "parse",
            "constraints_extracted",
            moves=len(d.moves),
            forbidden=sum(len(v) for v in d.forbidden.values()),
            required=len(d.required),
        )
    )
    policy = _policy(intent, d, text, preferences, fleet, rules_hit=d.rules_hit)
    events.append(
        _event(
            "policy",
            "policy_set",
            allow_solver=policy.allow_solver,
            allocation_strategy=policy.allocation_strategy,
            explanation_only=policy.explanation_only,
        )
    )
    decision = CoordinatorDecision(
        intent=intent,
        confidence=_confidence(intent, d.rules_hit, bool(ids.errors)),
        rules_hit=d.rules_hit,
        policy=policy,
        constraints=constraints,
        explanation_only=policy.explanation_only,
        warnings=_dedupe(d.warnings),
        errors=errors,
        trace_events=events,
        refused=refused,
        replaced=replaced,
        regions=d.regions,
        what_if=d.what_if,
        memory=d.memory,
        text=text,
    )
    return decision


_BASE_CONFIDENCE = {
    Intent.REALLOCATE: 0.95,
    Intent.WHAT_IF: 0.9,
    Intent.MEMORY: 0.9,
    Intent.DEBUG: 0.85,
    Intent.EXPLAIN: 0.85,
    Intent.QUESTION: 0.85,
    Intent.PLAN: 0.85,
    Intent.REPLAN: 0.85,
    Intent.UNKNOWN: 0.3,
}
_STRATEGY_RE = re.compile(r"\b(efficient|greedy|balanced|geographic|exclusive)\b", re.I)
# the operator asks for the whole plan again, not only the drones a move names
_FULL_REPLAN_RE = re.compile(
    r"\b(full|complete|whole|entire|global)\s+(re-?plan|re-?optimi[sz]ation|re-?allocation)"
    r"|\bre-?(plan|optimi[sz]e|allocate|solve)\s+(everything|every\s+drone|all\b|the\s+whole)"
    r"|\bfrom\s+scratch\b",
    re.I,
)


def _confidence(intent: Intent, rules_hit: list[str], id_errors: bool) -> float:
    """How sure the intent is: its rule's base, less for every other intent's tokens also
    present (an ambiguous request), at most 0.6 when the words name unknown ids."""
    base = _BASE_CONFIDENCE.get(intent, 0.5)
    ambiguous = sum(1 for r in rules_hit if r.startswith("also:"))
    value = max(0.4 if intent != Intent.UNKNOWN else 0.1, base - 0.15 * ambiguous)
    return round(min(value, 0.6) if id_errors else value, 2)


def _policy(
    intent: Intent,
    d: Decision,
    text: str,
    preferences: Mapping[str, Any] | None,
    fleet: Mapping[str, DroneFacts] | None,
    *,
    rules_hit: list[str],
) -> DecisionPolicy:
    prefs = dict(preferences or {})
    strategy = prefs.get("allocation_strategy") or "efficient"
    said = _STRATEGY_RE.search(text) if intent != Intent.MEMORY else None
    if said is not None:
        strategy = said.group(1).lower()
        rules_hit.append(f"strategy:{strategy}")
    if strategy not in STRATEGIES:  # the team search's own name, or an unknown one
        strategy = "efficient"
    solver = intent in (Intent.PLAN, Intent.REPLAN, Intent.REALLOCATE, Intent.WHAT_IF)
    explain = intent in (Intent.QUESTION, Intent.EXPLAIN, Intent.DEBUG, Intent.UNKNOWN)
    full = intent == Intent.REALLOCATE and _FULL_REPLAN_RE.search(text) is not None
    if full:
        rules_hit.append("full_replan")
    return DecisionPolicy(
        allow_solver=solver and d.keep is None,
        allocation_strategy=strategy,
        post_opt=PostOpt(
            crossing_removal=bool(prefs.get("crossing_removal", True)),
            trajectory_swap=bool(prefs.get("trajectory_swap", True)),
            insert_unvisited=bool(prefs.get("insert_unvisited", True)),
        ),
        solver_mode=prefs.get("solver_mode"),
        skip_allocation=not solver or d.keep is not None,
        # a move or swap on a plan: the drones it does not name keep their routes, unless
        # the operator asks for the whole plan again
        use_existing_allocation=(
            intent == Intent.REALLOCATE
            and not full
            and bool(d.planned)
            and bool(d.moves)
            and not (d.forbidden and any(d.forbidden.values()))
            and not d.required
            and not d.priority_rules
        ),
        allocation_modifications=[MoveOrder(**m) for m in d.moves],
        drone_contracts=contracts(fleet) if fleet else {},
        explanation_only=explain,
    )


def _replacements(d: Decision, in_force: Mapping[str, Any]) -> list[Replacement]:
    """The orders in force that the new command replaces: a target moved elsewhere, a move
    of a target now forbidden to that drone, a ban on a target now moved to that drone."""
    out = []
    moved = {str(m["target"]): str(m["to_drone"]) for m in in_force.get("moves") or []}
    banned = {str(k): set(v) for k, v in (in_force.get("forbidden") or {}).items()}
    for m in d.moves:
        t, to = m["target"], m["to_drone"]
        after = f"move {t} to {drone_label(to)}"
        if t in moved and moved[t] != to:
            out.append(
                Replacement(target=t, before=f"move {t} to {drone_label(moved[t])}", after=after)
            )
        if t in banned.get(to, set()):
            out.append(
                Replacement(target=t, before=f"forbid {t} for {drone_label(to)}", after=after)
            )
    for drone, targets in d.forbidden.items():
        for t in targets:
            if moved.get(t) == drone:
                out.append(
                    Replacement(
                        target=t,
                        before=f"move {t} to {drone_label(drone)}",
                        after=f"forbid {t} for {drone_label(drone)}",
                    )
                )
    return out


def _premises(d: Decision, planned: Mapping[str, str]) -> list[str]:
    """What the plan says against a move's premise: the target is not on the drone the words
    say it leaves, or is already on the drone it is moved to."""
    notes = []
    for m in d.moves:
        t, to = m["target"], m["to_drone"]
        holder = planned.get(t)
        where = f"on {drone_label(holder)}" if holder else "in no drone's plan"
        source = d.sources.get(t)
        if source is not None and holder != source:
            notes.append(f"{t} is not on {drone_label(source)}: the plan has it {where}")
        elif holder == to:
            notes.append(f"{t} is already on {drone_label(to)} in the plan")
    return notes


def _for_everyone(forbidden: Mapping[str, list[str]], drones: Iterable[str]) -> list[str]:
    """Targets forbidden for every drone."""
    sets = [set(forbidden.get(str(dr), ())) for dr in drones]
    if not sets:
        return []
    common = set.intersection(*sets)
    return sorted(common)


def _event(stage: str, event: str, **details: Any) -> TraceEvent:
    return TraceEvent(stage=stage, event=event, details=details)


_PLAN_FAMILY = (Intent.PLAN, Intent.REPLAN, Intent.REALLOCATE)


def _priorities(known_targets: Mapping[str, Any] | Iterable[Any]) -> dict[str, float]:
    """Target id -> priority, for the targets given as objects with one."""
    if isinstance(known_targets, Mapping):
        return {}
    return {
        str(t.id): float(t.priority)
        for t in known_targets
        if not isinstance(t, str) and getattr(t, "priority", None) is not None
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
