"""Rebasing: a draft whose cut has passed is cut again from the current state and its intent
routed exactly from the new checkpoints (``rebase_job``, in a worker thread). What follows a
rebase is decided here and applied by the lifecycle's owner (``executive.loop.rounds``):
commit it, offer it again when targets had to be dropped from an approved plan, rebase it
again when the world moved on meanwhile, or drop it when it cannot fly. Never flown
blindly, never thrown away."""

from __future__ import annotations

from dataclasses import dataclass

from executive.contracts import new_id
from executive.loop.cut import ReplanProblem, fuel_at_start, start_reach
from executive.loop.decisions import Commit, Decision, Drop, Hold, Moment, Offer, Rebase, Rebasing
from executive.loop.drafts import Approval, Draft, Rebased, RebaseJob, airborne
from executive.loop.plan_commands import fly_commands
from executive.loop.prepared import prepare_json
from planner.errors import PlannerError
from planner.feasibility import plannable
from planner.intent import Intent, RoutedIntent, route_intent
from planner.mission import Compile, Mission, compile_mission
from planner.model import Solution, drone_label
from planner.solution import build_solution, route_points
from planner.validation import validate_solution
from planner.way_home import WayHome, guard_routes

__all__ = [
    "Routed",
    "draft_from",
    "failed",
    "finish",
    "fly",
    "keep_unnamed",
    "rebase_job",
    "route_only",
    "settle_commit",
]


def fly(draft: Draft, approved: Approval, tick: int, reason: str) -> Commit | Rebase:
    """Commit ``draft`` now if its cut is still ahead, else rebase it first."""
    if tick <= draft.cut:
        return Commit(draft, approved, reason)
    return Rebase(draft, "commit", f"{reason}; its cut has passed", approved=approved)


def settle_commit(job: RebaseJob, rebased: Rebased, now: Moment) -> Decision:
    """An approved (or automatic) commit's rebase is done: commit it, offer it again when
    the operator approved targets it had to drop, or rebase again when it came too late."""
    draft = job.draft
    approved = job.approved
    assert approved is not None
    if now.paused:
        return Hold(draft, approved)
    if job.known_version != now.known_version or now.tick > job.cut:
        why = "the world changed" if job.known_version != now.known_version else "its cut passed"
        return Rebase(
            draft, "commit", f"{why} while it was rebased: again, from now", approved=approved
        )
    new = draft_from(rebased, draft, "rebase", now.tick)
    if rebased.dropped and approved == "operator":
        # The operator approved other targets: what changed needs a new approval.
        return Offer(new, "rebased: targets had to be dropped", rebased=Rebasing(draft))
    return Commit(new, approved, "rebased onto the state", rebased=Rebasing(draft))


def failed(job: RebaseJob, why: str) -> Drop:
    """A rebase could not be flown: dropped (an approved plan is planned again from the
    state; an agents' proposal is settled as not applied)."""
    return Drop(job.draft, "rebase_failed", why, purpose=job.purpose, proposal=job.proposal)


def draft_from(
    rebased: Rebased, parent: Draft, origin: str, tick: int, *, agent_applied: bool | None = None
) -> Draft:
    """The rebased plan as a new draft whose parent is ``parent``, ready at ``tick``."""
    return Draft(
        new_id(),
        parent.replan,
        origin,
        rebased.problem,
        rebased.mission,
        rebased.solution,
        rebased.commands,
        rebased.intent,
        rebased.ends,
        tick,
        parent_id=parent.plan_id,
        dropped=dict(rebased.dropped),
        agent_applied=parent.agent_applied if agent_applied is None else agent_applied,
        left_out=dict(rebased.left_out),
    )


def rebase_job(
    problem: ReplanProblem,
    intent: Intent,
    ends: dict[str, str],
    gone: dict[str, str],
    compare: tuple[Intent, dict[str, str]] | None,
    compile: Compile = compile_mission,
) -> Rebased:
    """Route ``intent`` again on the remainder ``problem`` (worker thread). With ``compare``
    (the plan in force's intent) the intent is an agent's allocation, routed in its best
    order, and the plan in force is rebased on the same cut to be compared with it."""
    narrowed = plannable(compile(problem.scenario, reach=start_reach(problem)))
    mission = narrowed.mission
    rebased = finish(
        route_only(
            problem, mission, narrowed.left_out, intent, ends, gone, reorder=compare is not None
        )
    )
    if compare is not None:
        now = route_intent(mission, compare[0], ends=compare[1], gone=gone)
        rebased.current = build_solution(mission, now.routes)
    return rebased


