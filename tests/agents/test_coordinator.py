"""The coordinator pre-pass: intents, commands into constraints, regions, what-ifs, memories,
unknown ids as errors; and words applied to a live executive through a REPLAN command."""

from __future__ import annotations

import asyncio

import pytest

from agents.coordinator import (
    Intent,
    classify,
    coordinate,
    coordinate_environment,
    coordinate_scenario,
    planner_constraints,
    verdict_of,
)
from agents.engines import make_engine
from agents.planning.round import AgentPlanner
from agents.words.ask import answer
from agents.words.command import coordinate_live
from agents.words.state import from_executive
from executive.contracts import AgentRunRecord, EventRecord
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS

SCENARIO = load_scenario(SCENARIOS / "new_target.json")
ENV = SCENARIO.environment
DRONES = list(SCENARIO.drone_configs)  # "1", "2", "3"


def decide(text: str, **kw) -> dict:
    return coordinate_environment(text, ENV, DRONES, **kw).model_dump(mode="json")


def constraints_of(text: str) -> dict:
    typed = coordinate_environment(text, ENV, DRONES)
    d = typed.model_dump(mode="json")
    assert d["intent"] == "reallocate", d
    assert d["errors"] == [], d["errors"]
    out = planner_constraints(typed).model_dump(mode="json")
    assert out.pop("fuel_reserve") == {}  # these commands keep no reserve
    return out


# ----------------------------------------------------------------------------- intents


@pytest.mark.parametrize(
    "text, intent",
    [
        ("Which drone has the most fuel margin?", Intent.QUESTION),
        ("how many points so far", Intent.QUESTION),
        ("Why did D1 visit T3 before T5?", Intent.EXPLAIN),
        ("Explain why T5 was excluded", Intent.EXPLAIN),
        ("Why is the solver crashing?", Intent.DEBUG),
        ("the planner threw a traceback", Intent.DEBUG),
        ("compare D1 and D2 instead", Intent.QUESTION),
        ("how many points so far?", Intent.QUESTION),
        ("Generate optimal routes", Intent.PLAN),
        ("Optimize the mission to maximize points", Intent.PLAN),
        ("move T5 to D1", Intent.REALLOCATE),
        ("Move T5 from D1 to D2", Intent.REALLOCATE),
        ("can you move T5 to D1?", Intent.REALLOCATE),
        ("keep D2 out of the north-east", Intent.REALLOCATE),
        ("what if D1 had 300 fuel?", Intent.WHAT_IF),
        ("What if we increase D1's fuel budget to 300?", Intent.WHAT_IF),
        ("Suppose SAM2 were removed", Intent.WHAT_IF),
        ("Generate optimal routes maximizing priority points", Intent.PLAN),
        ("Continue from the current checkpoint", Intent.REPLAN),
        ("please replan", Intent.REPLAN),
        ("Remember that D2's camera is unreliable", Intent.MEMORY),
        ("always use efficient allocation", Intent.MEMORY),
        ("never use greedy allocation", Intent.MEMORY),
        ("hello there", Intent.UNKNOWN),
        ("", Intent.UNKNOWN),
    ],
)
def test_intent_classification(text, intent):
    assert classify(text) == intent
    assert decide(text)["intent"] == str(intent)


def test_the_same_words_always_give_the_same_decision():
    text = "assign T3 and T7 to drone 2; keep D1 out of the south-west"
    assert decide(text) == decide(text)


# ----------------------------------------------------------------------------- commands


