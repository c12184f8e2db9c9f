"""The executive's observe-decide-act loop against the real simulation and planner."""

from __future__ import annotations

import asyncio

import pytest

from executive.contracts import (
    EventRecord,
    HumanCommand,
    InputRecord,
    PlanOutcome,
    PlanVersionRecord,
    StateHashRecord,
)
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.replay import replay
from executive.traces.sinks import ListSink
from planner.edits import AddSam, SetFuel
from planner.model import Solution
from planner.scenario import load_scenario
from sim.pacing import MAX_SPEED
from tests.conftest import SCENARIOS

# popup_sam.json's SAM2 (15 km) makes the robust reserve 10 km, and the first plan it leaves
# goes nowhere near where SAM3 pops up: with the 1 km reserve SAM3 lands on D2's path, which
# is what these tests of the cut, the freeze and the validator need.
_RESERVE = {"popup_sam.json": "fixed"}


def _run(name: str, *, replan: bool = True, planner=None, policy=None, speed=None, before=None):
    scenario = load_scenario(SCENARIOS / name)
    sink = ListSink()
    reserve = _RESERVE.get(name, "robust")
    executive = Executive(
        scenario,
        planner=planner or AlgorithmicPlanner(iterations=2000),
        sink=sink,
        options=LoopOptions(policy=policy or Policy(replan=replan, reserve=reserve)),
    )

    async def go():
        if before is not None:
            await before(executive)
        return await executive.run(speed)

    return executive, sink, asyncio.run(go())


def _events(sink: ListSink, kind: str) -> list[EventRecord]:
    return [r for r in sink.of(EventRecord) if r.kind == kind]


@pytest.mark.parametrize(
    ("name", "strictly"),
    [("popup_sam.json", False), ("lost_drone.json", True), ("new_target.json", True)],
)
def test_replanning_beats_flying_blind(name, strictly):
    _, sink, with_replan = _run(name)
    _, blind_sink, blind = _run(name, replan=False)
    # Flying "blind" still has the safety layer: around the pop-up SAM it diverts D2 on
    # the same targets, which is all a replan can do there. Taking over a lost drone's
    # targets or picking up a new one takes a replan.
    assert with_replan.outcome.total_points >= blind.outcome.total_points
    if strictly:
        assert with_replan.outcome.total_points > blind.outcome.total_points
    else:
        assert _events(blind_sink, "SAFETY_DIVERT")
    assert not blind.outcome.lost or all(
        blind.outcome.drones[d].lost_reason == "disabled" for d in blind.outcome.lost
    )
    committed = [r for r in with_replan.replans if r.status == "committed"]
    assert committed, "no replan was committed"
    # No drone lost to a SAM or to fuel: only the scripted disable may take one.
    for drone in with_replan.outcome.drones.values():
        assert drone.lost_reason in (None, "disabled")
    assert not _events(sink, "command_rejected")


def test_every_committed_plan_passed_the_validator():
    _executive, sink, report = _run("popup_sam.json")
    committed = [r for r in sink.of(PlanVersionRecord) if r.status == "committed"]
    assert len(committed) >= 2  # the first plan and the replan
    # The remainder plan is valid against the problem it was made for.
    round_ = next(r for r in report.replans if r.status == "committed")
    plan = next(r for r in committed if r.round_id == round_.round_id)
    cut = _events(sink, "CUT_AND_FREEZE")[0].payload
    assert cut["round_id"] == round_.round_id
    solution = Solution.model_validate(plan.solution)
    assert all(
        route.route[0] in ("D2_START", "D3_START", "A1", "A2", "A3")
        for route in solution.routes.values()
    )


def test_popup_sam_path_is_cut_at_the_checkpoint_and_frozen_before_it():
    _executive, sink, _report = _run("popup_sam.json")
    cut = _events(sink, "CUT_AND_FREEZE")[0]
    fly = [
        r
        for r in sink.of(InputRecord)
        if r.kind == "command" and r.payload["kind"] == "fly_path" and r.tick > 0
    ]
    assert fly and all(r.tick == cut.payload["cut_tick"] for r in fly)
    for r in fly:  # each new path starts at that drone's checkpoint
        checkpoint = cut.payload["checkpoints"][r.payload["drone"]]
        x0, y0 = r.payload["path"]["pieces"][0][1:3]
        assert abs(x0 - checkpoint["x"]) < 1e-6 and abs(y0 - checkpoint["y"]) < 1e-6
    applied = [
        r
        for r in _events(sink, "command_applied")
        if r.payload["command"] == "fly_path" and r.tick > 0
    ]
    assert len(applied) == len(fly)


