"""The planning round's agents: strategist, allocator, critic (seed 000 §4, Appendix A).

For each role: the system prompt (the seed's A.2 / A.3 / A.5, adapted to a REPLAN of the
remainder from checkpoints), a pydantic model (``extra="forbid"``) that parses the agent's
structured output, the tool whose input is that output (its JSON Schema generated from the
model, so an engine with tool use answers in exactly the shape the model parses), and the
deterministic answer the ``rules`` engine gives for the same input (also the fallback). The
builders are pure functions of planner values; the round (``agents.planning.round``)
injects the hard constraints and the memories into the system prompt and the mission context
into the user prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from agents.engines.base import ToolSpec
from planner.allocation import STRATEGIES
from planner.constraints import OperatorConstraints, describe_constraints
from planner.metrics import analyze_solution_geometry, compute_solution_metrics
from planner.mission import Mission
from planner.model import Solution, drone_label

__all__ = [
    "ALLOCATOR_PROMPT",
    "ALLOCATOR_TOOL",
    "CRITIC_PROMPT",
    "CRITIC_TOOL",
    "STRATEGIST_PROMPT",
    "STRATEGIST_TOOL",
    "AllocatorOutput",
    "CriticOutput",
    "ExcludedTarget",
    "StrategistOutput",
    "allocator_rules",
    "critic_rules",
    "strategist_rules",
]

RequestType = Literal["question", "optimize", "reallocate", "reroute", "evaluate", "debug"]
Mode = Literal[
    "answer_question",
    "optimize_freely",
    "suggest_reallocation",
    "suggest_reroute",
    "analyze_solution",
]
Feasibility = Literal["feasible", "infeasible", "unknown"]
Strategy = Literal["efficient", "greedy", "balanced", "geographic", "exclusive"]
ExcludeReason = Literal[
    "IN_SAM_ZONE",
    "TYPE_NOT_ACCESSIBLE",
    "FORBIDDEN_PRIORITY",
    "CANDIDATE_LIMIT",
    "DOMINATED_LOW_VALUE",
    "FUEL_LIMIT",
    "OPERATOR_FORBIDDEN",
    "FROZEN",
]
Verdict = Literal["APPROVED", "NEEDS_REVISION", "REJECTED"]

assert set(get_args(Strategy)) == set(STRATEGIES)

# ----------------------------------------------------------------------------- prompts

STRATEGIST_PROMPT = """\
You are the ISR Mission Strategist in a multi-agent planning system, during a REPLAN.

The mission is under way. Something changed (a threat appeared, a target was added, a drone
was lost, or the operator intervened). Each drone's plan has been cut at a checkpoint: the
legs up to it are FROZEN and keep flying; the remainder is replanned from the checkpoint
(synthetic starts such as D1_START) with the fuel left there as the budget. Targets already
collected are gone from the problem; SAMs listed are the KNOWN ones.

You do NOT generate routes yourself. Your job is to:
- Understand the trigger and the operator's instruction and constraints, if any.
- Decide the request type: OPTIMIZE the remainder, REALLOCATE targets between drones (the
  operator moved or forbade targets), REROUTE with the allocation fixed, or a QUESTION /
  EVALUATION that must not change the plan.
- Decide whether the Allocator and the RouteOptimizer should act.

Ground every rationale bullet in NUMBERS from the mission context: fuel left per drone,
target priorities, how many targets each drone may still visit, frozen legs.
If the operator explicitly says "do not recompute routes", REQUEST_TYPE is question, MODE is
answer_question, and both NEEDS_ALLOCATION and NEEDS_ROUTING are false.

Answer by calling the tool with: request_type, mode, commands_detected (interpreted
operator commands, empty if none), constraints_summary (one or two sentences),
needs_allocation, needs_routing, feasibility, rationale (bullets citing numbers).
"""

ALLOCATOR_PROMPT = """\
You are the ALLOCATOR agent in an ISR mission planning system, during a REPLAN.

