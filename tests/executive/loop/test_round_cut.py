"""Where a round's remainder is cut. Paced, the tick only freezes the world (``World.frozen``)
and the remainder is cut from the copy in a worker thread (10-50 ms of Python at 1,000
drones, measured on the tick); as fast as possible it is cut on the tick, so batch runs
trace the same records at the same ticks. A rebase's remainder is always cut in its worker."""

from __future__ import annotations

import asyncio
import threading

import pytest

from executive.contracts import EventRecord, HumanCommand
from executive.loop import Executive, Policy
from executive.loop import rounds as rounds_module
from executive.loop.options import LoopOptions
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS


def _fly(
    monkeypatch: pytest.MonkeyPatch,
    speed: float | None,
    commit: str = "auto",
    also=None,
    until: int = 200,
):
    cut_in: list[str] = []
    build = rounds_module.build_replan

    def traced(*args, **kwargs):
        cut_in.append(threading.current_thread().name)
        return build(*args, **kwargs)

    monkeypatch.setattr(rounds_module, "build_replan", traced)
    sink = ListSink()
    executive = Executive(
        load_scenario(SCENARIOS / "demo.json"),
        planner=AlgorithmicPlanner(iterations=200),
        sink=sink,
        options=LoopOptions(policy=Policy(commit=commit, planning_deadline_s=0.2)),
    )

    def replan_once(result) -> None:
        if result.tick == 5:
            executive.command(HumanCommand("REPLAN"))
        if also is not None:
            also(executive, result)

    executive.watch(on_tick=replan_once)
    asyncio.run(executive.run(speed, until=until))
    events = [r for r in sink.records if isinstance(r, EventRecord)]
    return executive, cut_in, events


def test_a_paced_round_cuts_its_remainder_in_a_worker_and_traces_it(monkeypatch):
    executive, cut_in, events = _fly(monkeypatch, speed=20.0)
    main = threading.main_thread().name
    assert cut_in and main not in cut_in  # the round's cut and the rival's rebase
    kinds = [e.kind for e in events]
    assert "CUT_AND_FREEZE" in kinds and "REPLAN_REMAINDER" in kinds
    cut = next(e for e in events if e.kind == "CUT_AND_FREEZE")
    assert cut.payload["checkpoints"]  # the airborne drones' checkpoints, cut in the worker
    assert kinds.index("CUT_AND_FREEZE") < kinds.index("DRAFT_READY")
    asked = [r for r in executive.replans if r.trigger == "operator:REPLAN"]
    assert asked and asked[0].status in ("committed", "superseded")


def test_as_fast_as_possible_the_round_is_cut_on_the_tick_it_starts(monkeypatch):
    _, cut_in, events = _fly(monkeypatch, speed=None)
    assert cut_in[0] == threading.main_thread().name
    started = next(e for e in events if e.kind == "HUMAN_COMMAND")
    cut = next(e for e in events if e.kind == "CUT_AND_FREEZE")
    assert cut.tick == started.tick  # the same tick: batch runs trace the same records


def test_a_late_accept_rebases_from_a_frozen_world_in_a_worker(monkeypatch):
    accepted: list[int] = []
    in_force: list[str | None] = []

    def accept_late(executive: Executive, result) -> None:
        draft = executive.rounds.review
        if draft is not None and not accepted and result.tick > draft.cut + 5:
            accepted.append(result.tick)  # past its cut: it flies rebased onto a new one
            in_force.append(executive.rounds.plan_id)
            executive.command(HumanCommand("ACCEPT"))
        elif accepted and executive.rounds.plan_id != in_force[0]:
            executive.stop()  # committed (however long the rebase took on a loaded machine)

    _, cut_in, events = _fly(monkeypatch, speed=20.0, commit="review", also=accept_late, until=4000)
    main = threading.main_thread().name
    assert accepted and cut_in.count(main) == 0
    rebase = next(e for e in events if e.kind == "REBASE")
    assert rebase.payload["purpose"] == "commit"
    assert any(e.kind == "COMMIT_PLAN" and e.tick > accepted[0] for e in events)
