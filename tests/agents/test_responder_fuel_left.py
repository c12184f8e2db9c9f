"""Issue 25's question classes, answered by the rules engine: fuel LEFT is not the fuel
margin (at tick 0 under a real plan the two rank the drones differently), a lost drone's
last state (where, the fuel it had, its points, its order), who does NOT make it home, a
drone's points collected vs planned, the path still to fly, why a target is skipped
(sensor, collected), and "No plan yet — plan first?" with no plan. Expected figures come
from the stored telemetry and events, the scenario file and the plan's route lengths, not
from the responder."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agents.responder import responder_rules
from agents.responder.answers import NO_PLAN
from agents.responder.questions import (
    FuelLeft,
    FuelUsed,
    Home,
    Margins,
    Points,
    Remaining,
    topic_of,
)
from agents.words.posted import posted_state
from agents.words.state import MissionState, replay_trace
from cli.main import build_app
from executive.traces import TraceReader
from planner.scenario import parse_scenario
from tests.conftest import SCENARIOS


@pytest.fixture(scope="module")
def lost(tmp_path_factory) -> tuple[MissionState, dict, list[dict]]:
    """(state, last telemetry row, events) of lost_drone.json flown to its end: D3 lost."""
    url = f"sqlite:///{tmp_path_factory.mktemp('fuel_left') / 'runs.db'}"
    done = CliRunner().invoke(
        build_app(),
        ["run", str(SCENARIOS / "lost_drone.json"), "--headless", "--db", url, "--json"],
    )
    assert done.exit_code == 0, done.output
    run_id = json.loads(done.stdout.strip().splitlines()[-1])["run_id"]
    reader = TraceReader(url)
    try:
        state, _ = replay_trace(reader, run_id)
        return state, reader.last_telemetry(run_id), reader.events(run_id)
    finally:
        reader.close()


@pytest.fixture(scope="module")
def start(lost) -> tuple[MissionState, dict]:
    """The same mission at tick 0 under the plan it started with, and the raw scenario."""
    state = lost[0]
    assert state.first_plan is not None
    raw = json.loads((SCENARIOS / "lost_drone.json").read_text())
    return posted_state(state.scenario, state.first_plan, "t0"), raw


def test_the_classes_are_told_apart():
    state = posted_state(parse_scenario((SCENARIOS / "demo.json").read_text()), None, "x")
    cases = {
        "Which drone has the most fuel left?": FuelLeft("most"),
        "Which drone has the least fuel left?": FuelLeft("least"),
        "which UAV has the lowest remaining fuel": FuelLeft("least"),
        "Which has more fuel left, D1 or D2?": FuelLeft("most", ("1", "2")),
        "How much fuel does D3 have left?": FuelLeft("each", ("3",)),
        "How much fuel is left in total?": FuelUsed("total"),
        "Which drone has the most fuel margin?": Margins(),
        "Which drone is NOT going to make it home?": Home(negated=True),
        "Which drones make it back?": Home(),
        "How far does D2 still have to fly?": Remaining(("2",)),
        "How many points does D1 have planned?": Points(None, ("1",)),
    }
    for question, topic in cases.items():
        assert topic_of(question, state) == topic, question


def test_fuel_left_is_not_the_margin_at_tick_0(start):
    state, raw = start
    assert state.plan is not None
    budgets = {d: float(c["fuelBudget"]) for d, c in raw["drone_configs"].items()}
    km = {d: state.plan.routes[d].distance if d in state.plan.routes else 0.0 for d in budgets}
    margin = {d: budgets[d] - km[d] for d in budgets}
    most_left = max(budgets, key=lambda d: budgets[d])
    most_margin = max(margin, key=lambda d: margin[d])
    assert most_left != most_margin, "the fixture should rank the two apart"
    left = responder_rules("Which drone has the most fuel left?", state)["answer"]
    assert left.startswith(f"D{most_left} has the most fuel left: {budgets[most_left]:.1f} km")
    assert "margin" not in left.split(".")[0]
    best = responder_rules("Which drone has the most fuel margin?", state)["answer"]
    assert best.startswith(f"D{most_margin} has the most fuel margin")
    least = min(budgets, key=lambda d: budgets[d])
    out = responder_rules("Which drone has the least fuel left?", state)["answer"]
    assert out.startswith(f"D{least} has the least fuel left")


def test_points_planned_and_path_to_fly_at_tick_0(start):
    state, raw = start
    assert state.plan is not None
    priority = {t["id"]: t["priority"] for t in raw["environment"]["targets"]}
    for d, route in state.plan.routes.items():
        pts = sum(priority[t] for t in route.visited_targets)
        out = responder_rules(f"How many points does D{d} have planned?", state)["answer"]
        assert f"D{d} collected 0 points" in out and f"{pts:g} points still planned" in out
        far = responder_rules(f"How far does D{d} still have to fly?", state)["answer"]
        assert f"D{d}: {route.distance:.1f} km still to fly" in far


def test_a_lost_drones_last_state(lost):
    state, row, events = lost
    loss = next(e["payload"] for e in events if e["kind"] == "drone_lost")
    d = str(loss["drone"])
    fuel, points = row["drones"][d]["fuel"], row["drones"][d]["points"]
    x, y = loss["pos"]
    out = responder_rules(f"How much fuel does D{d} have left?", state)["answer"]
    assert f"{fuel:.1f} km of fuel left when lost at ({x:.1f}, {y:.1f})" in out
    where = responder_rules(f"Where was D{d} lost?", state)["answer"]
    assert f"with {fuel:.1f} km of fuel left" in where and f"collected {points:g} points" in where
    order = [
        e["payload"]["target"]
        for e in events
        if e["kind"] == "target_collected" and str(e["payload"]["drone"]) == d
    ]
    assert f"{', '.join(order)} (in that order)" in where
    # ranked apart: a lost drone's fuel is not "left" in the fleet
    alive = {k: v["fuel"] for k, v in row["drones"].items() if v["status"] != "lost"}
    top = max(alive, key=lambda k: alive[k])
    most = responder_rules("Which drone has the most fuel left?", state)["answer"]
    assert most.startswith(f"D{top} has the most fuel left")
    assert f"Not ranked: D{d} is lost" in most


def test_who_does_not_make_it_home(lost):
    state, row, _ = lost
    gone = {f"D{k}" for k, v in row["drones"].items() if v["status"] == "lost"}
    assert gone
    first = responder_rules("Which drone is NOT going to make it home?", state)["answer"]
    first = first.split(". ")[0]
    named = {w.strip(",") for w in first.split()} & {f"D{k}" for k in row["drones"]}
    assert first.startswith("Not making it home:") and named == gone


def test_why_skipped_names_the_reason(lost):
    state, _, events = lost
    got = next(e["payload"] for e in events if e["kind"] == "target_collected")
    out = responder_rules(f"Why was {got['target']} skipped?", state)["answer"]
    assert f"not excluded: D{got['drone']} collected it" in out
    raw = json.loads((SCENARIOS / "demo.json").read_text())
    raw["environment"]["targets"].append({"id": "T99", "x": 5, "y": 5, "priority": 3, "type": "Z"})
    for config in raw["drone_configs"].values():
        config["accessibleTargets"] = ["A", "B", "C", "D"]  # nobody senses type Z
    nobody = posted_state(parse_scenario(raw), None, "x")
    assert (
        "no drone left can sense type Z"
        in responder_rules("Why was T99 skipped?", nobody)["answer"]
    )


def test_no_plan_yet_plan_first(start):
    state, raw = start
    bare = posted_state(state.scenario, None, "x")
    for question in (
        "Which drone has the most fuel margin?",
        "How many points are planned?",
        "How far does D1 still have to fly?",
        "Which drone is not going to make it home?",
    ):
        out = responder_rules(question, bare)["answer"]
        assert out.startswith(NO_PLAN), question
        assert "no margin" in out and "has the most fuel margin" not in out
    budget = float(raw["drone_configs"]["1"]["fuelBudget"])
    left = responder_rules("How much fuel does D1 have left?", bare)["answer"]
    assert left.startswith(NO_PLAN) and f"D1 has {budget:.1f} km of fuel left" in left