@dataclass(frozen=True)
class Routed:
    """An intent routed on a mission, before its solution, validation and commands are made
    (``finish``): enough to know the points it keeps (``points``) for a fraction of the
    work. A round whose fresh draft is worth at least as much finishes none of it."""

    problem: ReplanProblem
    mission: Mission
    routes: dict[str, list[int]]
    intent: Intent
    ends: dict[str, str]
    dropped: dict[str, str]
    left_out: dict[str, str]

    @property
    def points(self) -> float:
        """The points its routes collect (``Solution.total_points`` once finished)."""
        mission, routes = self.mission, self.routes
        # summed as build_solution sums them
        return float(
            sum(route_points(mission, routes[s.id]) for s in mission.drones if s.id in routes)
        )


def route_only(
    problem: ReplanProblem,
    mission: Mission,
    left_out: dict[str, str],
    intent: Intent,
    ends: dict[str, str],
    gone: dict[str, str],
    *,
    reorder: bool = False,
    way_home: WayHome | None = None,
    routed: RoutedIntent | None = None,
) -> Routed:
    """Route ``intent`` on ``mission`` (``problem``'s remainder, narrowed to the drones that
    can be planned; ``left_out`` the others, and why): targets that no longer fit, are
    unsafe or belong to a drone not planned are dropped and named, and so are the targets
    of a route the way-home check ends sooner (``way_home``: the check's figures for
    ``mission``, shared with the round's fresh draft). ``routed``: ``intent`` already
    routed on ``mission`` (``route_intent``, as here: the planner's warm start). Its
    solution, validation and commands are ``finish``'s (worker thread)."""
    if routed is None:
        routed = route_intent(mission, intent, ends=ends, gone=gone, reorder=reorder)
    dropped = dict(routed.dropped)
    routes, kept = routed.routes, routed.kept
    if problem.home_check is not None:
        # the way home with one more SAM on it: a route that fails it ends sooner
        routes, cuts = guard_routes(
            mission, routes, fuel_at_start(problem), problem.home_check, way_home
        )
        for cut in cuts:
            dropped |= {target: cut.reason for target in cut.dropped}
            kept = {**kept, cut.drone: tuple(t for t in kept[cut.drone] if t not in cut.dropped)}
    planned = {spec.id for spec in mission.drones}
    for drone_id, targets in intent.items():
        if drone_id in planned:
            continue
        why = problem.left_out.get(drone_id) or left_out.get(drone_id) or "not planned"
        for target in targets:
            if target not in gone:
                dropped[target] = f"{drone_label(drone_id)} is not planned ({why})"
    return Routed(
        problem, mission, routes, kept, routed.ends, dropped, {**problem.left_out, **left_out}
    )


def finish(routed: Routed) -> Rebased:
    """``routed`` made into a solution, validated, and into commands (worker thread)."""
    problem, mission = routed.problem, routed.mission
    solution = build_solution(mission, routed.routes)
    violations = validate_solution(mission, solution)
    commands = fly_commands(mission, solution, problem.tick, airborne(problem))
    prepare_json(solution, commands)  # the JSON its commit records, made here, not on the tick
    return Rebased(
        problem,
        mission,
        solution,
        commands,
        list(violations),
        routed.intent,
        routed.ends,
        routed.dropped,
        routed.left_out,
    )


def keep_unnamed(
    mission: Mission, fresh: Solution, kept: Solution, only: set[str]
) -> tuple[Solution, str]:
    """``fresh`` with every drone not in ``only`` back on its route in ``kept`` (the plan in
    force, rebased onto the same cut): a move changes only the drones it names. ``fresh``
    itself, and why, when the two together would not validate. The second item says which
    it is, for the round's reasons."""
    names = ", ".join(drone_label(d) for d in sorted(only))
    routes: dict[str, list[int]] = {}
    for spec in mission.drones:
        source = fresh if spec.id in only or spec.id not in kept.routes else kept
        route = source.routes.get(spec.id)
        if route is not None:
            routes[spec.id] = [mission.index[x] for x in route.route]
    try:
        spliced = build_solution(mission, routes)
    except (PlannerError, KeyError, IndexError) as exc:
        return fresh, f"a move on {names}: the others could not keep their routes ({exc})"
    broken = validate_solution(mission, spliced)
    if broken:
        why = "; ".join(map(str, broken))
        return fresh, f"a move on {names}: the others could not keep their routes ({why})"
    return spliced, f"a move: only {names} re-planned; the other drones keep their routes"
