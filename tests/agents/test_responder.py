"""The responder: rules answers cite numbers that match the live state; the anthropic engine
(the real SDK against the local Messages API server) answers by tool use, and every bad
answer leaves the rules answer standing with the reason traced."""

from __future__ import annotations

import asyncio
import math

import pytest

from agents import engines as sdk  # SDK engines load on first use (tests/conftest.py)
from agents.engines import make_engine
from agents.responder import RESPONDER_PROMPT, RESPONDER_TOOL, respond, responder_rules
from agents.words.ask import answer
from agents.words.state import MissionState, from_executive
from executive.contracts import AgentRunRecord
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from planner.model import drone_label
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS
from tests.flown import flown
from tests.messages_api import Status, Text, ToolUse

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

QUESTION_MARGIN = "Which drone has the most fuel margin?"
TICKS = 5000  # new_target.json: D2 has collected T11 (tick 4242); T13 appears at 6000


def _live(name: str, ticks: int) -> Executive:
    return flown(name, ticks)


@pytest.fixture(scope="module")
def live() -> Executive:
    return _live("new_target.json", TICKS)


@pytest.fixture(scope="module")
def state(live) -> MissionState:
    return from_executive(live)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in (
        "ISR_ANTHROPIC_MODEL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


def _truth_margins(executive: Executive) -> dict[str, tuple[float, float, float]]:
    """drone -> (margin, fuel, remaining path), straight from the simulation's world."""
    world = executive.sim.world
    out = {}
    for d in executive.scenario.drone_configs:
        fuel = world.fuel(d)
        status = world.status(d)
        if status == "flying":
            flight = world.flight(d)
            remaining = flight.length - world.progress(d)
        elif status == "parked":
            route = executive.plan.routes[d]
            remaining = route.distance if route.visited_targets else 0.0
        else:
            continue
        out[d] = (fuel - remaining, fuel, remaining)
    return out


def _number(out: dict, label: str) -> float:
    return next(n["value"] for n in out["numbers"] if n["label"] == label)


# ----------------------------------------------------------------------------- rules answers


def test_most_fuel_margin_names_the_drone_and_cites_its_numbers(live, state):
    truth = _truth_margins(live)
    best = max(truth, key=lambda d: truth[d][0])
    margin, fuel, remaining = truth[best]
    out = responder_rules("Which drone has the most fuel margin?", state)
    label = drone_label(best)
    assert out["answer"].startswith(f"{label} has the most fuel margin")
    assert (
        f"{label}: {margin:.1f} km margin (fuel {fuel:.1f}, remaining path {remaining:.1f})"
    ) in out["answer"]
    assert _number(out, f"{label} fuel margin") == pytest.approx(margin, abs=1e-3)
    for d, (m, f, _r) in truth.items():  # every drone is compared, with its numbers
        assert f"{drone_label(d)}: {m:.1f} km margin" in out["answer"]
        assert _number(out, f"{drone_label(d)} fuel left") == pytest.approx(f, abs=1e-3)
    least = responder_rules("which drone has the least fuel margin?", state)
    worst = min(truth, key=lambda d: truth[d][0])
    assert least["answer"].startswith(f"{drone_label(worst)} has the least fuel margin")


def test_points_so_far_and_planned(live, state):
    world = live.sim.world
    collected = world.collected()
    assert collected, "the fixture should have collected a target by now"
    so_far = float(world.fleet_view(live.sim.tick).points.sum())
    env = world.known_environment
    still = [t for r in live.plan.routes.values() for t in r.visited_targets if t not in collected]
    still_points = sum(env.target(t).priority for t in still)
    out = responder_rules("how many points so far / planned?", state)
    assert _number(out, "points collected") == pytest.approx(so_far)
    assert _number(out, "points still to collect") == pytest.approx(still_points)
    assert _number(out, "points planned in total") == pytest.approx(so_far + still_points)
    assert f"Points so far: {so_far:g} collected" in out["answer"]
    assert f"Planned: {so_far + still_points:g} in total" in out["answer"]


def test_targets_not_collected_and_unassigned(live, state):
    world = live.sim.world
    collected = world.collected()
    open_ = [t.id for t in world.known_environment.targets if t.id not in collected]
    out = responder_rules("which targets are not collected?", state)
    assert _number(out, "targets not collected") == len(open_)
    assert out["ids"] == open_
    assert "T7 (priority 8, excluded: inside SAM1" in out["answer"]
    unassigned = responder_rules("which targets are unassigned?", state)
    assert unassigned["ids"] == ["T7", "T12"]  # both inside known SAMs
    assert "2 targets unassigned" in unassigned["answer"]


def test_where_is_a_drone_and_what_it_is_doing(live, state):
    world = live.sim.world
    x, y, _ = world.position("2")
    out = responder_rules("where is D2?", state)
    assert f"D2 is flying at ({x:.1f}, {y:.1f})" in out["answer"]
    assert f"fuel {world.fuel('2'):.1f} of 180.0 km" in out["answer"]
    next_targets = [t for t in live.plan.routes["2"].visited_targets if t not in world.collected()]
    assert "Next: " + ", ".join(next_targets) in out["answer"]
    assert _number(out, "D2 x") == pytest.approx(x, abs=1e-3)
    doing = responder_rules("what is drone 3 doing?", state)
    assert doing["answer"].startswith("D3 is flying")


def test_why_was_a_target_excluded(state):
    t7 = state.environment.target("T7")
    sam1 = next(s for s in state.environment.sams if s.id == "SAM1")
    dist = math.hypot(t7.x - sam1.x, t7.y - sam1.y)
    out = responder_rules("why was T7 excluded?", state)
    assert (
        f"T7 (priority 8) is excluded: inside SAM1 ({dist:.1f} km from its centre, range 12)"
        in out["answer"]
    )
    assert _number(out, "T7 distance to SAM1 centre") == pytest.approx(dist, abs=1e-3)
    planned = responder_rules("why was T1 excluded?", state)
    assert "is not excluded: it is planned for D3" in planned["answer"]


def test_mission_status_and_known_sams(state):
    out = responder_rules("what is the status of the mission?", state)
    assert out["answer"].startswith(f"Mission at tick {TICKS} ({TICKS / 20:.1f} s), FLYING.")
    assert "excluded: T7, T12" in out["answer"]
    sams = responder_rules("which SAMs are known?", state)
    assert sams["answer"].startswith(
        "2 SAMs known: SAM1 at (35, 45) range 12 km; SAM2 at (50, 55) range 15 km."
    )


def test_a_hidden_sam_is_never_in_an_answer():
    executive = _live("popup_sam.json", 20)  # SAM3 is hidden from tick 0
    state = from_executive(executive)
    assert "SAM3" in {s.id for s in executive.sim.world.truth_environment.sams}
    assert "SAM3" not in {s.id for s in state.environment.sams}
    for question in ("which SAMs are known?", "what is the status of the mission?"):
        assert "SAM3" not in responder_rules(question, state)["answer"]


def test_no_plan_is_said_plainly(state):
    empty = state.model_copy(update={"plan": None, "collected": {}})
    out = responder_rules("how many points?", empty)
    assert out["answer"].startswith("No plan yet — plan first?")


# ----------------------------------------------------------------------------- through engines


def test_the_rules_engine_answers_through_words_and_is_traced(state):
    sink = ListSink()
    out = asyncio.run(
        answer(
            "Which drone has the most fuel margin?", state, engine=make_engine("rules"), sink=sink
        )
    )
    assert out["intent"] == "question"
    assert (
        out["answer"] == responder_rules("Which drone has the most fuel margin?", state)["answer"]
    )
    records = sink.of(AgentRunRecord)
    assert [r.agent for r in records] == ["responder", "coordinator"]
    responder, root = records
    assert responder.parent_run_id == root.run_id and root.parent_run_id is None
    assert out["agent_runs"] == [root.run_id, responder.run_id]
    assert responder.applied and responder.error is None and responder.engine == "rules"
    assert root.mission_run_id == responder.mission_run_id == state.run_id


def _ask(api, state, question="Which drone has the most fuel margin?", timeout_s=5.0):
    sink = ListSink()

    async def go():
        async with sdk.AnthropicEngine(
            model="claude-test", api_key="sk-test", base_url=api.url
        ) as eng:
            return await respond(question, state, engine=eng, sink=sink, timeout_s=timeout_s)

    done = asyncio.run(go())
    [record] = sink.of(AgentRunRecord)
    assert record is done.record
    return done


def test_anthropic_answer_by_tool_use_is_used(messages_api, state):
    reply = {
        "answer": "D1 has the most fuel margin: 200.0 km.",
        "numbers": [{"label": "D1 fuel margin", "value": 200.0, "unit": "km"}],
        "ids": ["D1"],
    }
    messages_api.script(ToolUse(reply, usage=(900, 40)))
    done = _ask(messages_api, state)
    assert done.applied and done.error is None
    assert done.output.answer == reply["answer"]
    assert (done.record.tokens_in, done.record.tokens_out) == (900, 40)
    assert done.record.model == "claude-test" and done.record.engine == "anthropic"
    [request] = messages_api.requests
    assert request["tool_choice"] == {"type": "tool", "name": RESPONDER_TOOL.name}
    assert request["system"].startswith(RESPONDER_PROMPT.splitlines()[0])
    assert "HARD CONSTRAINTS" in request["system"]
    prompt = request["messages"][0]["content"]
    d2 = state.drones["2"]
    assert f"fuel {d2.fuel:.1f} of budget 180.0" in prompt  # the numbers to cite
    assert prompt.endswith("OPERATOR QUESTION: Which drone has the most fuel margin?")


@pytest.mark.parametrize(
    "reply, kind",
    [
        (Text("D1, probably."), "malformed"),
        (ToolUse({"answer": "D1", "numbers": "lots", "ids": []}), "malformed"),
        (ToolUse({"answer": "T42 has the most margin", "numbers": [], "ids": ["T42"]}), "invalid"),
        (Status(500), "server_error"),
        (Status(429), "rate_limited"),
    ],
)
def test_a_bad_engine_answer_leaves_the_rules_answer_with_the_reason(
    messages_api, state, reply, kind
):
    messages_api.script(reply)
    done = _ask(messages_api, state)
    rules = responder_rules("Which drone has the most fuel margin?", state)
    assert not done.applied
    assert done.output.answer == rules["answer"]
    assert done.record.error.startswith(kind)
    assert done.record.validated_output["source"] == "rules"
    if kind == "invalid":
        assert "T42" in done.record.error


def test_a_slow_answer_past_the_deadline_is_cut(messages_api, state):
    messages_api.script(ToolUse({"answer": "late", "numbers": [], "ids": []}, delay=30))
    done = _ask(messages_api, state, timeout_s=0.5)
    assert not done.applied and done.record.error.startswith("timeout")
    assert done.output.answer.startswith(
        drone_label(max(state.drones.values(), key=lambda d: d.margin_km or -1).id)
    )


def test_the_live_host_answers_an_ask_message_through_make_asker():
    """``MissionHost(ask=make_asker(...))``: an ``ask`` on the cmd topic comes back on
    ``answers`` with the responder's numbers, and its agent runs go to the given sink."""
    from agents.words.ask import make_asker
    from executive.bus import InProcessBus
    from mission.live.host import MissionHost

    sink = ListSink()
    executive = Executive(
        load_scenario(SCENARIOS / "new_target.json"),
        planner=AlgorithmicPlanner(iterations=500),
        sink=ListSink(),
        options=LoopOptions(policy=Policy()),
    )

    async def go():
        bus = InProcessBus()
        host = MissionHost(executive, bus, ask=make_asker(make_engine("rules"), sink))
        answers = bus.subscribe(["answers"])
        await executive.start()
        await executive.run(None, until=300)
        assert host.handle({"type": "ask", "id": "q1", "text": QUESTION_MARGIN}) is None
        stages = []
        while (message := await asyncio.wait_for(answers.get(), timeout=30)).payload.get("stage"):
            stages.append(message.payload["stage"]["event"])  # the answer's stages come first
        return message.payload, from_executive(executive), stages

    payload, state, stages = asyncio.run(go())
    assert stages[:2] == ["plan", "thinking"] and stages[-1] == "message", stages
    assert payload["id"] == "q1" and payload["intent"] == "question"
    assert payload["answer"] == responder_rules(QUESTION_MARGIN, state)["answer"]
    assert payload["numbers"] and payload["agent_runs"]
    assert {r.agent for r in sink.of(AgentRunRecord)} == {"coordinator", "responder"}
