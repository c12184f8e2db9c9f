"""The plan lifecycle on its own, without flying a mission: a ``Rounds`` over a host that is
the real sim stepped by the test (its tick is the clock), a real recorder into a list, and
a fake planner that answers each round with a plan the test chooses (and, for the slow
tier, an agents' proposal). Each transition of a plan's life is driven and checked: the
fast tier's commit, review (offer, accept, reject, timeout), a late ACCEPT rebased, a
rebase that fails, the agents' proposal applied, offered, superseded or dropped, and the
fast tier's judge (a fresh search flies only if worth at least the plan in force rebased)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import pytest

from executive.contracts import (
    AgentProposal,
    EventRecord,
    PlanOutcome,
    PlanRequest,
    PlanVersionRecord,
)
from executive.loop import fast_tier, rebase
from executive.loop.decisions import Commit, Hold, Moment, Rebase
from executive.loop.drafts import Draft, RebaseJob, Rival
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.loop.record import Recorder
from executive.loop.rounds import Rounds
from executive.traces.sinks import ListSink
from planner.constraints import OperatorConstraints
from planner.geometry import Path
from planner.intent import intent_of, route_intent
from planner.mission import Mission, MissionCompiler, compile_mission
from planner.model import Scenario, Solution
from planner.planning import plan_mission
from planner.scenario import load_scenario
from planner.solution import build_solution
from planner.validation import Violation
from planner.way_home import HomeCheck
from sim import Sim
from tests.conftest import SCENARIOS

Make = Callable[[Mission], Solution]


# ----- the plans a fake planner (or the plan in force) can be -------------------------------


def best(mission: Mission) -> Solution:
    """The team search's plan (a small, fixed budget: reproducible)."""
    return plan_mission(mission, iterations=200, seed=0).solution


def only_first_drone(mission: Mission) -> Solution:
    """The best plan's targets for its first drone only; the others fly home empty."""
    plan = best(mission)
    first = min(d for d, ts in intent_of(plan).items() if ts)
    routed = route_intent(mission, {first: intent_of(plan)[first]})
    return build_solution(mission, routed.routes)


def nothing(mission: Mission) -> Solution:
    """Every drone straight to its end: valid, and worth nothing."""
    return build_solution(mission, route_intent(mission, {}).routes)


# ----- the host and the fake planner ------------------------------------------------------


class FakePlanner:
    """Answers a round with ``make(mission)`` on the round's mission; with ``propose``, the
    slow tier answers too (right away) with an agents' proposal ``propose(mission)``."""

    def __init__(self, make: Make, propose: Make | None = None) -> None:
        self.make = make
        self.propose = propose
        self.settled: list[tuple[bool, str]] = []  # what the executive decided on proposals
        self.requests: list[PlanRequest] = []

    async def plan(self, request: PlanRequest) -> PlanOutcome:
        self.requests.append(request)
        mission = compile_mission(request.scenario)
        solution = self.make(mission)
        followup = None
        if self.propose is not None:
            proposed = self.propose(mission)

            async def agents() -> AgentProposal:
                return AgentProposal(
                    request.round_id,
                    ("fake agents",),
                    proposed,
                    mission,
                    settle=lambda applied, why: self.settled.append((applied, why)),
                )

            followup = asyncio.get_running_loop().create_task(agents())
        return PlanOutcome(
            request.round_id, request.tick, solution, solution, False, mission=mission,
            followup=followup,
        )  # fmt: skip