def test_batch_runs_reproduce_and_replay_exactly():
    _, sink1, r1 = _run("lost_drone.json")
    _, sink2, r2 = _run("lost_drone.json")
    h1 = [(r.tick, r.state_hash) for r in sink1.of(StateHashRecord)]
    h2 = [(r.tick, r.state_hash) for r in sink2.of(StateHashRecord)]
    assert h1 == h2 and len(h1) > 100
    assert r1.outcome.state_hash == r2.outcome.state_hash
    # Re-execute from the recorded inputs alone: no planner involved.
    scenario = load_scenario(SCENARIOS / "lost_drone.json").model_dump(mode="json", by_alias=True)
    rows = [
        {"tick": r.tick, "kind": r.kind, "payload": r.payload, "source": r.source}
        for r in sink1.of(InputRecord)
    ]
    result = replay(scenario, rows, dict(h1), hash_every=Policy().hash_every)
    assert result.exact, result.mismatches[:3]
    assert result.final_hash == r1.outcome.state_hash


class _GatedPlanner:
    """Plans only when the test opens the gate: lets a test decide when a draft arrives."""

    def __init__(self) -> None:
        self.inner = AlgorithmicPlanner(iterations=500)
        self.gate = asyncio.Event()
        self.requests = []

    async def plan(self, request) -> PlanOutcome:
        self.requests.append(request)
        if len(self.requests) > 1:  # the first round is the initial plan
            await self.gate.wait()
        return await self.inner.plan(request)


def _unpaced_once_committed(executive, planner, topic, payload) -> None:
    """Once the gated draft is committed, what a paced test watches has happened: the rest
    of the mission flies as fast as possible (the same ticks and inputs; a paced tick waits
    at least the event loop's 1 ms, so 30,000 more of them took half a minute)."""
    if topic == "events" and payload.get("kind") == "COMMIT_PLAN" and planner.gate.is_set():
        executive.set_speed(None)


def test_a_late_draft_is_rebased_never_applied_blindly():
    planner = _GatedPlanner()
    scenario = load_scenario(SCENARIOS / "new_target.json")
    sink = ListSink()

    def publish(topic, payload):
        # Open the gate only once the first replan's cut tick has passed.
        if (
            topic == "telemetry"
            and len(planner.requests) >= 2
            and payload["tick"] > planner.requests[1].tick + 5
        ):
            planner.gate.set()
        _unpaced_once_committed(executive, planner, topic, payload)

    executive = Executive(
        scenario,
        planner=planner,
        sink=sink,
        publish=publish,
        options=LoopOptions(policy=Policy(planning_deadline_s=0.01, lookahead_margin_s=0.0)),
    )
    report = asyncio.run(executive.run(speed=400.0))
    first = report.replans[0]
    assert first.status == "committed" and first.rebased >= 1  # late, so routed again
    drafted = next(r for r in sink.of(PlanVersionRecord) if r.status == "draft")
    rebased = [r for r in sink.of(PlanVersionRecord) if r.status == "rebased"]
    assert drafted.plan_id in {r.plan_id for r in rebased}
    committed = [r for r in sink.of(PlanVersionRecord) if r.status == "committed" and r.provenance]
    late = [r for r in committed if r.provenance.get("rebased_from")]
    assert late, "the late draft was not committed from its rebase"
    # The rebase kept the draft's intent: the same targets, minus what was done meanwhile.
    intent = late[0].provenance["intent"]
    planned = {t for r in drafted.solution["routes"].values() for t in r["visited_targets"]}
    assert {t for ts in intent.values() for t in ts} <= planned
    assert not _events(sink, "command_rejected")  # nothing was applied blindly
    assert report.outcome.total_points == 74.0


def test_a_run_behind_its_schedule_still_plans_and_commits():
    """At the top speed (a 5 µs period, faster than any machine ticks) every tick is already
    due: the loop must still hand the event loop a turn, or the round's worker finishes and
    its task never resumes (the mission then flew its first plan to the end)."""

    def publish(topic, payload):
        if topic == "events" and payload.get("kind") == "COMMIT_PLAN" and payload["tick"] > 0:
            executive.stop()  # what the test watches has happened

    executive = Executive(
        load_scenario(SCENARIOS / "new_target.json"),
        planner=AlgorithmicPlanner(iterations=300),
        sink=ListSink(),
        publish=publish,
    )
    report = asyncio.run(executive.run(speed=MAX_SPEED))
    assert report.overruns > report.ticks // 2  # it was behind its schedule throughout
    assert [r.status for r in report.replans] == ["committed"]
    (commit,) = report.commits  # the replan, with the new target in it
    assert "T13" in {t for ts in commit["intent"].values() for t in ts}


