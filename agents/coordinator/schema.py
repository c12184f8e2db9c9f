"""The coordinator's decision as a typed value: seed 000 Appendix B.5, plus what the executive
reads (regions, what-if changes, a memory, the refusals and replacements).

``CoordinatorDecision.model_dump(mode="json")`` is the dict ``coordinate`` returns, so the
executive's hook, the words layer and ``POST /api/agent_solve`` all see one shape:

* ``policy``: ``allow_solver``, ``force_allocation``, ``allocation_strategy`` (efficient |
  greedy | balanced | geographic | exclusive), ``post_opt`` (crossing_removal,
  trajectory_swap, insert_unvisited), ``solver_mode``, ``skip_allocation``, ``skip_solver``,
  ``use_existing_allocation``, ``allocation_modifications`` (the moves), ``drone_contracts``
  (per drone: enabled, start, home, end, synthetic start, flexible end, sensors, fuel), and
  the executive's ``explanation_only`` / ``apply_to_live_plan`` / ``plan_on_copy``.
* ``constraints``: ``moves``, ``forbidden`` (drone -> targets), ``required_targets``,
  ``forbidden_targets`` (for every drone), ``fixed_endpoints`` (drone -> its one end).
  ``planner_constraints(decision)`` is the part the planner's ``OperatorConstraints`` takes.
* ``refused``: each command that cannot be carried out and why (also in ``errors``);
  ``replaced``: each earlier order a command replaces (also in ``warnings``). Both are the
  real-time core's models (``executive.contracts``), which the loop's
  ``CoordinatorVerdict`` carries.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.coordinator.intent import Intent
from executive.contracts import Refusal, Replacement
from planner.constraints import Move, OperatorConstraints

__all__ = [
    "STRATEGIES",
    "Constraints",
    "CoordinatorDecision",
    "DecisionPolicy",
    "DroneContract",
    "MoveOrder",
    "PostOpt",
    "PriorityRule",
    "Refusal",
    "Replacement",
    "TraceEvent",
    "planner_constraints",
]

STRATEGIES = ("efficient", "greedy", "balanced", "geographic", "exclusive")
Strategy = Literal["efficient", "greedy", "balanced", "geographic", "exclusive"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PostOpt(_Model):
    """Which post-optimisations run after the solver (seed 000 §6)."""

    crossing_removal: bool = True
    trajectory_swap: bool = True
    insert_unvisited: bool = True


class MoveOrder(_Model):
    """``target`` goes to ``to_drone`` (the scenario's spelling: "1")."""

    target: str
    to_drone: str


class DroneContract(_Model):
    """What one drone may do in the plan the decision asks for (seed B.5 ``drone_contracts``)."""

    enabled: bool
    start_id: str | None  # where its route starts: an airport, or ``D1_START`` mid-mission
    home_airport: str | None
    end_airport: str | None  # its one end; None when it may end at several
    is_synthetic_start: bool = False  # starts mid-air, at a checkpoint
    flexible_endpoint: bool = False  # best_end: any allowed airport
    sensors: list[str] | Literal["ALL"] = "ALL"
    fuel_budget: float
    fuel_left: float


class DecisionPolicy(_Model):
    """How the downstream agents and solver behave for this request (every field is read:
    ``allow_solver`` gates planning, ``use_existing_allocation`` keeps the drones a move
    does not name as they are, ``allocation_strategy`` and ``post_opt`` set the planner)."""

    allow_solver: bool
    allocation_strategy: Strategy = "efficient"
    post_opt: PostOpt = Field(default_factory=PostOpt)
    solver_mode: str | None = None
    skip_allocation: bool = False
    # a reallocation on an existing plan: only the drones a move names are replanned
    use_existing_allocation: bool = False
    allocation_modifications: list[MoveOrder] = Field(default_factory=list)
    drone_contracts: dict[str, DroneContract] = Field(default_factory=dict)
    explanation_only: bool = False


class PriorityRule(_Model):
    """A priority threshold ("only targets with priority 7 or higher", "D1 may not visit
    priority 4 targets"): the priorities ``drone`` (None: every drone) may visit lie in
    [``low``, ``high``] minus ``excluded``; ``targets`` the known targets it forbids, as
    forbidden pairs (so the planner honours it and the checker can verify it)."""

    drone: str | None = None
    low: float | None = None
    high: float | None = None
    excluded: list[float] = Field(default_factory=list)
    targets: list[str] = Field(default_factory=list)
    text: str

    def allows(self, priority: float) -> bool:
        """Whether a target of ``priority`` may be visited under this rule."""
        return (
            (self.low is None or priority >= self.low - 1e-9)
            and (self.high is None or priority <= self.high + 1e-9)
            and not any(abs(priority - x) < 1e-9 for x in self.excluded)
        )


Keep = Literal["routes", "allocation"]


class Constraints(_Model):
    """What the words order (seed B.5 ``constraints``; ids in the scenario's spelling)."""

    moves: list[MoveOrder] = Field(default_factory=list)
    forbidden: dict[str, list[str]] = Field(default_factory=dict)  # drone -> targets
    required_targets: list[str] = Field(default_factory=list)
    forbidden_targets: list[str] = Field(default_factory=list)  # for every drone
    fixed_endpoints: dict[str, str] = Field(default_factory=dict)  # drone -> end airport
    fuel_reserve: dict[str, float] = Field(default_factory=dict)  # drone -> km kept
    priority_rules: list[PriorityRule] = Field(default_factory=list)
    # "do not recompute routes" / "keep the allocation" / "only reorder": answered from the
    # plan as it is (a what-if on a copy at most), never a new plan committed
    keep: Keep | None = None


class TraceEvent(_Model):
    """One step of the pre-pass, for the trace (seed B.5 ``trace_events``)."""

    agent: str = "coordinator"
    stage: str  # intent | parse | check | policy
    event: str
    details: dict[str, Any] = Field(default_factory=dict)


class CoordinatorDecision(_Model):
    """The coordinator's decision for one request (see the module docstring)."""

    intent: Intent
    confidence: float = Field(ge=0.0, le=1.0)
    rules_hit: list[str]
    policy: DecisionPolicy
    constraints: Constraints
    explanation_only: bool
    warnings: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    trace_events: list[TraceEvent] = Field(default_factory=list)
    refused: list[Refusal] = Field(default_factory=list)
    replaced: list[Replacement] = Field(default_factory=list)
    regions: list[dict[str, Any]] = Field(default_factory=list)
    what_if: list[dict[str, Any]] = Field(default_factory=list)
    memory: dict[str, str] | None = None
    text: str = ""


def planner_constraints(decision: CoordinatorDecision) -> OperatorConstraints:
    """The decision's constraints as the planner takes them (``OperatorConstraints``):
    moves, forbidden per drone (a target forbidden for every drone listed per drone),
    required targets. The one conversion: the loop, a what-if and a posted plan all use it."""
    c = decision.constraints
    return OperatorConstraints(
        moves=[Move(target=m.target, to_drone=m.to_drone) for m in c.moves],
        forbidden={d: list(ts) for d, ts in c.forbidden.items()},
        required_targets=list(c.required_targets),
        fuel_reserve=dict(c.fuel_reserve),
    )