def test_move_phrasings():
    assert constraints_of("move T5 to D1")["moves"] == [{"target": "T5", "to_drone": "1"}]
    assert constraints_of("assign T3 and T7 to drone 2")["moves"] == [
        {"target": "T3", "to_drone": "2"},
        {"target": "T7", "to_drone": "2"},
    ]
    assert constraints_of("transfer T3 from D1 to D2")["moves"] == [
        {"target": "T3", "to_drone": "2"}
    ]
    assert constraints_of("Reassign T8, T10 and T11 to d3")["moves"] == [
        {"target": t, "to_drone": "3"} for t in ("T8", "T10", "T11")
    ]
    assert constraints_of("move T5 to D1 and T6 to D2")["moves"] == [
        {"target": "T5", "to_drone": "1"},
        {"target": "T6", "to_drone": "2"},
    ]
    assert constraints_of("D1 must visit T5")["moves"] == [{"target": "T5", "to_drone": "1"}]
    assert constraints_of("move T5 to D1 no matter what")["moves"] == [
        {"target": "T5", "to_drone": "1"}
    ]


@pytest.mark.parametrize(
    "text",
    [
        "D2 must not visit T4",
        "forbid T4 for D2",
        "don't let drone 2 visit T4",
        "keep D2 away from T4",
        "D2 should never take T4",
    ],
)
def test_forbid_phrasings(text):
    c = constraints_of(text)
    assert c["forbidden"] == {"2": ["T4"]} and c["moves"] == [] and c["required_targets"] == []


def test_forbid_without_a_drone_is_for_every_drone_and_says_so():
    d = decide("forbid T4")
    assert d["constraints"]["forbidden"] == {"1": ["T4"], "2": ["T4"], "3": ["T4"]}
    assert any("every drone" in w for w in d["warnings"])


@pytest.mark.parametrize(
    "text", ["T9 is required", "make sure T9 is visited", "don't skip T9", "T9 must be visited"]
)
def test_required_phrasings(text):
    assert constraints_of(text) == {"moves": [], "forbidden": {}, "required_targets": ["T9"]}


def test_several_clauses_in_one_request():
    c = constraints_of("keep drone 2 away from T4; make sure T9 is visited and move T5 to D3")
    assert c == {
        "moves": [{"target": "T5", "to_drone": "3"}],
        "forbidden": {"2": ["T4"]},
        "required_targets": ["T9"],
    }


# ----------------------------------------------------------------------------- regions


def _expected_region(pred) -> list[str]:
    pts = [(a.x, a.y) for a in ENV.airports] + [(t.x, t.y) for t in ENV.targets]
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    mx, my = (x0 + x1) / 2, (y0 + y1) / 2
    return [t.id for t in ENV.targets if pred(t.x, t.y, mx, my, x0, x1, y0, y1)]


def test_keep_out_of_the_north_east_forbids_exactly_the_targets_there():
    d = decide("keep D2 out of the north-east")
    want = _expected_region(lambda x, y, mx, my, *_: x >= mx and y >= my)
    # the box of new_target.json is x 10..85, y 15..90: middle (47.5, 52.5)
    assert want == ["T3", "T5", "T9", "T12"]
    assert d["constraints"]["forbidden"] == {"2": want}
    [region] = d["regions"]
    assert region == {
        "drone": "2",
        "region": "north-east",
        "box": [10.0, 15.0, 85.0, 90.0],
        "targets": want,
    }


@pytest.mark.parametrize(
    "words, pred",
    [
        ("south", lambda x, y, mx, my, *_: y <= my),
        ("west", lambda x, y, mx, my, *_: x <= mx),
        ("south-west", lambda x, y, mx, my, *_: x <= mx and y <= my),
        ("northwest", lambda x, y, mx, my, *_: x <= mx and y >= my),
        (
            "centre",
            lambda x, y, mx, my, x0, x1, y0, y1: (
                x0 + (x1 - x0) / 3 <= x <= x0 + 2 * (x1 - x0) / 3
                and y0 + (y1 - y0) / 3 <= y <= y0 + 2 * (y1 - y0) / 3
            ),
        ),
    ],
)
def test_regions_pick_the_right_targets(words, pred):
    d = decide(f"keep D1 out of the {words}")
    assert d["errors"] == []
    assert d["constraints"]["forbidden"] == {"1": _expected_region(pred)}


