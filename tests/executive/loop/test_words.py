"""The loop reads an operator's words only through the ``Coordinate`` it is given: a typed
verdict applied whole or refused whole, and words refused (never dropped) without one."""

from __future__ import annotations

import asyncio

from executive.contracts import (
    CoordinatorVerdict,
    EventRecord,
    HumanCommand,
    Refusal,
    Replacement,
    RunRecord,
)
from executive.loop import Executive, LoopOptions, Policy
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from planner.constraints import Move, OperatorConstraints
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS

SCENARIO = load_scenario(SCENARIOS / "demo.json")  # D1 senses A, B; D2 B, C; D3 all


def _events(sink: ListSink, kind: str) -> list[EventRecord]:
    return [r for r in sink.of(EventRecord) if r.kind == kind]


def _fly(executive: Executive, commands: list[HumanCommand]) -> None:
    """Fly to tick 60, queue ``commands`` (read at the next tick boundary), fly to 200."""

    async def go() -> None:
        await executive.run(None, until=60)
        for command in commands:
            executive.command(command)
        await executive.run(None, until=200)

    asyncio.run(go())


def test_words_without_a_coordinator_are_refused_with_the_reason_and_replan_nothing():
    sink = ListSink()
    executive = Executive(
        SCENARIO, planner=AlgorithmicPlanner(iterations=500), sink=sink, options=LoopOptions()
    )
    _fly(executive, [HumanCommand("REPLAN", "move T5 to D2"), HumanCommand("CUT", "cut")])
    ignored = _events(sink, "COMMAND_IGNORED")
    assert [(e.payload["command"], e.payload["text"]) for e in ignored] == [
        ("REPLAN", "move T5 to D2"),
        ("CUT", "cut"),
    ]
    assert all("no coordinator" in e.payload["reason"] for e in ignored)
    assert not _events(sink, "CONSTRAINTS")
    assert executive.constraints.empty
    assert not [r for r in executive.replans if r.trigger.startswith("operator:")]


def test_a_command_without_words_needs_no_coordinator():
    sink = ListSink()
    executive = Executive(SCENARIO, planner=AlgorithmicPlanner(iterations=500), sink=sink)
    _fly(executive, [HumanCommand("REPLAN")])
    assert not _events(sink, "COMMAND_IGNORED")
    assert [r.trigger for r in executive.replans] == ["operator:REPLAN"]


class _Fake:
    """A coordinator that refuses "refuse ..." and otherwise moves T5 to D2, replacing a
    move of T5 to D3; it records what it was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def __call__(self, text: str, run: Executive, /) -> CoordinatorVerdict:
        self.seen.append((text, run.sim.tick))
        if text.startswith("refuse"):
            refusal = Refusal(
                command="move T5 to D1", target="T5", drone="1", reason="sensor", detail="no C"
            )
            return CoordinatorVerdict(errors=("cannot move T5 to D1",), refused=(refusal,))
        return CoordinatorVerdict(
            constraints=OperatorConstraints(moves=[Move(target="T5", to_drone="2")]),
            replaced=(Replacement(target="T5", before="move T5 to D3", after="move T5 to D2"),),
        )


def test_a_verdict_is_applied_whole_and_its_errors_refuse_the_whole_command():
    sink = ListSink()
    fake = _Fake()
    executive = Executive(
        SCENARIO,
        planner=AlgorithmicPlanner(iterations=500),
        sink=sink,
        options=LoopOptions(policy=Policy()),
        coordinate=fake,
    )
    _fly(executive, [HumanCommand("REPLAN", "refuse this"), HumanCommand("CUT", "move it")])
    assert fake.seen == [("refuse this", 60), ("move it", 60)]  # read at the tick boundary
    [ignored] = _events(sink, "COMMAND_IGNORED")
    assert ignored.payload == {
        "command": "REPLAN",
        "reason": "refused: cannot move T5 to D1",
        "text": "refuse this",
        "errors": ["cannot move T5 to D1"],
        "refused": [
            {
                "command": "move T5 to D1",
                "target": "T5",
                "drone": "1",
                "reason": "sensor",
                "detail": "no C",
            }
        ],
    }
    [applied] = _events(sink, "CONSTRAINTS")
    assert applied.payload["text"] == "move it"
    assert applied.payload["added"]["moves"] == [{"target": "T5", "to_drone": "2"}]
    assert applied.payload["replaced"] == [
        {"target": "T5", "before": "move T5 to D3", "after": "move T5 to D2"}
    ]
    assert executive.constraints.moves == [Move(target="T5", to_drone="2")]
    assert executive.instruction == "move it"
    assert [r.trigger for r in executive.replans] == ["operator:CUT"]  # the refusal replans nothing


def test_the_run_record_keeps_the_options_recorded_configuration():
    sink = ListSink()
    recorded = {"engine": "rules", "policy": {"replan": False}, "labels": {"suite": "s"}}
    options = LoopOptions(policy=Policy(replan=False), seed=7, recorded=recorded)
    executive = Executive(
        SCENARIO, planner=AlgorithmicPlanner(iterations=200), sink=sink, options=options
    )
    asyncio.run(executive.run(None, until=5))
    [run] = sink.of(RunRecord)
    assert run.config == recorded and run.seed == 7
    bare = ListSink()
    executive = Executive(SCENARIO, planner=AlgorithmicPlanner(iterations=200), sink=bare)
    asyncio.run(executive.run(None, until=5))
    [run] = bare.of(RunRecord)
    assert run.config == {"policy": Policy().model_dump(mode="json"), "seed": 0}