class Host:
    """What ``Rounds`` needs of an executive: the real sim, a recorder into a list."""

    def __init__(self, scenario: Scenario, planner: FakePlanner, policy: Policy) -> None:
        self.run_id = "lifecycle-test"
        self.policy = policy
        self.planner = planner
        self.compile = MissionCompiler()
        self.sink = ListSink()
        self.recorder = Recorder(self.run_id, self.sink)
        self.the_sim = Sim(scenario, None)
        self.recorder.sim = self.the_sim
        self.constraints = OperatorConstraints()
        self.instruction: str | None = None
        self.paused = False
        self.speed: float | None = None  # as fast as possible: the tick is the only clock
        self.window: float | None = None  # paced: when a plan must be ready for its tick
        self.re_tasked: list[set[str]] = []
        self.failures: list[str] = []
        self.options = LoopOptions(policy=policy)
        self.agents_off: dict[str, str] = {}
        self.leak_reserve: dict[str, float] = {}

    @property
    def sim(self) -> Sim:
        return self.the_sim

    @property
    def reserve_km(self) -> float:
        return self.policy.reserve_km(s.range for s in self.sim.world.known_environment.sams)

    @property
    def home_check(self) -> HomeCheck | None:
        return self.policy.home_rule

    @property
    def returning(self) -> dict[str, str]:
        return {}

    def planned(self, drones: set[str], leak_extra: Mapping[str, float]) -> None:
        self.re_tasked.append(drones)
        self.leak_reserve.update(leak_extra)

    def fallback(self, drone_id: str, reason: str) -> None:
        self.failures.append(f"{drone_id}: {reason}")

    def replan_failed(self, reason: str) -> None:
        self.failures.append(reason)

    def taken_by(self, seconds: float) -> float:
        return seconds if self.window is None else self.window

    def ahead(self) -> Callable[[Iterable[Path]], None]:
        return lambda paths: None  # no safety layer here to work contacts out for

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [r.payload for r in self.sink.of(EventRecord) if r.kind == kind]


def lifecycle(
    planner: FakePlanner, in_force: Make = only_first_drone, **policy: Any
) -> tuple[Host, Rounds]:
    """A lifecycle at tick 0 whose plan in force is ``in_force`` of the mission."""
    scenario = load_scenario(SCENARIOS / "new_target.json")
    host = Host(scenario, planner, Policy(**policy))
    rounds = Rounds(host)
    mission = compile_mission(scenario)
    rounds.commit_initial(mission, in_force(mission), 0.0)
    return host, rounds


async def step(host: Host, rounds: Rounds, ticks: int = 1) -> None:
    """``ticks`` ticks as the loop runs them: what is due is awaited, decided, then a step."""
    for _ in range(ticks):
        await rounds.await_due()
        rounds.decide()
        host.sim.step()


async def until(host: Host, rounds: Rounds, done: Callable[[], bool], limit: int = 200) -> None:
    for _ in range(limit):
        if done():
            return
        await step(host, rounds)
    raise AssertionError(f"not done within {limit} ticks")


async def replan(host: Host, rounds: Rounds) -> None:
    """An operator's REPLAN, and the ticks until its round is finished."""
    rounds.trigger("operator", "operator:REPLAN")
    await step(host, rounds)
    assert rounds.round is not None
    await until(host, rounds, lambda: rounds.round is None)


def points(rounds: Rounds) -> float:
    assert rounds.plan is not None
    return rounds.plan.total_points


# ----- the fast tier --------------------------------------------------------------------


def test_the_fast_tiers_draft_is_committed_at_its_cut():
    host, rounds = lifecycle(FakePlanner(best))
    initial, weak = rounds.plan_id, points(rounds)

    async def go():
        await replan(host, rounds)

    asyncio.run(go())
    (commit,) = host.events("COMMIT_PLAN")[1:]
    (replan_,) = rounds.replans
    assert commit["origin"] == "planner" and commit["approved"] == "auto"
    assert commit["rebased_from"] is None  # on time: flown as drafted, from its cut
    assert rounds.plan_id == commit["plan_id"] != initial
    assert replan_.status == "committed" and replan_.approved == "auto"
    assert points(rounds) > weak
    assert host.re_tasked  # the drones were re-tasked by the commit


