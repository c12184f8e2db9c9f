"""A what-if on a finished run compares against the plan the run started with, live as
stored: the executive keeps its first commit for the words layer, and a stored run's first
plan is its first version that flew, even once a replan superseded it."""

from __future__ import annotations

import asyncio

import pytest

from agents.engines import make_engine
from agents.words.ask import answer
from agents.words.state import from_executive, replay_trace
from executive.contracts import PlanVersionRecord
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces import TraceReader
from executive.traces.sinks import ListSink
from planner.model import Solution
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS, copy_of

# popup_sam.json: a hidden SAM on a planned path is detected in flight, so the run replans
SCENARIO = SCENARIOS / "popup_sam.json"


def _ask(text, state, **kw):
    return asyncio.run(answer(text, state, engine=make_engine("rules"), sink=ListSink(), **kw))


@pytest.fixture(scope="module")
def finished() -> tuple[Executive, list[PlanVersionRecord]]:
    """popup_sam.json flown live to its end; the plan versions it recorded."""
    sink = ListSink()
    executive = Executive(
        load_scenario(SCENARIO),
        planner=AlgorithmicPlanner(iterations=1000),
        sink=sink,
        options=LoopOptions(policy=Policy()),
    )
    asyncio.run(executive.run(None))
    return executive, sink.of(PlanVersionRecord)


def test_a_finished_live_run_keeps_the_plan_it_started_with(finished):
    executive, versions = finished
    [initial] = [v for v in versions if v.trigger == "initial"]
    first = Solution.model_validate(initial.solution)
    state = from_executive(executive)
    assert state.over and state.source == "live"
    assert state.first_plan == first
    assert executive.plan_id != initial.plan_id  # replanned since: the last plan is another

    out = _ask("What if we increase D1's fuel budget to 300?", state, live=executive)
    assert out["errors"] == [], out
    result = out["what_if"]
    assert result["from_start"] is True
    assert result["current"]["points"] == pytest.approx(first.total_points)
    for d, route in first.routes.items():
        assert result["current"]["drones"][d]["targets"] == route.visited_targets
    assert (
        f"instead of {first.total_points:g} under the plan the run started with" in (out["answer"])
    )


def test_a_stored_runs_first_plan_is_its_first_flown_even_when_superseded(popup_sam_run, tmp_path):
    # popup_sam flown to its end with no agents into SQLite: a copy of the session's store
    url, run_id = copy_of(popup_sam_run, tmp_path)
    reader = TraceReader(url)
    try:
        versions = reader.plan_versions(run_id)
        state, _ = replay_trace(reader, run_id)
    finally:
        reader.close()
    [initial] = [v for v in versions if v["trigger"] == "initial"]
    assert initial["status"] == "superseded"  # a replan replaced it
    assert state.first_plan == Solution.model_validate(initial["solution"])
    assert state.plan != state.first_plan
