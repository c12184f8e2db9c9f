"""The responder's rules answers to the seed's question classes, on a stored run flown to its
end (demo.json, traced to a real SQLite file by the real CLI) and on a live one mid-flight:
fuel used (most, total), budgets, drones compared, totals, targets visited, why one target
before another (with the distances of both orders and a false premise pointed out), why a
target went to a drone. Expected figures are computed here from the stored telemetry, the
scenario and the SAM-avoiding geometry, not by the responder. Every rules answer passes the
number check that a model's answer must pass, and offers two or three follow-ups that are
themselves answered."""

from __future__ import annotations

import asyncio

import pytest

from agents.engines import make_engine
from agents.responder import responder_rules
from agents.responder.followups import follow_ups
from agents.responder.numbers import number_problems, supported
from agents.responder.role import ResponderOutput
from agents.words.ask import answer
from agents.words.state import MissionState, from_executive, replay_trace
from executive.traces import TraceReader
from executive.traces.sinks import ListSink
from planner.geometry import SamField
from tests.conftest import copy_of
from tests.flown import flown

QUESTIONS = [
    "Which drone has the most fuel margin?",
    "Which drone uses the most fuel?",
    "What is the total fuel used?",
    "Why did D1 visit T3 before T5?",
    "Why did D2 visit T11 before T2?",
    "Compare D1 and D3",
    "What are the fuel budgets?",
    "Why did D1 not fly?",
    "Why did D2 get T5?",
    "Which targets were visited?",
    "Which targets were not visited?",
    "Give me the totals",
    "Why was T7 excluded?",
    "How many points so far?",
    "What is the status of the mission?",
    "Where is D3?",
    "Which SAMs are known?",
]


@pytest.fixture(scope="module")
def ended(demo_ended_run, tmp_path_factory) -> tuple[MissionState, dict]:
    """(state, last telemetry row) of demo.json flown headless to its end and traced (this
    module's copy of the session's run)."""
    url, run_id = copy_of(demo_ended_run, tmp_path_factory.mktemp("responder_q"))
    reader = TraceReader(url)
    try:
        state, _world = replay_trace(reader, run_id)
        row = reader.last_telemetry(run_id)
    finally:
        reader.close()
    return state, row


@pytest.fixture(scope="module")
def live() -> MissionState:
    """new_target.json at tick 4996: D2 and D3 in the air with targets still to collect."""
    return from_executive(flown("new_target.json", 4996))


def _number(out: dict, label: str) -> float:
    return next(n["value"] for n in out["numbers"] if n["label"] == label)


def _used(state: MissionState, row: dict) -> dict[str, float]:
    """Km each drone flew: its scenario budget minus the stored telemetry's fuel."""
    return {
        f"D{d}": state.scenario.drone_configs[d].fuel_budget - t["fuel"]
        for d, t in row["drones"].items()
    }


def test_which_drone_uses_the_most_fuel_is_the_one_that_flew_most(ended):
    state, row = ended
    used = _used(state, row)
    top = max(used, key=used.get)
    out = responder_rules("Which drone uses the most fuel?", state)
    assert out["answer"].startswith(f"{top} uses the most fuel: {top}: {used[top]:.1f} km used")
    for d, km in used.items():  # every drone, with its own figure
        assert _number(out, f"{d} fuel used") == pytest.approx(km, abs=1e-3)
        assert f"{d}: {km:.1f} km used" in out["answer"]
    assert "margin" not in out["answer"]
    least = responder_rules("Which drone used the least fuel?", state)
    assert least["answer"].startswith(f"{min(used, key=used.get)} uses the least fuel")


def test_total_fuel_used_is_the_sum(ended):
    state, row = ended
    used = _used(state, row)
    budget = sum(c.fuel_budget for c in state.scenario.drone_configs.values())
    out = responder_rules("What is the total fuel used?", state)
    total = sum(used.values())
    assert out["answer"].startswith(f"Total fuel used: {total:.1f} km (")
    assert f"of {budget:.1f} km budgeted; {budget - total:.1f} km left" in out["answer"]
    assert _number(out, "fuel used in total") == pytest.approx(total, abs=1e-3)