def test_a_draft_whose_cut_has_passed_is_never_flown_blindly_but_rebased():
    """The pure decision: before its cut a draft commits, after it a rebase comes first."""
    host, rounds = lifecycle(FakePlanner(best), commit="review")

    async def go():
        await replan(host, rounds)

    asyncio.run(go())
    draft = rounds.review
    assert draft is not None
    on_time = rebase.fly(draft, "operator", draft.cut, "accepted")
    late = rebase.fly(draft, "operator", draft.cut + 1, "accepted")
    assert isinstance(on_time, Commit) and on_time.draft is draft
    assert isinstance(late, Rebase) and late.purpose == "commit" and late.approved == "operator"
    assert "cut has passed" in late.reason


# ----- review: offer, accept, reject, a late accept, a timeout -------------------------------


def test_review_offers_the_draft_and_nothing_flies_without_an_answer():
    host, rounds = lifecycle(FakePlanner(best), commit="review")
    initial = rounds.plan_id

    async def go():
        await replan(host, rounds)
        await step(host, rounds, 100)

    asyncio.run(go())
    (offered,) = host.events("REVIEW")
    assert rounds.review is not None and offered["plan_id"] == rounds.review.plan_id
    assert offered["origin"] == "planner"
    assert rounds.plan_id == initial and len(host.events("COMMIT_PLAN")) == 1
    assert rounds.replans[0].status == "review"


def test_an_accept_before_the_cut_flies_the_draft_as_it_is():
    host, rounds = lifecycle(FakePlanner(best), commit="review")

    host.speed = 1.0  # paced: a draft is taken when ready, before its cut (the tick stands)

    async def go():
        rounds.trigger("operator", "operator:REPLAN")
        rounds.decide()
        assert rounds.round is not None
        await asyncio.wait([rounds.round.task])
        rounds.decide()
        draft = rounds.review
        assert draft is not None and host.sim.tick < draft.cut
        rounds.accept()  # the operator answers at once
        return draft

    draft = asyncio.run(go())
    commit = host.events("COMMIT_PLAN")[-1]
    assert commit["plan_id"] == draft.plan_id == rounds.plan_id
    assert commit["approved"] == "operator" and commit["rebased_from"] is None
    assert rounds.review is None and not rounds.jobs
    assert draft.replan.status == "committed" and draft.replan.rebased == 0


def test_a_reject_keeps_the_plan_in_force_and_says_why():
    host, rounds = lifecycle(FakePlanner(best), commit="review")
    initial = rounds.plan_id

    async def go():
        await replan(host, rounds)
        rounds.drop_draft("rejected", "operator rejected the draft")
        await step(host, rounds, 40)

    asyncio.run(go())
    (rejected,) = host.events("PLAN_REJECTED")
    assert rejected["reason"] == "operator rejected the draft"
    assert rounds.review is None and rounds.plan_id == initial
    assert rounds.replans[0].status == "rejected"
    assert len(host.events("COMMIT_PLAN")) == 1


def test_a_late_accept_is_rebased_onto_the_state_then_and_again_if_the_world_moved_on():
    """ACCEPT long after the cut: the draft is rebased from now; the world changes while that
    rebase runs, so it is rebased once more, and only then flown, with its provenance."""
    host, rounds = lifecycle(FakePlanner(best), commit="review")

    async def go():
        await replan(host, rounds)
        draft = rounds.review
        assert draft is not None
        await step(host, rounds, 60)  # the operator thinks for 3 s; the drones fly on
        assert host.sim.tick > draft.cut
        rounds.accept()
        assert [j.purpose for j in rounds.jobs] == ["commit"]
        rounds.changed()  # e.g. a target appeared while the rebase was routing
        await until(host, rounds, lambda: len(host.events("COMMIT_PLAN")) == 2)
        return draft

    draft = asyncio.run(go())
    rebases = host.events("REBASE")
    assert [r["plan_id"] for r in rebases] == [draft.plan_id, draft.plan_id]
    assert rebases[0]["cut_tick"] < rebases[1]["cut_tick"]
    commit = host.events("COMMIT_PLAN")[-1]
    assert commit["approved"] == "operator" and commit["rebased_from"] == draft.plan_id
    assert commit["plan_id"] == rounds.plan_id != draft.plan_id
    assert commit["cut_tick"] > draft.cut
    assert draft.replan.rebased == 1 and draft.replan.status == "committed"