ROLE
Allocate the REMAINING targets to drones from their checkpoints to maximize total priority
points under the fuel each drone has LEFT, while respecting ALL HARD CONSTRAINTS.

HARD CONSTRAINTS (absolute)
- A drone may ONLY be assigned targets from its ELIGIBLE TARGETS list.
- Targets inside SAM zones are EXCLUDED: never assign them.
- FROZEN targets stay with the drone whose frozen legs hold them; do not list them.
- Respect the operator's constraints: a moved target goes to its new drone only; a
  forbidden target is never given to that drone; required targets must be covered.
- Each target may be assigned to at most one drone.

IMPORTANT
- Do NOT assign every accessible target: a drone must be able to fly from its checkpoint
  through ALL its assigned targets to an allowed end within its fuel left. An assignment
  that does not fit is rejected as a whole and the algorithmic baseline is used instead.
- The exact router handles at most 12 targets per drone; assign no more.
- A reference allocation from the deterministic rules is given; improve on it if you can.
- If you exclude an eligible target you MUST give a reason code.

AVAILABLE STRATEGIES (choose one)
- efficient: maximize priority/fuel ratio (auction style)
- greedy: highest priority to nearest capable drone
- balanced: distribute workload evenly
- geographic: minimize detours / corridor fit
- exclusive: prioritize targets only one drone can visit

OUTPUT
Call the tool with: strategy_used; assignments {"D1": ["T.."], ...} (every drone, possibly
empty); excluded [{"target": "T..", "reason": "IN_SAM_ZONE|TYPE_NOT_ACCESSIBLE|
FORBIDDEN_PRIORITY|CANDIDATE_LIMIT|DOMINATED_LOW_VALUE|FUEL_LIMIT|OPERATOR_FORBIDDEN|FROZEN",
"notes": "optional"}]; rationale {"D1": "brief reason", ...}; tradeoffs (brief summary).
Be concise but explicit.
"""

CRITIC_PROMPT = """\
You are the CRITIC agent in an ISR mission planning system, reviewing a REPLAN.

The plan below is the remainder of the mission from each drone's checkpoint; it has already
passed the hard-constraint validator. Review it and identify:
1. Violations of the operator's commands or constraints.
2. Potential improvements: unvisited targets that a drone's fuel margin could cover,
   reassignments for better efficiency, crossing routes.
3. Suggestions for the commander, with quantified benefits (points, fuel).

Be CONCISE but THOROUGH; cite numbers. Call the tool with: review (overall assessment),
issues (list, empty if none), suggestions (list), final_verdict APPROVED|NEEDS_REVISION|
REJECTED.
"""

# ----------------------------------------------------------------------------- outputs


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StrategistOutput(_Output):
    """The strategist's reading of the replanning request."""

    request_type: RequestType
    mode: Mode
    commands_detected: list[str] = Field(
        default_factory=list, description="interpreted operator commands; empty if none"
    )
    constraints_summary: str
    needs_allocation: bool
    needs_routing: bool
    feasibility: Feasibility
    rationale: list[str] = Field(
        default_factory=list, description="bullets citing specific numbers"
    )


class ExcludedTarget(_Output):
    """A target the allocator leaves out, and why."""

    target: str
    reason: ExcludeReason
    notes: str | None = None


class AllocatorOutput(_Output):
    """Which remaining targets each drone visits from its checkpoint."""

    strategy_used: Strategy
    assignments: dict[str, list[str]] = Field(description="drone id (D1, D2, ...) -> target ids")
    excluded: list[ExcludedTarget] = Field(default_factory=list)
    rationale: dict[str, str] = Field(default_factory=dict)
    tradeoffs: str = ""


class CriticOutput(_Output):
    """The critic's review of the chosen replan."""

    review: str
    issues: list[str] = Field(default_factory=list, description="problems found; empty if none")
    suggestions: list[str] = Field(
        default_factory=list, description="improvements with quantified benefits"
    )
    final_verdict: Verdict


