"""A move said on a live run changes only the drones it names (issue 25): "move T2 to D1"
re-plans D1 (which gets T2) and D2 (which had it); D3 keeps the plan in force from the cut
onward, target for target, and flies exactly where it would have flown without the words.
"... and replan everything" asks for the whole remainder again."""

from __future__ import annotations

import asyncio

from agents.coordinator import coordinate_scenario, only_drones
from agents.engines import make_engine
from agents.planning.round import AgentPlanner
from agents.words.ask import answer
from agents.words.command import coordinate_live
from agents.words.state import from_executive
from executive.contracts import EventRecord, HumanCommand
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS

SCENARIO = load_scenario(SCENARIOS / "demo.json")
ASKED_AT, UNTIL = 100, 12000  # D3 collects T8 and T1 by then


def _executive(sink: ListSink, policy: Policy | None = None) -> Executive:
    planner = AgentPlanner(make_engine("rules"), sink, iterations=1500, use_agents=False)
    return Executive(
        SCENARIO,
        planner=planner,
        sink=sink,
        options=LoopOptions(policy=policy or Policy()),
        coordinate=coordinate_live,
    )


def _fly(text: str | None, policy: Policy | None = None):
    """The demo flown to ``UNTIL``; at ``ASKED_AT`` the operator says ``text`` (if any)
    through the live ask. Returns (executive, sink, the intent in force before the words,
    the answer)."""
    sink = ListSink()
    executive = _executive(sink, policy)

    async def go():
        await executive.start()
        await executive.run(None, until=ASKED_AT)
        before = {d: list(ts) for d, ts in executive.rounds.intent.items()}
        out = None
        if text is not None:
            out = await answer(
                text,
                from_executive(executive),
                engine=make_engine("rules"),
                sink=sink,
                live=executive,
            )
        await executive.run(None, until=UNTIL)
        return before, out

    before, out = asyncio.run(go())
    return executive, sink, before, out


def _events(sink: ListSink, kind: str) -> list[EventRecord]:
    return [e for e in sink.of(EventRecord) if e.kind == kind]


def test_a_live_move_replans_only_the_drones_it_names():
    executive, sink, before, out = _fly("move T2 to D1")
    quiet, _, quiet_before, _ = _fly(None)  # the same run, nothing said
    assert before == quiet_before
    assert "T2" in before["2"] and "T2" not in before["1"] and before["3"]  # the premise
    assert out["applied"] is True
    assert "Only D1, D2 are re-planned" in out["answer"], out["answer"]

    [said] = _events(sink, "CONSTRAINTS")
    assert said.payload["only_drones"] == ["1", "2"]
    remainder = [e for e in _events(sink, "REPLAN_REMAINDER") if "operator" in e.payload["trigger"]]
    assert remainder and remainder[-1].payload["only_drones"] == ["1", "2"]
    commit = _events(sink, "COMMIT_PLAN")[-1]
    assert commit.tick > ASKED_AT and commit.payload["cut_tick"] > ASKED_AT
    assert executive.replans[-1].trigger == "operator:REPLAN"
    assert executive.replans[-1].status == "committed"

    after = {d: list(ts) for d, ts in executive.rounds.intent.items()}
    # the move is honoured: T2 is D1's now, and D2 no longer has it
    assert "T2" in after["1"] and "T2" not in after["2"]
    # D1 gets nothing else of another drone's, D2 keeps the rest of its own
    assert set(after["1"]) == {"T2"}
    assert set(after["2"]) == set(before["2"]) - {"T2"}
    # D3, not named, keeps the plan in force from the cut onward: the same targets in the
    # same order (less those reached before the cut) and the same end airport ...
    assert after["3"] and after["3"] == before["3"][len(before["3"]) - len(after["3"]) :]
    assert executive.plan.routes["3"].route[-1] == quiet.plan.routes["3"].route[-1]
    # ... and flies exactly where it would have flown had nothing been said
    assert executive.sim.tick == quiet.sim.tick == UNTIL
    x, y, _ = executive.sim.world.position("3")
    qx, qy, _ = quiet.sim.world.position("3")
    assert abs(x - qx) < 1e-6 and abs(y - qy) < 1e-6
    by_d3 = {t for t, d in executive.sim.world.collected().items() if d == "3"}
    assert by_d3 == {t for t, d in quiet.sim.world.collected().items() if d == "3"}
    assert by_d3  # it flew on and collected


def test_a_full_replan_asked_with_the_move_replans_every_drone():
    _, sink, _, out = _fly("move T2 to D1 and replan everything")
    assert out["applied"] is True
    assert "The remainder is replanned" in out["answer"]
    [said] = _events(sink, "CONSTRAINTS")
    assert said.payload["only_drones"] == []
    remainder = [e for e in _events(sink, "REPLAN_REMAINDER") if "operator" in e.payload["trigger"]]
    assert remainder and "only_drones" not in remainder[-1].payload


def test_a_move_waits_for_review_with_the_others_kept_and_flies_on_accept():
    sink = ListSink()
    executive = _executive(sink, Policy(commit="review"))

    async def go():
        await executive.start()
        await executive.run(None, until=ASKED_AT)
        before = {d: list(ts) for d, ts in executive.rounds.intent.items()}
        executive.command(HumanCommand("REPLAN", "move T2 to D1", "operator"))
        await executive.run(None, until=ASKED_AT + 200)  # past the round's cut
        draft = executive.rounds.review
        executive.command(HumanCommand("ACCEPT", None, "operator"))
        await executive.run(None, until=ASKED_AT + 400)
        return before, draft

    before, draft = asyncio.run(go())
    assert draft is not None, "the move's draft never came up for review"
    kept = list(draft.intent["3"])
    assert kept and kept == before["3"][len(before["3"]) - len(kept) :]  # D3 as it was
    assert "T2" in draft.intent["1"] and "T2" not in draft.intent["2"]
    assert executive.rounds.plan_id == _events(sink, "COMMIT_PLAN")[-1].payload["plan_id"]
    assert "T2" in executive.rounds.intent["1"]


def test_only_drones_is_empty_without_a_plan_or_for_words_that_are_not_only_moves():
    plan = {"1": [], "2": ["T11", "T2", "T3", "T5", "T9"], "3": ["T8", "T1", "T4", "T10", "T6"]}
    for text, named in (
        ("move T2 to D1", ("1", "2")),
        ("Move T5 from D2 to D3", ("2", "3")),
        ("move T2 to D1, full replan", ()),
        ("move T2 to D1 and re-optimise all routes", ()),
        ("move T2 to D1 and keep 20 km in reserve", ()),  # a reserve can change any route
        ("move T2 to D1 and do not visit T4", ()),
    ):
        d = coordinate_scenario(text, SCENARIO, allocation=plan)
        assert d.errors == [], (text, d.errors)
        assert only_drones(d, plan) == named, text
    assert only_drones(coordinate_scenario("move T2 to D1", SCENARIO), None) == ()