def test_an_accept_while_paused_is_held_and_flown_when_the_run_resumes():
    host, rounds = lifecycle(FakePlanner(best), commit="review")

    async def go():
        await replan(host, rounds)
        await step(host, rounds, 30)
        host.paused = True
        rounds.accept()
        assert rounds.approved_waiting and not rounds.jobs
        rounds.decide()  # still paused: nothing moves
        assert rounds.approved_waiting and len(host.events("COMMIT_PLAN")) == 1
        host.paused = False
        await until(host, rounds, lambda: len(host.events("COMMIT_PLAN")) == 2)

    asyncio.run(go())
    assert host.events("COMMIT_PLAN")[-1]["approved"] == "operator"
    assert not rounds.approved_waiting


def test_a_settled_commit_while_paused_is_a_hold():
    """The pure decision after an approved rebase: paused, it waits for the run to resume."""
    host, rounds = lifecycle(FakePlanner(best), commit="review")

    async def go():
        await replan(host, rounds)

    asyncio.run(go())
    draft = rounds.review
    assert draft is not None
    job = RebaseJob("commit", draft, None, draft.cut, 0, 0.0, "operator")  # type: ignore[arg-type]
    paused = Moment(draft.cut, 0, paused=True, commit="review")
    moved = Moment(draft.cut, 1, paused=False, commit="review")
    rebased = rebase.rebase_job(draft.problem, draft.intent, draft.ends, {}, None)
    assert isinstance(rebase.settle_commit(job, rebased, paused), Hold)
    again = rebase.settle_commit(job, rebased, moved)
    assert isinstance(again, Rebase) and "the world changed" in again.reason


def test_a_review_timeout_either_expires_the_draft_or_commits_it_by_policy():
    for action, status in (("keep", "expired"), ("commit", "committed")):
        host, rounds = lifecycle(
            FakePlanner(best), commit="review", review_timeout_s=2, review_timeout_action=action
        )

        async def go(host=host, rounds=rounds):
            await replan(host, rounds)
            await until(host, rounds, lambda rounds=rounds: rounds.review is None, limit=60)
            await step(host, rounds, 20)

        asyncio.run(go())
        assert rounds.replans[0].status == status
        if action == "keep":
            (dropped,) = host.events("PLAN_REJECTED")
            assert dropped["reason"] == "no answer within 2 s"
            assert len(host.events("COMMIT_PLAN")) == 1
        else:
            (timeout,) = host.events("REVIEW_TIMEOUT")
            assert timeout["action"] == "commit" and timeout["waited_s"] >= 2
            assert host.events("COMMIT_PLAN")[-1]["approved"] == "policy"


# ----- a rebase that fails --------------------------------------------------------------


def test_a_rebase_that_fails_is_dropped_with_its_reason_and_planned_again():
    host, rounds = lifecycle(FakePlanner(best), commit="review")

    async def failing() -> Any:
        raise RuntimeError("no route home from the new checkpoint")

    async def go():
        await replan(host, rounds)
        draft = rounds.review
        assert draft is not None
        rounds.review = None
        task = asyncio.get_running_loop().create_task(failing())
        await asyncio.wait([task])
        rounds.jobs.append(RebaseJob("commit", draft, task, host.sim.tick, 0, 0.0, "operator"))
        rounds.decide()
        return draft

    draft = asyncio.run(go())
    (failed,) = host.events("REBASE_FAILED")
    assert failed == {
        "plan_id": draft.plan_id,
        "purpose": "commit",
        "reason": "RuntimeError: no route home from the new checkpoint",
    }
    assert draft.replan.status == "failed"
    # planned again from the state: the next round has started on it
    assert rounds.round is not None and rounds.round.replan.trigger.startswith("rebase_failed:")


# ----- the slow tier: the agents' proposal -----------------------------------------------