STRATEGIST_TOOL = ToolSpec.for_model(
    "strategist_decision",
    "Report the strategist's analysis of the replanning request.",
    StrategistOutput,
)
ALLOCATOR_TOOL = ToolSpec.for_model(
    "allocation",
    "Propose which remaining targets each drone visits from its checkpoint.",
    AllocatorOutput,
)
CRITIC_TOOL = ToolSpec.for_model("critique", "Review the chosen replan.", CriticOutput)

# ----------------------------------------------------------------------------- rules answers


def strategist_rules(
    mission: Mission,
    trigger: str,
    constraints: OperatorConstraints,
    instruction: str | None = None,
) -> dict:
    """A replan always reallocates and reroutes; moves and bans make it a reallocation."""
    commands = describe_constraints(constraints)
    text = (instruction or "").lower()
    if "do not recompute routes" in text:
        return StrategistOutput(
            request_type="question",
            mode="answer_question",
            commands_detected=commands,
            constraints_summary="The operator asked not to recompute routes.",
            needs_allocation=False,
            needs_routing=False,
            feasibility="unknown",
            rationale=[f"trigger {trigger}; the plan is kept as it is"],
        ).model_dump()
    reallocate = bool(constraints.moves or constraints.forbidden)
    open_targets = [
        mission.node_ids[t]
        for t in mission.target_nodes
        if any(t in spec.can_visit for spec in mission.drones)
    ]
    points = float(sum(mission.scores[mission.index[t]] for t in open_targets))
    rationale = [
        f"trigger {trigger}: replan the remainder of {len(mission.drones)} drones"
        f" from their checkpoints"
    ]
    rationale += [
        f"{drone_label(spec.id)}: fuel left {spec.budget:.1f},"
        f" {len(spec.eligible)} eligible targets, {len(spec.prefix)} frozen"
        for spec in mission.drones
    ]
    rationale.append(
        f"{len(open_targets)} reachable-by-sensor targets worth {points:g} points;"
        f" {len(mission.excluded_targets)} excluded inside SAM zones"
    )
    feasible = all(
        mission.route_length([spec.start, *spec.prefix]) <= spec.budget for spec in mission.drones
    )
    summary = "; ".join(commands) if commands else "No operator constraints beyond the hard ones."
    return StrategistOutput(
        request_type="reallocate" if reallocate else "optimize",
        mode="suggest_reallocation" if reallocate else "optimize_freely",
        commands_detected=commands,
        constraints_summary=summary,
        needs_allocation=True,
        needs_routing=True,
        feasibility="feasible" if feasible else "infeasible",
        rationale=rationale,
    ).model_dump()


def allocator_rules(
    mission: Mission, allocation: Mapping[str, Sequence[int]], strategy: str
) -> dict:
    """``planner.allocation.allocate(mission, strategy)`` as the allocator's output."""
    assigned = {int(t) for ts in allocation.values() for t in ts}
    frozen = {int(t) for spec in mission.drones for t in spec.prefix}
    sensed = mission.sensed  # a swarm's 5 million (drone, target) ints were a second of GIL
    excluded = [ExcludedTarget(target=t, reason="IN_SAM_ZONE") for t in mission.excluded_targets]
    for t in mission.target_nodes:
        if t in assigned or t in frozen:
            continue
        reason = "FUEL_LIMIT" if t in sensed else "TYPE_NOT_ACCESSIBLE"
        excluded.append(ExcludedTarget(target=mission.node_ids[t], reason=reason))
    assignments = {
        drone_label(d): mission.ids([int(t) for t in ts]) for d, ts in allocation.items()
    }
    rationale = {}
    for spec in mission.drones:
        ts = list(allocation.get(spec.id, ()))
        pts = float(sum(mission.scores[int(t)] for t in ts))
        rationale[drone_label(spec.id)] = (
            f"{len(ts)} targets worth {pts:g} points within fuel left {spec.budget:.1f}"
        )
    return AllocatorOutput(
        strategy_used=strategy,
        assignments=assignments,
        excluded=excluded,
        rationale=rationale,
        tradeoffs=f"deterministic {strategy} allocation; targets that fit no drone's fuel"
        " are left out",
    ).model_dump(exclude_none=True)


