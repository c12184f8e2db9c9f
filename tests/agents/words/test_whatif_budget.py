"""What-ifs tell a fuel budget from fuel left, work on a finished run (planned from its
start, against the plan it started with) and report a drone the change grounds in the
mission's words -- which drone, which targets it can no longer reach -- never a planner's
internal message."""

from __future__ import annotations

import asyncio

import pytest

from agents.engines import make_engine
from agents.words.ask import answer
from agents.words.state import from_executive, replay_trace
from agents.words.whatif import read_budgets
from executive.loop import Executive
from executive.traces import TraceReader
from executive.traces.sinks import ListSink
from tests.conftest import copy_of
from tests.flown import flown


@pytest.fixture(scope="module")
def live() -> Executive:
    return flown("new_target.json", 4996, iterations=1000)


@pytest.fixture(scope="module")
def ended(demo_ended_run, tmp_path_factory):
    """(state, world, first committed plan) of demo.json flown to its end, traced (this
    module's copy of the session's run)."""
    url, run_id = copy_of(demo_ended_run, tmp_path_factory.mktemp("whatif_end"))
    reader = TraceReader(url)
    try:
        state, world = replay_trace(reader, run_id)
        first = next(p for p in reader.plan_versions(run_id) if p["status"] == "committed")
    finally:
        reader.close()
    return state, world, first["solution"]


def _ask(text, state, **kw):
    return asyncio.run(answer(text, state, engine=make_engine("rules"), sink=ListSink(), **kw))


def test_budget_words_make_a_budget_change():
    fuel = [{"kind": "set_fuel", "drone": "1", "fuel": 300.0}]
    assert read_budgets("What if we increase D1's fuel budget to 300?", fuel) == [
        {"kind": "set_budget", "drone": "1", "budget": 300.0}
    ]
    assert read_budgets("what if D1 had 300 fuel?", fuel) == fuel
    delta = [{"kind": "set_fuel", "drone": "2", "delta": 50.0}]
    assert read_budgets("what if D2's budget were 50 more?", delta)[0]["kind"] == "set_budget"


def test_a_budget_is_not_fuel_left(live):
    state = from_executive(live)
    d2 = state.drones["2"]
    flown = d2.budget - d2.fuel
    assert flown > 1  # D2 has flown: budget and fuel left differ
    budget = _ask("What if we increase D2's fuel budget to 200?", state, live=live)
    assert budget["errors"] == []
    assert budget["what_if"]["changes"] == [{"kind": "set_budget", "drone": "2", "budget": 200.0}]
    assert budget["answer"].startswith("What if D2's fuel budget were 200 km:")
    left = 200.0 - flown
    assert (
        f"D2 budget 200.0 km (now {d2.budget:.1f}), {flown:.1f} km already flown"
        in (budget["answer"])
    )
    assert f"D2 fuel from now {left:.1f} km" in budget["answer"]
    assert budget["what_if"]["changed"]["drones"]["2"]["fuel"] <= left + 1e-6
    fuel = _ask("What if D2 had 200 fuel?", state, live=live)
    assert "D2 fuel from now 200.0 km" in fuel["answer"]


def test_a_what_if_on_a_finished_run_plans_from_its_start(ended):
    state, world, first = ended
    assert state.over
    out = _ask("What if SAM1 were removed?", state, world=world)
    assert out["errors"] == []
    result = out["what_if"]
    assert result["from_start"] is True
    assert result["current"]["points"] == pytest.approx(first["total_points"])
    for d, route in first["routes"].items():
        assert result["current"]["drones"][d]["targets"] == route["visited_targets"]
    # T7 lies inside SAM1 only: without SAM1 it can be collected, for its priority
    t7 = state.environment.target("T7")
    assert [
        s.id for s in state.environment.sams if (t7.x - s.x) ** 2 + (t7.y - s.y) ** 2 < s.range**2
    ] == ["SAM1"]
    assert "T7" in result["diff"]["gained"]
    assert result["diff"]["points"] == pytest.approx(t7.priority)
    assert out["answer"].startswith(
        f"What if SAM1 were removed: {first['total_points'] + t7.priority:g} points over the"
        f" whole mission instead of {first['total_points']:g} under the plan the run started with"
    )
    # a fuel change from the start is a budget, whatever the words
    fuel = _ask("What if D2 had 50 fuel?", state, world=world)
    assert fuel["what_if"]["changed"]["drones"]["2"]["fuel"] <= 50 + 1e-6
    assert fuel["what_if"]["changed"]["points"] > 0  # not the empty remainder of a landed fleet


def test_an_infeasible_what_if_names_the_drone_and_its_targets(live):
    state = from_executive(live)
    planned = state.drones["2"].planned_targets
    assert planned
    out = _ask("What if D2 had 5 fuel?", state, live=live)
    assert out["errors"] == [] and out["intent"] == "what_if"
    assert "D2 could not fly this: no airport is reachable with its" in out["answer"]
    assert f"can no longer reach {', '.join(planned)}" in out["answer"]
    assert out["what_if"]["infeasible"]["2"]["unreachable"][: len(planned)] == planned
    assert out["what_if"]["changed"]["drones"]["2"]["planned"] is False
    for internal in ("vehicle", "no feasible route", "start 3", "Traceback"):
        assert internal not in out["answer"]


def test_a_planner_failure_is_put_in_the_missions_words():
    from types import SimpleNamespace

    from agents.words.whatif import _in_mission_words

    mission = SimpleNamespace(drones=[SimpleNamespace(id="1"), SimpleNamespace(id="2")])
    internal = (
        "vehicle 1: no feasible route (start 3, prefix [7], length to an end 62.3 > budget 50.0)"
    )
    words = _in_mission_words(Exception(internal), mission)
    assert words.startswith("D2 would need 62.3 km") and "with 50.0 km of fuel" in words
    assert "vehicle" not in words and "start 3" not in words
    blocked = _in_mission_words(
        Exception(
            "vehicle 0: no feasible route (start 2, prefix [], length to an end inf > budget 9.0)"
        ),
        mission,
    )
    assert blocked == "D1 could not reach any end airport on paths that avoid the known SAMs"