def test_a_better_agents_proposal_is_applied_after_the_rebase():
    planner = FakePlanner(only_first_drone, propose=best)
    host, rounds = lifecycle(planner)

    async def go():
        await replan(host, rounds)
        await until(host, rounds, lambda: bool(host.events("AGENT_PROPOSAL")))

    asyncio.run(go())
    (verdict,) = host.events("AGENT_PROPOSAL")
    assert verdict["applied"] is True and verdict["why"].startswith("applied after the rebase")
    commit = host.events("COMMIT_PLAN")[-1]
    assert commit["origin"] == "agents" and commit["agent_applied"] is True
    assert rounds.plan_id == commit["plan_id"]
    assert planner.settled == [(True, verdict["why"])]
    assert rounds.replans[0].agent_applied is True and rounds.replans[0].rebased == 1


def test_review_offers_a_better_agents_proposal_in_place_of_the_fast_draft():
    planner = FakePlanner(only_first_drone, propose=best)
    host, rounds = lifecycle(planner, commit="review")
    initial = rounds.plan_id

    async def go():
        await replan(host, rounds)
        fast = rounds.review
        assert fast is not None and fast.origin == "planner"
        await until(host, rounds, lambda: bool(host.events("AGENT_PROPOSAL")))
        return fast

    fast = asyncio.run(go())
    offered = host.events("REVIEW")
    assert [o["origin"] for o in offered] == ["planner", "agents"]
    assert offered[-1]["note"] == "the agents' proposal beats the plan in force"
    assert rounds.review is not None and rounds.review.agent_applied
    assert rounds.review.parent_id is not None and rounds.review is not fast
    ((applied, why),) = planner.settled
    assert not applied and why.startswith("offered for review: applied after the rebase")
    assert rounds.plan_id == initial  # nothing flies before the operator says so


def test_an_agents_proposal_no_better_than_the_plan_in_force_is_dropped_with_why():
    planner = FakePlanner(best, propose=nothing)
    host, rounds = lifecycle(planner)

    async def go():
        await replan(host, rounds)
        committed = rounds.plan_id
        await until(host, rounds, lambda: bool(host.events("AGENT_PROPOSAL")))
        return committed

    committed = asyncio.run(go())
    (verdict,) = host.events("AGENT_PROPOSAL")
    assert verdict["applied"] is False
    assert verdict["why"].startswith("not applied: 0 points after the rebase")
    assert planner.settled == [(False, verdict["why"])]
    assert rounds.plan_id == committed and rounds.replans[0].agent_applied is False


def test_an_agents_proposal_is_superseded_when_the_world_changes_during_its_rebase():
    planner = FakePlanner(only_first_drone, propose=best)
    host, rounds = lifecycle(planner)

    async def go():
        await replan(host, rounds)
        committed = rounds.plan_id
        await until(host, rounds, lambda: any(j.purpose == "agents" for j in rounds.jobs))
        rounds.changed()
        await until(host, rounds, lambda: not rounds.jobs)
        return committed

    committed = asyncio.run(go())
    assert planner.settled == [(False, "superseded: the world changed while it was rebased")]
    assert not host.events("AGENT_PROPOSAL") and rounds.plan_id == committed


def test_a_newer_round_cancels_the_agents_still_thinking():
    planner = FakePlanner(only_first_drone, propose=best)
    host, rounds = lifecycle(planner)

    async def go():
        await replan(host, rounds)
        first = rounds.replans[0].round_id
        await until(host, rounds, lambda: any(j.purpose == "agents" for j in rounds.jobs))
        (thinking,) = [j for j in rounds.jobs if j.purpose == "agents"]
        rounds.trigger("operator", "operator:REPLAN")
        await step(host, rounds)  # the new round starts and cancels the old agents' work
        assert thinking not in rounds.jobs
        await asyncio.wait([thinking.task])
        assert thinking.task.cancelled()
        await until(host, rounds, lambda: bool(host.events("AGENT_PROPOSAL")))
        return first

    first = asyncio.run(go())
    second = rounds.replans[1].round_id
    assert [e["round_id"] for e in host.events("AGENT_PROPOSAL")] == [second] != [first]
    assert len(planner.settled) == 1  # the first round's proposal was never settled