def critic_rules(
    mission: Mission,
    solution: Solution,
    *,
    baseline: Solution | None = None,
    violations: Sequence[str] = (),
    low_margin: float = 0.02,
) -> dict:
    """Review from the metrics and the geometry: constraint violations, crossings, low fuel
    margins, unvisited targets some drone could still sense (with the cheapest detour).
    NEEDS_REVISION when routes cross or a missed target fits a drone's fuel margin: those
    suggestions are concrete ("add T9 to D3: ..."), and the round tries them once
    (``agents.revision``)."""
    metrics = compute_solution_metrics(mission, solution)
    geometry = analyze_solution_geometry(mission, solution)
    issues = [f"operator constraint not honoured: {v}" for v in violations]
    for c in geometry.crossings:
        a, b = drone_label(c.drone_a), drone_label(c.drone_b)
        where = f"({c.point[0]:.1f}, {c.point[1]:.1f})"
        issues.append(
            f"{a} {c.segment_a[0]}->{c.segment_a[1]} crosses"
            f" {b} {c.segment_b[0]}->{c.segment_b[1]} at {where}"
        )
    for d in metrics.drones.values():
        if d.fuel_budget > 0 and d.fuel_margin < low_margin * d.fuel_budget:
            issues.append(
                f"{d.drone}: fuel margin {d.fuel_margin:.1f} of {d.fuel_budget:.1f}"
                f" is under {100 * low_margin:g}%"
            )
    suggestions = []
    fits = False  # a concrete improvement: a missed target fits a drone's fuel margin
    for t in metrics.unvisited_targets:
        pts = float(mission.scores[mission.index[t]])
        options = []  # (detour km, margin km, drone label) for each drone that can sense t
        for drone_id, d in metrics.drones.items():
            if t in d.unvisited_accessible_targets:
                detour = _detour(mission, solution, drone_id, mission.index[t])
                options.append((detour, d.fuel_margin, d.drone))
        if not options:
            continue
        detour, margin, label = min(options)
        if detour <= margin:
            fits = True
            suggestions.append(
                f"add {t} to {label}: +{pts:g} points for a {detour:.1f} km detour,"
                f" within its {margin:.1f} km fuel margin"
            )
        else:
            suggestions.append(
                f"{t} ({pts:g} points) stays out: the cheapest detour ({label},"
                f" {detour:.1f} km) exceeds its {margin:.1f} km fuel margin"
            )
    review = (
        f"{metrics.total_points:g} of {metrics.total_possible_points:g} points"
        f" ({100 * metrics.points_coverage:.1f}%), fuel {metrics.total_fuel:.1f} of"
        f" {metrics.total_budget:.1f}, {metrics.visited_count} targets visited,"
        f" {len(metrics.unvisited_targets)} unvisited"
    )
    if baseline is not None and baseline is not solution:
        review += f"; baseline {baseline.total_points:g} points, fuel {baseline.total_fuel:.1f}"
    if violations:
        verdict = "REJECTED"
    elif geometry.crossings or fits:
        verdict = "NEEDS_REVISION"
    else:
        verdict = "APPROVED"
    return CriticOutput(
        review=review, issues=issues, suggestions=suggestions, final_verdict=verdict
    ).model_dump()


def _detour(mission: Mission, solution: Solution, drone_id: str, target: int) -> float:
    """The least extra length of putting ``target`` into the drone's route (km; inf when the
    drone has no route)."""
    result = solution.routes.get(drone_id)
    if result is None or len(result.route) < 2:
        return float("inf")
    route = mission.nodes(result.route)
    spec = mission.drone(drone_id)
    lo = 1 + len(spec.prefix)
    dist = mission.dist
    return min(
        (
            float(dist[a, target] + dist[target, b] - dist[a, b])
            for a, b in zip(route[lo - 1 : -1], route[lo:])
        ),
        default=float("inf"),
    )
