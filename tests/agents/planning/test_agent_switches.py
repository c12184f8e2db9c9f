"""Each agent of the planning chain switched off (the run configuration, or AGENT_OFF /
AGENT_ON live) and asked on a cadence (mission seconds): with the deterministic rules engine
in a run as fast as possible, so what happens, and at which tick, is the same every time.

The world of ``tests.executive.loop.test_safety``: one drone on a line, 20 ticks a second.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents.engines import make_engine
from agents.engines.spec import PLANNING_ROLES
from agents.planning.round import AgentPlanner
from executive.contracts import (
    AgentRunRecord,
    EventRecord,
    HumanCommand,
    InputRecord,
    StateHashRecord,
)
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.traces.replay import replay
from executive.traces.sinks import ListSink
from tests.executive.loop.test_safety import SAM_AHEAD, line_mission


def _fly(options: dict[str, Any], *, commands=(), timeline=(), until: int | None = None):
    """A run with the rules agents on; ``commands`` are (tick, command) given at that tick."""
    sink = ListSink()
    planner = AgentPlanner(make_engine("rules"), sink, iterations=200)
    executive = Executive(
        line_mission(timeline=list(timeline)),
        planner=planner,
        sink=sink,
        options=LoopOptions(
            policy=Policy(batch_iterations=200), agent_roles=PLANNING_ROLES, **options
        ),
    )
    due = sorted(commands, key=lambda item: item[0])

    def on_tick(result) -> None:
        while due and result.tick + 1 >= due[0][0]:
            executive.command(due.pop(0)[1])

    executive.watch(on_tick=on_tick)
    report = asyncio.run(executive.run(None, until=until))
    asyncio.run(planner.settled())
    return executive, sink, report


def _events(sink: ListSink, kind: str) -> list[EventRecord]:
    return [r for r in sink.of(EventRecord) if r.kind == kind]


def _rows(sink: ListSink, round_id: str) -> dict[str, AgentRunRecord]:
    """The agent rows of one round, by agent (the last row of each: a settled one)."""
    return {r.agent: r for r in sink.of(AgentRunRecord) if r.parent_run_id == round_id}


def _rounds(sink: ListSink) -> list[EventRecord]:
    return _events(sink, "REPLAN_REMAINDER")


def _replays_exactly(executive: Executive, sink: ListSink, report) -> None:
    inputs = [
        {"kind": r.kind, "payload": r.payload, "source": r.source, "tick": r.tick}
        for r in sink.of(InputRecord)
    ]
    recorded = {r.tick: r.state_hash for r in sink.of(StateHashRecord)}
    scenario = executive.scenario.model_dump(mode="json", by_alias=True)
    result = replay(scenario, inputs, recorded, hash_every=20, until=report.ticks)
    assert result.exact and result.final_hash == report.outcome.state_hash, result.mismatches


def test_an_agent_off_in_the_configuration_is_skipped_with_why_in_every_round():
    _, sink, _ = _fly({"agents_off": ("allocator",)}, timeline=[SAM_AHEAD])
    (round_,) = _rounds(sink)
    assert round_.payload["agents_skipped"] == {"allocator": "off in the run configuration"}
    rows = _rows(sink, round_.payload["round_id"])
    skipped = rows["allocator"]
    assert skipped.input_hash == "" and skipped.engine == "rules" and skipped.error is None
    assert skipped.validated_output == {
        "skipped": "off in the run configuration",
        "why": "skipped: off in the run configuration (no proposal)",
    }
    # the others were asked: real calls, with their inputs hashed
    assert rows["strategist"].input_hash and rows["critic"].input_hash
    assert "skipped" not in (rows["critic"].validated_output or {})
    (done,) = _events(sink, "AGENTS_DONE")
    assert (
        "allocator: skipped: off in the run configuration (no proposal)" in done.payload["reasons"]
    )
    assert done.payload["offered"] is False


def test_agent_off_and_on_live_take_effect_at_the_next_round_and_replay_exactly():
    executive, sink, report = _fly(
        {},
        timeline=[SAM_AHEAD],  # a replan at 30 s (tick 600)
        commands=[
            (100, HumanCommand("AGENT_OFF", "critic")),
            (110, HumanCommand("AGENT_OFF", "critic")),  # already off: refused, said why
            (120, HumanCommand("AGENT_OFF", "pilot")),  # no such agent
            (900, HumanCommand("AGENT_ON", "critic")),
            (1000, HumanCommand("REPLAN")),
        ],
    )
    switched = _events(sink, "AGENTS")
    assert [(e.tick, e.payload["agent"], e.payload["on"]) for e in switched] == [
        (100, "critic", False),
        (900, "critic", True),
    ]
    assert switched[0].payload["off"] == {"critic": "switched off by operator at tick 100"}
    assert switched[1].payload["off"] == {}
    ignored = [(e.tick, e.payload["reason"]) for e in _events(sink, "COMMAND_IGNORED")]
    assert ignored == [
        (110, "critic is already off"),
        (120, "no agent 'pilot' to switch; this run's: strategist, allocator, critic"),
    ]
    rounds = _rounds(sink)
    assert [r.payload["trigger"] for r in rounds][-1] == "operator:REPLAN"
    off_round, on_round = rounds[0], rounds[-1]
    assert off_round.tick >= 600 and on_round.tick >= 1000
    assert off_round.payload["agents_skipped"] == {"critic": "switched off by operator at tick 100"}
    assert "agents_skipped" not in on_round.payload
    off_rows = _rows(sink, off_round.payload["round_id"])
    assert off_rows["critic"].validated_output["skipped"] == "switched off by operator at tick 100"
    assert off_rows["allocator"].input_hash  # the others still asked
    on_rows = _rows(sink, on_round.payload["round_id"])
    assert on_rows["critic"].input_hash and "skipped" not in on_rows["critic"].validated_output
    _replays_exactly(executive, sink, report)


def test_an_agent_on_a_cadence_is_asked_at_its_due_ticks_never_twice_at_once():
    # every 0.5 s (10 ticks), while a round and its agents take 16 ticks or more as fast as
    # possible (the cut 15 ticks ahead, the agents awaited one tick later): it must wait
    _, sink, report = _fly({"agent_cadence_s": {"critic": 0.5}}, until=200)
    cadence = _events(sink, "AGENT_CADENCE")
    assert len(cadence) >= 4
    first = cadence[0]
    assert first.tick == first.payload["due_tick"] == 10 and "waited" not in first.payload
    assert all(e.payload["agent"] == "critic" and e.payload["every_s"] == 0.5 for e in cadence)
    for e in cadence:
        assert e.tick >= e.payload["due_tick"]
        assert e.payload["next_due_tick"] == e.tick + 10
    late = [e for e in cadence[1:] if e.tick > e.payload["due_tick"]]
    assert late and all(e.payload["waited"] == "the agent chain was busy" for e in late)
    # each cadence run is a round of its own, asking the critic only, traced like any round
    rounds = _rounds(sink)
    assert [r.tick for r in rounds] == [e.tick for e in cadence]
    done = {e.payload["round_id"]: e.tick for e in _events(sink, "AGENTS_DONE")}
    for before, after in zip(rounds, rounds[1:]):
        # never a new call while the previous one is still running
        assert done[before.payload["round_id"]] <= after.tick
    for r in rounds:
        assert r.payload["trigger"] == "cadence:critic"
        why = "not asked: a cadence round of critic"
        assert r.payload["agents_skipped"] == {"strategist": why, "allocator": why}
        rows = _rows(sink, r.payload["round_id"])
        if r.payload["round_id"] not in done:  # the run ended while it was working
            continue
        assert rows["critic"].input_hash and rows["critic"].error is None
        assert rows["strategist"].validated_output["skipped"] == why
        (root,) = [a for a in sink.of(AgentRunRecord) if a.run_id == r.payload["round_id"]]
        assert root.agent == "planning_round"
        assert root.validated_output["trigger"] == "cadence:critic"
    assert report.outcome.lost == []


def test_an_agent_off_is_not_asked_on_its_cadence():
    _, sink, _ = _fly(
        {"agent_cadence_s": {"critic": 0.5}},
        commands=[
            (5, HumanCommand("AGENT_OFF", "critic")),
            (60, HumanCommand("AGENT_ON", "critic")),
        ],
        until=100,
    )
    cadence = _events(sink, "AGENT_CADENCE")
    # due at tick 10 while off: asked at once when switched on (tick 60), then on time
    assert cadence and cadence[0].tick == 60 and cadence[0].payload["due_tick"] == 10
    assert not [r for r in _rounds(sink) if r.tick < 60]