def test_a_region_never_forbids_collected_targets():
    d = decide("keep D2 out of the north-east", collected=["T3"])
    assert d["constraints"]["forbidden"] == {"2": ["T5", "T9", "T12"]}


# ----------------------------------------------------------------------------- errors


def test_unknown_ids_are_errors_that_name_them():
    d = decide("move T99 to D1")
    assert d["constraints"]["moves"] == []
    assert d["errors"] and "unknown target T99" in d["errors"][0]
    d = decide("assign T3 to drone 7")
    assert "unknown drone D7" in d["errors"][0] and "D1, D2, D3" in d["errors"][0]
    d = decide("what if SAM9 were removed?")
    assert d["what_if"] == [] and "unknown SAM SAM9" in d["errors"][0]
    d = decide("keep D9 away from T4")
    assert d["constraints"]["forbidden"] == {} and "unknown drone D9" in d["errors"][0]
    d = decide("where is D9?")
    assert d["intent"] == "question" and "unknown drone D9" in d["errors"][0]


def test_a_partly_unknown_command_keeps_its_error():
    d = decide("move T5 and T42 to D1")
    assert d["constraints"]["moves"] == [{"target": "T5", "to_drone": "1"}]
    assert any("T42" in e for e in d["errors"])


def test_a_clause_that_orders_nothing_is_reported_not_dropped():
    d = decide("assign T3 to D1 and D2")
    assert d["constraints"]["moves"] == [{"target": "T3", "to_drone": "1"}]
    assert d["warnings"] == ["not understood, ignored: 'D2'"]


def test_the_executive_verdict_applies_nothing_when_the_words_have_an_error():
    good = verdict_of(coordinate_environment("move T5 to D1", ENV, DRONES))
    assert not good.errors
    assert [m.model_dump() for m in good.constraints.moves] == [{"target": "T5", "to_drone": "1"}]
    bad = verdict_of(coordinate_environment("move T5 and T42 to D1", ENV, DRONES))
    assert bad.errors and any("T42" in e for e in bad.errors)
    assert bad.constraints.empty  # nothing half-applied: T5's move is dropped with T42


def test_the_executive_verdict_carries_the_refusals_and_the_replaced_orders_typed():
    """What the loop puts on COMMAND_IGNORED and CONSTRAINTS events comes typed, the same
    dicts the decision holds."""
    refused = coordinate_scenario("move T5 to D1", SCENARIO)  # D1 cannot sense T5
    in_force = {"moves": [{"target": "T5", "to_drone": "2"}], "forbidden": {}}
    replacing = coordinate_environment("move T5 to D3", ENV, DRONES, in_force=in_force)
    for decision in (refused, replacing):
        verdict = verdict_of(decision)
        assert list(verdict.refused) == decision.refused
        assert list(verdict.replaced) == decision.replaced
    assert verdict_of(refused).refused[0].reason == "sensor"
    assert verdict_of(refused).constraints.empty
    assert verdict_of(replacing).replaced  # the move to D2 in force is replaced


def test_bare_ids_work_without_positions_but_a_region_then_is_an_error():
    d = coordinate("move T5 to D1", ["T5"], ["1"]).model_dump(mode="json")
    assert d["constraints"]["moves"] == [{"target": "T5", "to_drone": "1"}]
    d = coordinate("keep D1 out of the north", ["T5"], ["1"]).model_dump(mode="json")
    assert any("positions are not known" in e for e in d["errors"])


# ----------------------------------------------------------------------------- what-ifs