def _length(state: MissionState, route: list[str]) -> float:
    sams = SamField([(s.x, s.y, s.range) for s in state.environment.sams])
    pos = state.environment.position
    return sum(sams.shortest_path(pos(a), pos(b)).length for a, b in zip(route, route[1:]))


def test_why_x_before_y_points_out_a_false_premise_and_gives_the_detour(ended):
    state, _row = ended
    assert state.collected["T3"] == state.collected["T5"] == "2"  # D2 collected both
    flown = state.collected_order
    d2 = [t for t in flown if state.collected[t] == "2"]
    assert d2.index("T3") + 1 == d2.index("T5")  # in a row, T3 first
    before = d2[d2.index("T3") - 1] if d2.index("T3") > 0 else "A2"
    after = d2[d2.index("T5") + 1] if d2.index("T5") + 1 < len(d2) else "A2"
    here = _length(state, [before, "T3", "T5", after])
    there = _length(state, [before, "T5", "T3", after])
    out = responder_rules("Why did D1 visit T3 before T5?", state)
    text = out["answer"]
    assert text.startswith("The premise does not hold: D1 did not visit T3 or T5")
    assert "D2 has both" in text
    assert f"D2 flies {before} -> T3 -> T5 -> {after}:" in text
    assert f"= {here:.1f} km; the other order {before} -> T5 -> T3 -> {after}" in text
    assert "would be" in text and f"= {there:.1f} km" in text
    assert _number(out, "detour of the other order") == pytest.approx(there - here, abs=1e-3)
    assert f"the other order costs {there - here:.1f} km more" in text
    margin = state.drones["2"].margin_km
    assert f"margin {margin:.1f} km" in text
    # the other way round is a premise that does not hold either
    rev = responder_rules("Why did D2 visit T5 before T3?", state)["answer"]
    assert rev.startswith("D2 visits T3 before T5, not T5 before T3")
    # two targets of two drones have no order
    other = next(t for t, d in state.collected.items() if d == "3")
    split = responder_rules(f"why {other} before T3?", state)["answer"]
    assert "are on different drones" in split and "D3" in split and "D2" in split


def test_why_a_target_went_to_a_drone_and_why_a_drone_got_nothing(ended):
    state, _row = ended
    out = responder_rules("Why did D2 get T5?", state)
    assert out["answer"].startswith("T5 (priority 6, type C) was collected by D2")
    assert "D1 cannot sense it (sensors A, B)" in out["answer"]
    wrong = responder_rules("Why did D3 get T5?", state)["answer"]
    assert "The premise does not hold: D3 did not get T5." in wrong
    negated = responder_rules("Why was T5 not given to D1?", state)["answer"]
    assert "premise" not in negated
    idle = responder_rules("Why did D1 not fly?", state)["answer"]
    assert idle.startswith("D1 can sense types A, B: 6 known targets")
    assert "it has 0 (none)" in idle


def test_compare_budgets_totals_visited(ended):
    state, row = ended
    used = _used(state, row)
    out = responder_rules("Compare D1 and D3", state)
    diff = used["D3"] - used["D1"]
    assert f"D3 used {diff:.1f} km more fuel than D1" in out["answer"]
    assert _number(out, "fuel used difference") == pytest.approx(diff, abs=1e-3)
    budgets = responder_rules("What are the fuel budgets?", state)["answer"]
    assert budgets.startswith("Fuel budgets: D1 200.0 km (used 0.0, left 200.0")
    assert "Together 600.0 km." in budgets
    totals = responder_rules("Give me the totals", state)["answer"]
    n = len(state.collected)
    assert f"targets visited {n} of 12, not visited {12 - n} (T7, T12)" in totals
    visited = responder_rules("Which targets were visited?", state)["answer"]
    assert visited.startswith(f"{n} of 12 targets visited")
    d2 = ", ".join(state.collected_by("2"))
    assert f"D2: {d2} (" in visited