def test_ticks_keep_running_while_a_plan_is_being_made():
    planner = _GatedPlanner()
    scenario = load_scenario(SCENARIOS / "new_target.json")
    ticks_while_planning = []

    def publish(topic, payload):
        if topic == "telemetry" and len(planner.requests) >= 2 and not planner.gate.is_set():
            ticks_while_planning.append(payload["tick"])
            if len(ticks_while_planning) >= 200:
                planner.gate.set()
        _unpaced_once_committed(executive, planner, topic, payload)

    executive = Executive(scenario, planner=planner, sink=ListSink(), publish=publish)
    asyncio.run(executive.run(speed=1000.0))
    assert len(ticks_while_planning) >= 200
    assert ticks_while_planning == sorted(ticks_while_planning)


def _review_run(answer: str):
    """Run new_target.json with drafts waiting for review; the operator answers ``answer``."""
    scenario = load_scenario(SCENARIOS / "new_target.json")
    sink = ListSink()
    holder = {}

    def publish(topic, payload):
        if topic == "events" and payload.get("kind") == "REVIEW":
            holder["ex"].command(HumanCommand(answer))

    executive = Executive(
        scenario,
        planner=AlgorithmicPlanner(iterations=1000),
        sink=sink,
        publish=publish,
        options=LoopOptions(policy=Policy(commit="review")),
    )
    holder["ex"] = executive
    return sink, asyncio.run(executive.run(None))


def test_review_policy_waits_for_accept_then_commits():
    sink, report = _review_run("ACCEPT")
    assert _events(sink, "REVIEW")
    assert any(r.status == "committed" for r in report.replans)
    assert report.outcome.total_points == 74.0


def test_reject_keeps_the_committed_plan():
    sink, report = _review_run("REJECT")
    assert _events(sink, "PLAN_REJECTED")
    assert [r.status for r in report.replans] == ["rejected"]
    assert report.outcome.total_points == 64.0  # the first plan, flown as committed


def test_pause_holds_and_resume_continues():
    scenario = load_scenario(SCENARIOS / "demo.json")
    sink = ListSink()
    executive = Executive(scenario, planner=AlgorithmicPlanner(iterations=1000), sink=sink)
    seen = {}

    def publish(topic, payload):
        if topic != "telemetry":
            return
        tick = payload["tick"]
        if tick == 100:
            executive.command(HumanCommand("PAUSE"))
        if tick == 200:
            seen["paused"] = {d: s["status"] for d, s in payload["drones"].items()}
            executive.command(HumanCommand("RESUME"))
        if tick == 300:
            seen["resumed"] = {d: s["status"] for d, s in payload["drones"].items()}

    executive.watch(publish=publish)
    report = asyncio.run(executive.run(None))
    flying = [d for d, s in seen["resumed"].items() if s == "flying"]
    assert flying and all(seen["paused"][d] == "holding" for d in flying)
    assert report.outcome.total_points == 64.0 and not report.outcome.lost


def test_fuel_safety_sends_a_drone_home():
    scenario = load_scenario(SCENARIOS / "demo.json")
    sink = ListSink()

    async def before(executive):
        await executive.start()
        # Enough to get home, not to finish the plan: it flies on, then turns home in time.
        executive.edit(SetFuel(drone="2", fuel=40.0, tick=3000, source="operator"))

    executive = Executive(
        scenario,
        planner=AlgorithmicPlanner(iterations=1000),
        sink=sink,
        options=LoopOptions(policy=Policy(triggers=("sam", "drone_lost", "target", "operator"))),
    )

    async def go():
        await before(executive)
        return await executive.run(None)

    report = asyncio.run(go())
    assert _events(sink, "RETURN_TO_BASE")
    assert report.outcome.drones["2"].status == "landed"
    assert "2" in report.safety_returns


def test_operator_sam_on_a_planned_path_triggers_a_replan_and_no_loss():
    scenario = load_scenario(SCENARIOS / "demo.json")
    sink = ListSink()
    executive = Executive(scenario, planner=AlgorithmicPlanner(iterations=1000), sink=sink)

    async def go():
        solution = await executive.start()
        route = solution.routes["2"]
        # A visible SAM dropped on D2's second leg, well ahead of it.
        path = route.path
        x, y = path[len(path) // 2]
        executive.edit(AddSam(id="OP1", pos=(x, y), range=3.0, tick=50, source="operator"))
        return await executive.run(None)

    report = asyncio.run(go())
    assert any(r.trigger.startswith("add_sam:OP1") for r in report.replans)
    assert not report.outcome.lost
    committed = [r for r in sink.of(PlanVersionRecord) if r.status == "committed"]
    final = Solution.model_validate(committed[-1].solution)
    assert final.total_points > 0