# ----- the fast tier is monotone: judged against the plan in force rebased ----------------


@pytest.mark.parametrize("commit", ["auto", "review"])
def test_a_rounds_search_starts_from_the_plan_in_force_in_every_mode(commit: str):
    """The request carries the plan in force (its intent and ends, less what was done by
    the cut) for the search to start from: in review too, so the draft offered is worth at
    least keeping what flies."""
    planner = FakePlanner(best)
    host, rounds = lifecycle(planner, in_force=only_first_drone, commit=commit)
    intent, ends = dict(rounds.intent), dict(rounds.ends)
    assert any(intent.values())

    async def go():
        await replan(host, rounds)

    asyncio.run(go())
    (request,) = planner.requests
    warm = request.warm_start
    assert warm is not None
    assert dict(warm.ends) == ends
    assert {d: tuple(t for t in ts if t not in warm.gone) for d, ts in intent.items()} == {
        d: tuple(t for t in ts if t not in warm.gone) for d, ts in warm.intent.items()
    }


def test_a_paced_round_leaves_the_planner_the_deadline_less_the_executives_measured_part():
    """Paced, a request reserves what the executive's own part of a round took, measured on
    its last rounds (from the planner's answer to the plan made into commands), the cut so
    far, and the deadline's part after the last tick that can take the plan within it
    (``PlanRequest.reserved_s``); the first round, an estimate from the first plan's
    commands; as fast as possible, nothing. The wait for the tick is not the executive's
    part: the schedule says it."""
    planner = FakePlanner(best)
    host, rounds = lifecycle(planner)
    host.speed = 1.0
    host.window = 0.45  # the tick that takes a plan within the deadline is due then

    async def go():
        for _ in range(2):
            rounds.trigger("operator", "operator:REPLAN")
            rounds.decide()
            r = rounds.round
            assert r is not None
            await asyncio.wait([r.task])
            await asyncio.sleep(0.2)  # the tick that takes the plan comes this much later
            rounds.decide()
            assert rounds.round is None and r.replan.status == "committed"

    asyncio.run(go())
    first, second = planner.requests
    # the deadline's last 50 ms, and a few ms of the executive's own
    assert 0.05 < first.reserved_s < 0.05 + 0.1
    assert 0.05 < second.reserved_s < 0.05 + 0.1

    unpaced = FakePlanner(best)
    host, rounds = lifecycle(unpaced)
    asyncio.run(replan(host, rounds))
    asyncio.run(replan(host, rounds))
    assert [r.reserved_s for r in unpaced.requests] == [0.0, 0.0]


def test_a_fresh_search_worse_than_the_plan_in_force_rebased_does_not_fly():
    host, rounds = lifecycle(FakePlanner(nothing), in_force=best)
    initial, before = rounds.plan_id, points(rounds)

    async def go():
        await replan(host, rounds)

    asyncio.run(go())
    (commit,) = host.events("COMMIT_PLAN")[1:]
    (draft,) = host.events("DRAFT_READY")
    assert draft["points"] == 0
    assert commit["origin"] == "rebase" and commit["rebased_from"] == initial
    assert commit["why"].startswith("the plan in force, rebased onto the cut: ")
    assert commit["why"].endswith("the fresh search 0")
    assert points(rounds) > 0 and points(rounds) == commit["points"] <= before
    versions = {v.plan_id: v.status for v in host.sink.of(PlanVersionRecord)}
    assert versions[draft["plan_id"]] == "superseded"  # the fresh draft, passed over
    assert rounds.replans[0].status == "committed"
    assert rounds.replans[0].points == commit["points"]