def test_live_fuel_used_counts_the_path_still_to_fly(live):
    out = responder_rules("Which drone uses the most fuel?", live)
    d3 = live.drones["3"]
    used = d3.budget - d3.fuel
    assert d3.remaining_km and d3.remaining_km > 1
    assert (
        f"D3: {used:.1f} km used so far + {d3.remaining_km:.1f} km still to fly" in (out["answer"])
    )
    total = responder_rules("What is the total fuel used?", live)["answer"]
    still = sum(d.remaining_km or 0.0 for d in live.drones.values())
    assert f"Still to fly under the plan: {still:.1f} km" in total


@pytest.mark.parametrize("which", ["ended", "live"])
def test_every_rules_answer_passes_the_number_check(ended, live, which):
    state = ended[0] if which == "ended" else live
    for question in QUESTIONS:
        rules = responder_rules(question, state)
        output = ResponderOutput.model_validate(rules)
        assert number_problems(output, supported(state, rules, None, question), state) == [], (
            question
        )


def test_the_number_check_catches_a_wrong_figure(ended):
    state, _row = ended
    rules = responder_rules("Which drone has the most fuel margin?", state)
    facts = supported(state, rules, None, "Which drone has the most fuel margin?")
    d3 = state.drones["3"]

    def problems(text: str, numbers=()):
        out = ResponderOutput(answer=text, numbers=list(numbers))
        return number_problems(out, facts, state)

    assert problems("D1 has 999 km margin.")  # a number the state does not have
    assert problems(f"D1 has the most fuel margin: {d3.margin_km:.1f} km.")  # D3's, not D1's
    assert problems("D2's fuel budget is 200 km.")  # it is 180
    assert problems("D1 has the most margin.", [{"label": "D1 fuel margin", "value": 150.0}])
    assert problems(f"D3 used {d3.budget - d3.fuel + 12:.1f} km.")
    assert not problems(f"D1 has the most fuel margin: {state.drones['1'].margin_km:.1f} km.")
    assert not problems(f"D3 used {d3.budget - d3.fuel:.1f} km of its {d3.budget:.0f} km budget.")


def test_follow_ups_are_computed_per_question_and_each_is_answered(ended):
    state, _row = ended
    seen = set()
    for question in QUESTIONS[:8]:
        ups = follow_ups(question, state)
        assert 2 <= len(ups) <= 3, question
        assert question not in ups
        seen.add(tuple(ups))
    assert len(seen) >= 5  # not one fixed list
    ups = follow_ups("Which drone has the most fuel margin?", state)
    tight = min(state.drones.values(), key=lambda d: d.margin_km)
    assert f"What if we increase {tight.label}'s fuel budget to" in " ".join(ups)
    excluded = follow_ups("Why was T7 excluded?", state)
    assert "What if SAM1 were removed?" in excluded

    async def ask_all():
        outs = []
        for question in follow_ups("Which targets were not visited?", state):
            outs.append(await answer(question, state, engine=make_engine("rules"), sink=ListSink()))
        return outs

    for out in asyncio.run(ask_all()):
        assert out["errors"] == [] and out["answer"], out
        assert out["intent"] != "unknown"
        assert 2 <= len(out["follow_ups"]) <= 3


def test_which_drone_has_the_most_points_and_targets(ended):
    state, row = ended
    points = {f"D{d}": t["points"] for d, t in row["drones"].items()}
    top = max(points, key=points.get)
    out = responder_rules("Which drone has the most points?", state)["answer"]
    assert out.startswith(f"{top} has the most points: {points[top]:g} (")
    counts = {d.label: len(state.collected_by(d.id)) for d in state.drones.values()}
    best = max(counts.values())
    ties = [d for d, c in counts.items() if c == best]
    most = responder_rules("Which drone collected the most targets?", state)["answer"]
    assert most.startswith(f"{' and '.join(ties)} collected the most targets: {best}")
    far = responder_rules("Which drone flew the farthest?", state)["answer"]
    used = _used(state, row)
    assert far.startswith(f"{max(used, key=used.get)} uses the most fuel")
