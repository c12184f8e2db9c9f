"""Planning a whole mission: a strategy in, a validated Solution out.

``team`` (the default) plans all drones jointly with the anytime team-orienteering search;
the seed's allocation strategies (``efficient``, ``greedy``, ``balanced``, ``geographic``,
``exclusive``) allocate first, route each drone exactly, then post-optimise — kept for
comparison. Whatever produced the routes, the plan passes the validator before it is returned.

A drone that cannot be planned never fails the fleet (``planner.feasibility``): one that
cannot reach its end airport is planned to end at a reachable one, one that can reach no
airport is left out (it stays where it is, with no route); the result says which and why.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from planner.allocation import allocate
from planner.errors import PlannerError
from planner.feasibility import plannable
from planner.mission import Mission
from planner.model import Solution
from planner.postopt import Change, post_optimise
from planner.routing import route_allocation
from planner.solution import build_solution
from planner.strategies import DEFAULT_STRATEGY, STRATEGIES
from planner.team_search import LARGE_PAIRS, StopCriterion, TeamProblem, solve_team
from planner.validation import ensure_valid

__all__ = [
    "DEFAULT_STRATEGY",
    "STRATEGIES",
    "PlanResult",
    "plan_mission",
    "swarm_moves",
    "swarm_sized",
    "team_problem",
]


@dataclass
class PlanResult:
    """A validated plan, the strategy that made it, the wall time it took and the changes
    post-optimisation made; ``mission`` is the one it was planned and validated on (the
    given one narrowed to what can be planned), ``rerouted`` and ``left_out`` say, per drone
    id, what had to change and why.
    """

    solution: Solution
    strategy: str
    seconds: float
    changes: list[Change] = field(default_factory=list)
    mission: Mission | None = None
    rerouted: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)


def plan_mission(
    mission: Mission,
    strategy: str = DEFAULT_STRATEGY,
    *,
    seconds: float | None = 1.0,
    iterations: int | None = None,
    seed: int = 0,
    post_opt: bool = True,
) -> PlanResult:
    """Plan ``mission`` with ``strategy``; the result has passed the validator."""
    if strategy not in STRATEGIES:
        raise PlannerError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    started = time.perf_counter()
    changes: list[Change] = []
    narrowed = plannable(mission)
    mission = narrowed.mission
    if not mission.drones:  # nothing can be planned: every drone stays where it is
        routes: dict[str, list[int]] = {}
    elif strategy == DEFAULT_STRATEGY:
        stop = StopCriterion(max_seconds=seconds, max_iterations=iterations)
        problem = team_problem(mission)
        found = solve_team(problem, stop, seed=seed)
        routes = {spec.id: list(route) for spec, route in zip(mission.drones, found.routes)}
    else:
        routes = route_allocation(mission, allocate(mission, strategy))
    if post_opt and routes:
        # A swarm's plan comes from the windowed search, which moves and inserts targets
        # itself; the swap and the insertion scan every target for every drone per move
        # (minutes at 200 x 2,000): such a plan is only uncrossed.
        moves = swarm_moves(mission) if strategy == DEFAULT_STRATEGY else {}
        improved = post_optimise(mission, routes, **moves)
        routes, changes = improved.routes, improved.changes
    solution = ensure_valid(mission, build_solution(mission, routes))
    seconds_taken = time.perf_counter() - started
    return PlanResult(
        solution,
        strategy,
        seconds_taken,
        changes,
        mission,
        dict(narrowed.rerouted),
        dict(narrowed.left_out),
    )


def swarm_sized(mission: Mission) -> bool:
    """Whether ``mission`` is about the size the team search plans window by window (drones
    x targets past ``LARGE_PAIRS``)."""
    return len(mission.drones) * len(mission.target_nodes) > LARGE_PAIRS


def swarm_moves(mission: Mission) -> dict[str, bool]:
    """The post-optimisation moves (``post_optimise``'s switches) a plan of ``mission`` may
    afford: at a swarm's size only the uncrossing, since the swap and the insertion scan
    every target for every drone per move (minutes of Python at 200 x 2,000, with no
    deadline, holding the GIL a real-time tick needs); all of them otherwise."""
    return {"insert": False, "swap": False} if swarm_sized(mission) else {}


def team_problem(mission: Mission) -> TeamProblem:
    """The mission as the team search's arrays (a metric: SAM-aware shortest paths)."""
    n, m = len(mission.node_ids), len(mission.drones)
    end_options = np.zeros((m, n), dtype=np.bool_)
    # every drone's ends at once (one at a time: 8 ms of a swarm's round)
    counts = [len(spec.ends) for spec in mission.drones]
    ends = np.fromiter(itertools.chain.from_iterable(s.ends for s in mission.drones), np.int64)
    end_options[np.repeat(np.arange(m), counts), ends] = True
    # Drones with the same sensors share one eligibility tuple (``compile_mission``): one
    # row each, written to its drones at once (a swarm's 1,000 drones x 5,000 targets set
    # one by one, after hashing each drone's tuple, were 0.15 s of a round's Python; the
    # rows gathered drone by drone, 10 ms)
    row_of: dict[int, int] = {}
    rows: list[np.ndarray] = []
    fit = np.empty(m, dtype=np.int64)
    for k, spec in enumerate(mission.drones):
        key = id(spec.eligible)  # the specs hold their tuples alive meanwhile
        if key not in row_of:
            row = np.zeros(n, dtype=np.bool_)
            row[np.asarray(spec.eligible, dtype=np.int64)] = True
            row_of[key] = len(rows)
            rows.append(row)
        fit[k] = row_of[key]
    eligible = np.empty((m, n), dtype=np.bool_)
    for r, row in enumerate(rows):
        eligible[fit == r] = row
    # Frozen targets belong to their drone alone; no one else may take them.
    owned = [(u, k) for k, spec in enumerate(mission.drones) for u in spec.prefix]
    if owned:
        nodes = np.array([u for u, _ in owned], dtype=np.int64)
        owners = np.array([k for _, k in owned], dtype=np.int64)
        own = eligible[owners, nodes]
        eligible[:, nodes] = False
        eligible[owners, nodes] = own
    return TeamProblem(
        dist=mission.dist,
        score=mission.scores,
        starts=np.array([spec.start for spec in mission.drones], dtype=np.int64),
        end_options=end_options,
        budget=np.array([spec.budget for spec in mission.drones], dtype=np.float64),
        eligible=eligible,
        prefixes=tuple(tuple(spec.prefix) for spec in mission.drones),
        metric=True,
        flags=mission.paths.flags,
    )