def test_a_fresh_search_better_than_the_plan_in_force_rebased_flies(monkeypatch):
    """... and the plan in force, only routed to count its points, is never validated or
    made into commands: whatever those said, the fresh draft would fly."""
    host, rounds = lifecycle(FakePlanner(best), in_force=only_first_drone)
    finished: list[rebase.Routed] = []
    monkeypatch.setattr(rebase, "finish", lambda r: finished.append(r))

    async def go():
        await replan(host, rounds)

    asyncio.run(go())
    assert finished == []
    (commit,) = host.events("COMMIT_PLAN")[1:]
    (draft,) = host.events("DRAFT_READY")
    assert commit["origin"] == "planner" and commit["plan_id"] == draft["plan_id"]
    fresh, kept = (float(x) for x in re.findall(r"[\d.]+", commit["why"]))
    assert commit["why"].startswith("the fresh search: ")
    assert fresh == commit["points"] > kept > 0


def test_the_plan_in_force_does_not_win_against_the_operators_constraints():
    """Worth more, but it flies a target the operator has since forbidden: the change forces
    the fresh draft, and the reason says so."""
    host, rounds = lifecycle(FakePlanner(nothing), in_force=best)
    drone, targets = max(rounds.intent.items(), key=lambda kv: len(kv[1]))
    host.constraints = OperatorConstraints(forbidden={drone: [targets[-1]]})

    async def go():
        await replan(host, rounds)

    asyncio.run(go())
    (commit,) = host.events("COMMIT_PLAN")[1:]
    assert commit["origin"] == "planner" and commit["points"] == 0
    assert "breaks a constraint" in commit["why"] and targets[-1] in commit["why"]


def _fresh_draft_and_the_plan_in_force_routed() -> tuple[Draft, rebase.Routed]:
    """A round's fresh draft worth nothing (offered in review, so not judged yet) and the
    plan in force (the best plan) routed onto its cut and mission."""
    host, rounds = lifecycle(FakePlanner(nothing), in_force=best, commit="review")

    async def go():
        await replan(host, rounds)

    asyncio.run(go())
    fresh = rounds.review
    assert fresh is not None
    routed = rebase.route_only(
        fresh.problem, fresh.mission, {}, dict(rounds.intent), dict(rounds.ends), {}
    )
    return fresh, routed


def test_the_judge_flies_the_fresh_draft_when_the_plan_in_force_cannot_fly_on():
    """The plan in force, rebased, is worth more but the validator refuses it (say a SAM
    now covers its way home): the change forces the fresh draft, whatever it is worth."""
    fresh, routed = _fresh_draft_and_the_plan_in_force_routed()
    kept = rebase.finish(routed)
    assert kept.solution.total_points > fresh.solution.total_points == 0
    rival = Rival("in-force", kept.solution.total_points, kept)
    preferred = fast_tier.judge(fresh, rival, fresh.cut)
    assert isinstance(preferred, Commit) and preferred.draft.parent_id == "in-force"
    refused = replace(kept, violations=[Violation("sam", "1", "its way home crosses SAM9")])
    forced = fast_tier.judge(
        fresh, Rival("in-force", kept.solution.total_points, refused), fresh.cut
    )
    assert isinstance(forced, Commit) and forced.draft is fresh
    assert forced.reason == (
        "the fresh search: the plan in force cannot fly on"
        " ([sam] drone 1: its way home crosses SAM9)"
    )


def test_the_plan_in_force_routed_only_is_counted_as_it_would_be_finished():
    """A rival only routed (``rebase.route_only``) counts the points its solution would
    collect, and the judge flies a fresh draft worth as much without it."""
    fresh, routed = _fresh_draft_and_the_plan_in_force_routed()
    kept = rebase.finish(routed)
    assert routed.points == kept.solution.total_points > 0
    assert fast_tier.contends(routed.points, fresh.solution.total_points)
    richer = replace(fresh, solution=kept.solution)
    assert not fast_tier.contends(routed.points, richer.solution.total_points)
    flown = fast_tier.judge(richer, Rival("in-force", routed.points, None), fresh.cut)
    assert isinstance(flown, Commit) and flown.draft is richer
    assert flown.reason == (
        f"the fresh search: {routed.points:g} points, the plan in force rebased onto the cut"
        f" {routed.points:g}"
    )
