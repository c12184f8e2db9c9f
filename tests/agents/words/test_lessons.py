"""Outcome memory (seed 003's learner): a run that ends stores a lesson computed from its
report; the next run of the mission gives it to its agents (a real openai SDK against a
local chat-completions server sees it in the system prompt); a replay gives its agents the
lessons its original had, whatever was learned since, and teaches nothing itself; the
most relevant lessons are the same mission's, then those sharing disruption classes, then
the newest; ``isr memory lessons`` lists them and refuses a bad store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from agents.engines.spec import EngineSpec
from agents.words.lessons import (
    Lesson,
    LessonStore,
    disruption_classes,
    lesson_of,
    mission_key,
)
from cli.main import build_app
from executive.loop import Policy
from executive.traces import TraceReader
from mission.config import RunConfig
from mission.evaluation.policies import EvalTask, config_for
from mission.session import run_mission
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS
from tests.openai_api import ChatAPIServer, ToolCall

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

runner = CliRunner()
APPROVED = {"review": "Plan holds.", "issues": [], "suggestions": [], "final_verdict": "APPROVED"}


@pytest.fixture
def chat_api() -> Iterator[ChatAPIServer]:
    with ChatAPIServer(models=["llama3.1:latest"]) as server:
        server.responder = lambda request: ToolCall(APPROVED, usage=(200, 20))
        yield server


def _config(url: str, chat_api: ChatAPIServer, **more) -> RunConfig:
    critic = EngineSpec(
        engine="openai", model="llama3.1", base_url=chat_api.url, api_key=SecretStr("sk-local")
    )
    return RunConfig(
        trace_url=url,
        agent_timeout_s=10,
        policy=Policy(batch_iterations=300),
        agent_engines={"critic": critic},
        **more,
    )


def _systems(chat_api: ChatAPIServer, since: int = 0) -> list[str]:
    return [
        m["content"]
        for request in chat_api.requests[since:]
        for m in request["messages"]
        if m["role"] == "system"
    ]


def test_a_run_teaches_the_next_one_and_a_replay_keeps_its_original_prompts(tmp_path, chat_api):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    scenario = load_scenario(SCENARIOS / "popup_sam.json")

    first = asyncio.run(run_mission(scenario, _config(url, chat_api)))
    assert first is not None
    assert _systems(chat_api) and not any("[LESSON]" in s for s in _systems(chat_api))
    store = LessonStore(url)
    (lesson,) = store.list()
    assert lesson.run_id == first.run_id and lesson.mission == mission_key(scenario)
    # what changed, what was done, how it ended: the report's own figures
    assert "sam" in lesson.classes
    assert any(c.startswith("sam_detected:SAM3") for c in lesson.value["changes"])
    assert lesson.value["points"] == round(first.outcome.total_points, 1)
    assert lesson.value["planned_at_start"] == round(first.initial_points, 1)
    committed = sum(r.status == "committed" for r in first.replans)
    assert lesson.value["rounds"].get("committed", 0) == committed
    assert lesson.value["safety_actions"] == first.safety_actions
    assert f"{lesson.value['points']:g} points against" in lesson.text
    assert "sam_detected:SAM3" in lesson.text

    # the next run of the mission: its agents read the lesson, its record says which
    seen = len(chat_api.requests)
    second = asyncio.run(run_mission(scenario, _config(url, chat_api)))
    assert second is not None
    systems = _systems(chat_api, seen)
    assert systems and all(f"[LESSON] {lesson.text}" in s for s in systems)
    reader = TraceReader(url)
    try:
        assert reader.run(second.run_id)["config"]["lessons"] == [lesson.text]
        assert reader.run(first.run_id)["config"]["lessons"] == []
    finally:
        reader.close()
    assert [x.run_id for x in store.list()] == [second.run_id, first.run_id]

    # a replay of the second run: the prompts its original had (one lesson, not the two
    # there are now), so every recorded answer matches; it stores no lesson of its own
    replay = asyncio.run(
        run_mission(
            scenario,
            RunConfig(
                trace_url=url,
                engine="replay",
                replay_run=second.run_id,
                policy=Policy(batch_iterations=300),
            ),
        )
    )
    assert replay is not None
    reader = TraceReader(url)
    try:
        assert reader.run(replay.run_id)["config"]["lessons"] == [lesson.text]
        replayed = reader.agent_runs(replay.run_id)
    finally:
        reader.close()
    assert replayed and all(r["error"] is None for r in replayed)
    assert replay.outcome.state_hash == second.outcome.state_hash
    assert len(store.list()) == 2
    store.close()

    # isr memory lessons: newest first, figures in JSON; isr memory list counts them
    app = build_app()
    shown = runner.invoke(app, ["memory", "lessons", "--db", url])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert len(lines) == 2 and second.run_id in lines[0] and first.run_id in lines[1]
    assert "[sam]" in lines[1] and "points against" in lines[1]
    data = json.loads(runner.invoke(app, ["memory", "lessons", "--db", url, "--json"]).output)
    assert [d["run_id"] for d in data] == [second.run_id, first.run_id]
    assert data[1]["value"]["points"] == lesson.value["points"]
    one = runner.invoke(app, ["memory", "lessons", "--db", url, "--limit", "1"])
    assert len(one.output.splitlines()) == 1
    listed = runner.invoke(app, ["memory", "list", "--db", url])
    assert listed.exit_code == 0 and "2 lesson(s) from past runs" in listed.output


def test_the_most_relevant_lessons_are_the_missions_then_shared_disruptions_then_newest(
    tmp_path,
):
    popup = load_scenario(SCENARIOS / "popup_sam.json")
    lost = load_scenario(SCENARIOS / "lost_drone.json")
    assert disruption_classes(popup) == {"sam"}
    store = LessonStore(f"sqlite:///{tmp_path / 'runs.db'}")

    def add(run: str, mission: str, classes: tuple[str, ...], at: float) -> None:
        store.record(Lesson(run, mission, classes, f"lesson of {run}", {}, at))

    add("a" * 16, mission_key(popup), ("drone_lost",), 1.0)  # same mission, oldest
    add("b" * 16, "other", ("sam",), 2.0)  # shares the popup's SAM
    add("c" * 16, "other", ("target",), 5.0)  # newest, shares nothing
    add("d" * 16, "other", ("sam", "target"), 3.0)  # shares the SAM, newer than b
    ranked = [x.run_id[0] for x in store.relevant(popup, limit=4)]
    assert ranked == ["a", "d", "b", "c"]
    assert [x.run_id[0] for x in store.relevant(popup)] == ["a", "d", "b"]  # three by default
    # the same mission whatever its timeline (lost_drone is the demo with a drone lost)
    assert mission_key(lost) == mission_key(popup)
    # another mission (a target moved): none of its own, so the shared SAM leads
    data = popup.model_dump(mode="json", by_alias=True)
    data["environment"]["targets"][0]["x"] += 1.0
    other = type(popup).model_validate(data)
    assert mission_key(other) != mission_key(popup)
    assert [x.run_id[0] for x in store.relevant(other)] == ["d", "b", "c"]
    # recording a run again replaces its lesson
    add("c" * 16, "other", ("target",), 6.0)
    assert len(store.list()) == 4 and store.list()[0].created_at == 6.0
    store.close()


def test_a_lesson_says_where_a_run_fell_short(tmp_path):
    """A drone lost and points short of the first plan: the line names both."""
    scenario = load_scenario(SCENARIOS / "lost_drone.json")
    config = RunConfig(policy=Policy(batch_iterations=300, replan=False))
    report = asyncio.run(run_mission(scenario, config))
    assert report is not None and report.outcome.lost
    lesson = lesson_of(report.run_id, scenario, report)
    assert "drone_lost" in lesson.classes
    for drone in report.outcome.lost:
        assert f"D{drone} (" in lesson.text
    share = report.outcome.total_points / report.initial_points
    assert lesson.value["share_of_plan"] == round(share, 3)
    assert f"({100 * share:.0f} %)" in lesson.text


def test_batch_runs_are_independent_of_the_order_they_run_in():
    task = EvalTask(suite="s", mission="m", path="x.json", policy="auto")
    assert config_for(task).lessons == ()


def test_a_store_that_cannot_be_opened_is_one_line_and_exit_2(tmp_path):
    bad = runner.invoke(build_app(), ["memory", "lessons", "--db", "nosuch://x"])
    assert bad.exit_code == 2
    assert "Traceback" not in bad.output and "nosuch" in bad.output