@pytest.mark.parametrize(
    "text, change",
    [
        ("what if D1 had 300 fuel?", {"kind": "set_fuel", "drone": "1", "fuel": 300.0}),
        (
            "What if we increase D1's fuel budget to 300?",
            {"kind": "set_fuel", "drone": "1", "fuel": 300.0, "basis": "budget"},
        ),
        ("what if drone 2 had 40 more fuel", {"kind": "set_fuel", "drone": "2", "delta": 40.0}),
        ("what if D3 were lost?", {"kind": "lose_drone", "drone": "3"}),
        ("what if we lose D3", {"kind": "lose_drone", "drone": "3"}),
        ("what if T5 had priority 10?", {"kind": "set_priority", "target": "T5", "priority": 10.0}),
        ("what if SAM2 were removed?", {"kind": "remove_sam", "sam": "SAM2"}),
        ("what if T5 were removed?", {"kind": "remove_target", "target": "T5"}),
        (
            "what if T5 went to D1?",
            {
                "kind": "constraints",
                "constraints": {
                    "moves": [{"target": "T5", "to_drone": "1"}],
                    "forbidden": {},
                    "required_targets": [],
                },
            },
        ),
    ],
)
def test_what_if_parsing(text, change):
    d = decide(text)
    assert d["intent"] == "what_if" and d["errors"] == []
    assert d["what_if"] == [change]


def test_two_changes_in_one_what_if():
    d = decide("what if D1 had 300 fuel and D3 were lost?")
    assert d["what_if"] == [
        {"kind": "set_fuel", "drone": "1", "fuel": 300.0},
        {"kind": "lose_drone", "drone": "3"},
    ]


def test_a_what_if_that_names_no_change_says_what_it_understands():
    d = decide("what if it rains?")
    assert d["what_if"] == [] and "cannot tell what to change" in d["errors"][0]


# ----------------------------------------------------------------------------- memories


@pytest.mark.parametrize(
    "text, kind, stored",
    [
        ("Remember that D2's camera is unreliable", "note", "D2's camera is unreliable"),
        ("always use efficient allocation", "instruction", "always use efficient allocation"),
        ("never use greedy allocation", "warning", "never use greedy allocation"),
        (
            "I prefer balanced allocation for big missions",
            "preference",
            "I prefer balanced allocation for big missions",
        ),
        ("remember as a warning: SAM3 may move", "warning", "SAM3 may move"),
    ],
)
def test_memory_requests(text, kind, stored):
    assert decide(text)["memory"] == {"kind": kind, "text": stored}


# ----------------------------------------------------------------------------- live


def test_a_command_in_words_becomes_the_next_replans_constraints():
    """words -> HumanCommand("REPLAN", text) -> Executive._apply_words -> a replan whose
    plan honours the constraints."""
    sink = ListSink()
    planner = AgentPlanner(make_engine("rules"), sink, iterations=2000, use_agents=False)
    executive = Executive(
        SCENARIO,
        planner=planner,
        sink=sink,
        options=LoopOptions(policy=Policy()),
        coordinate=coordinate_live,
    )

    async def go():
        await executive.start()
        await executive.run(None, until=200)
        state = from_executive(executive)
        out = await answer(
            "keep D2 out of the north-east",
            state,
            engine=make_engine("rules"),
            sink=sink,
            live=executive,
        )
        assert out["applied"] is True
        assert executive.constraints.empty  # applied at the next tick boundary, not before
        # the command is read at the next tick; as fast as possible, the run waits for the
        # round at its cut tick, so by tick 400 the constrained plan is committed
        await executive.run(None, until=400)
        return out

    out = asyncio.run(go())
    assert out["intent"] == "reallocate"
    assert out["constraints"]["forbidden"] == {"2": ["T3", "T5", "T9", "T12"]}
    assert executive.constraints.forbidden == {"2": ["T12", "T3", "T5", "T9"]}
    assert [e for e in sink.of(EventRecord) if e.kind == "CONSTRAINTS"]
    assert executive.replans and executive.replans[-1].trigger == "operator:REPLAN"
    assert executive.replans[-1].status == "committed"
    visited_by_d2 = set(executive.plan.routes["2"].visited_targets)
    assert not visited_by_d2 & {"T3", "T5", "T9", "T12"}
    [root] = [r for r in sink.of(AgentRunRecord) if r.agent == "coordinator"]
    assert root.applied and root.run_id == out["agent_runs"][0]
    assert root.validated_output["constraints"] == out["constraints"]
