"""The clairvoyant reference of a mission, flown: the best flown score of the clairvoyant's
candidate plans (``planner.clairvoyant``), of the first plan flown without replanning and of
the plan made with full knowledge at t = 0 (``planner.oracle``), each flown in the
scripted world by the executive without replanning; and the relaxation bound above it.

``fly`` runs one policy on one mission without a trace store and says what happened (the
points, fuel-outs, drones lost to a SAM known before the loss: SAMs on the map from the
start count as known from tick 0)."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from executive.contracts import EventRecord
from executive.loop import Executive, RunReport
from executive.traces.analysis import MARKER_KINDS
from executive.traces.audit import initial_sams, lost_to_known_sams
from executive.traces.sinks import ListSink
from mission.evaluation.policies import EvalTask, accept_after, config_for, reference_policy
from mission.session import build_executive
from planner.bound import upper_bound
from planner.clairvoyant import clairvoyant_candidates
from planner.mission import Mission
from planner.model import Scenario, Solution

__all__ = ["Flown", "Reference", "clairvoyant_reference", "fly"]

# The events that say a plan in force could not fly on as planned: the safety layer's
# warnings and actions, as the replay's markers class them
FORCED = frozenset(kind for kind, cls in MARKER_KINDS.items() if cls == "safety")
FIRST_PLAN = "first plan"
FULL_KNOWLEDGE = "full knowledge at t0"


@dataclass(frozen=True)
class Flown:
    """One flight's account."""

    points: float
    fuel_outs: int
    lost_known: int  # to a SAM known before the loss (initial SAMs included)
    lost: int
    seconds: float
    # What the plan in force could not survive, as "EVENT drone" (the plan gone infeasible
    # on fuel or unsafe, the safety layer acting): why flying on may have scored what a
    # replan, keeping the promises, could not
    forced: tuple[str, ...] = ()


def _account(
    scenario: Scenario, executive: Executive, report: RunReport, sink: ListSink, began: float
) -> Flown:
    outcome = report.outcome
    known = lost_to_known_sams(sink.of(EventRecord), initial_sams(scenario))
    reasons = [d.lost_reason for d in outcome.drones.values()]
    forced = sorted(
        {f"{e.kind} D{e.payload.get('drone')}" for e in sink.of(EventRecord) if e.kind in FORCED}
    )
    return Flown(
        points=float(outcome.total_points),
        fuel_outs=sum(1 for why in reasons if why == "fuel"),
        lost_known=len(set(known)),
        lost=sum(1 for why in reasons if why is not None),
        seconds=time.perf_counter() - began,
        forced=tuple(forced),
    )


def fly(
    scenario: Scenario,
    policy: str,
    *,
    path: str = "",
    plan: tuple[Solution, Mission] | None = None,
    agents: bool = True,
) -> Flown:
    """Fly ``scenario`` under ``policy`` (``mission.evaluation.POLICIES``) as ``isr eval``
    configures it (agents on the rules engine unless ``agents`` is False), without a store;
    with ``plan`` (only for ``no-replan``) that reference plan is flown instead of the first
    plan, as references fly (``reference_policy``)."""
    logging.getLogger("executive").setLevel(logging.ERROR)
    task = EvalTask(suite="reference", mission=path, path=path, policy=policy, agents=agents)
    config = config_for(task)
    sink = ListSink()
    began = time.perf_counter()
    executive = build_executive(scenario, config, sink=sink)
    if plan is not None:
        if policy != "no-replan":
            raise ValueError(f"a given plan is flown without replanning, not under {policy!r}")
        executive = Executive(
            scenario,
            planner=executive.planner,
            sink=sink,
            options=config.loop_options().model_copy(update={"policy": reference_policy()}),
            initial_plan=plan[0],
            initial_mission=plan[1],
        )
    if policy == "review-accept-30s":
        accept_after(executive, 30.0)
    report = asyncio.run(executive.run(None))
    return _account(scenario, executive, report, sink, began)


@dataclass
class Reference:
    """A mission's clairvoyant reference: the best flown score and where it came from, the
    best planned (time-expanded) value, the bound, and every flight's score."""

    flown: float
    source: str
    planned: float
    bound: float
    flights: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def gap(self) -> float | None:
        """How far below the bound the reference is, as a share of the bound."""
        return None if self.bound <= 0 else 1.0 - self.flown / self.bound


def clairvoyant_reference(
    scenario: Scenario,
    *,
    path: str = "",
    seeds: tuple[int, ...] = (0, 1, 2),
    iterations: int = 4000,
    fly_best: int = 2,
    known: dict[str, Flown] | None = None,
) -> Reference:
    """The clairvoyant reference of ``scenario`` (see the module). ``known`` holds flights
    already made (``no-replan``, ``full-knowledge-t0``: the same runs), which are not flown again."""
    began = time.perf_counter()
    known = known or {}
    flights: dict[str, float] = {}
    kept: dict[str, float] = {}  # the flights that kept the promises: the reference's choice

    def account(name: str, flown: Flown) -> None:
        flights[name] = flown.points
        if flown.fuel_outs == 0 and flown.lost_known == 0:
            kept[name] = flown.points

    for name, policy in ((FIRST_PLAN, "no-replan"), (FULL_KNOWLEDGE, "full-knowledge-t0")):
        account(name, known.get(policy) or fly(scenario, policy, path=path))
    candidates = clairvoyant_candidates(scenario, seeds=seeds, iterations=iterations)
    planned = candidates[0].value if candidates else 0.0
    for c in candidates[:fly_best]:
        name = f"clairvoyant ({c.origin}, seed {c.seed}" + (", lost-open)" if c.lost_open else ")")
        account(name, fly(scenario, "no-replan", path=path, plan=(c.solution, c.mission)))
    # a flight that ran a drone dry or lost one to a known SAM scored by breaking a promise
    # no policy may break: it is shown, never the reference (unless no flight kept them)
    pool = kept or flights
    source = max(pool, key=lambda k: pool[k])
    return Reference(
        flown=pool[source],
        source=source,
        planned=planned,
        bound=upper_bound(scenario),
        flights=flights,
        seconds=time.perf_counter() - began,
    )
