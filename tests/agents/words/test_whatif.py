"""What-ifs are planned on a copy and answered with the difference; the live run is never
touched. The stored state (``from_trace``) matches the live one it was recorded from, and a
what-if on a stored run plans from it."""

from __future__ import annotations

import asyncio

import pytest

from agents.engines import make_engine
from agents.words.ask import answer
from agents.words.state import from_executive, from_trace, replay_trace
from agents.words.whatif import WhatIfError, current_figures, what_if
from executive.contracts import AgentRunRecord
from executive.loop import Executive
from executive.traces import TraceReader, TraceWriter
from executive.traces.sinks import ListSink, TeeSink
from tests.flown import flown

TICKS = 4996  # the last tick run is 4995, which has a telemetry row (every 5 ticks)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A live executive at tick 4996 of new_target.json, traced to a real SQLite file."""
    url = f"sqlite:///{tmp_path_factory.mktemp('whatif') / 'runs.db'}"
    writer = TraceWriter(url)
    writer.start()
    executive = flown("new_target.json", TICKS, sink=TeeSink(writer, ListSink()))
    writer.close()
    return executive, url


@pytest.fixture(scope="module")
def live(recorded):
    return recorded[0]


def _fingerprint(executive: Executive) -> tuple:
    return (
        executive.plan_id,
        executive.sim.tick,
        executive.sim.world.state_hash(),
        executive.constraints.model_dump(mode="json"),
        len(executive.replans),
        executive.mode,
        executive.plan.model_dump_json(),
    )


def _ask(text: str, executive: Executive, sink=None) -> dict:
    state = from_executive(executive)
    return asyncio.run(
        answer(text, state, engine=make_engine("rules"), sink=sink or ListSink(), live=executive)
    )


# ----------------------------------------------------------------------------- live


def test_losing_a_drone_is_planned_on_a_copy_and_the_live_run_is_untouched(live):
    before = _fingerprint(live)
    sink = ListSink()
    out = _ask("what if D3 were lost?", live, sink)
    assert _fingerprint(live) == before  # plan id, tick, sim state hash, constraints, plan
    assert out["intent"] == "what_if" and out["errors"] == []
    result = out["what_if"]
    state = from_executive(live)
    # the current plan's figures are the state's: what each drone still collects and flies
    for d, fig in result["current"]["drones"].items():
        drone = state.drones[d]
        assert fig["targets"] == drone.planned_targets
        assert fig["fuel"] == pytest.approx(drone.remaining_km)
    # the changed plan has no D3, and its figures add up
    changed = result["changed"]
    assert changed["drones"]["3"]["planned"] is False
    assert result["diff"]["drones"]["3"]["not_planned"] is True
    assert changed["points"] == pytest.approx(sum(f["points"] for f in changed["drones"].values()))
    assert result["diff"]["points"] == pytest.approx(
        changed["points"] - result["current"]["points"]
    )
    # D3's open targets went to another drone or are dropped, never silently both or neither
    d3_targets = set(result["current"]["drones"]["3"]["targets"])
    taken = {t for d, f in changed["drones"].items() for t in f["targets"]}
    assert set(result["diff"]["dropped"]) == (
        {t for f in result["current"]["drones"].values() for t in f["targets"]} - taken
    )
    assert d3_targets - taken <= set(result["diff"]["dropped"])
    for d, f in changed["drones"].items():
        if f["planned"]:
            assert f["fuel"] <= state.drones[d].fuel - state.fuel_reserve + 1e-6
    # losing a drone can only lose points against the same replanning without the change
    assert changed["points"] <= result["control"]["points"] + 1e-9
    # the answer cites the numbers
    assert out["answer"].startswith(
        f"What if D3 were lost: {changed['points']:g} points still"
        f" to collect instead of {result['current']['points']:g}"
    )
    assert "The live plan is unchanged." in out["answer"]
    labels = {n["label"]: n["value"] for n in out["numbers"]}
    assert labels["points still to collect (what-if)"] == pytest.approx(changed["points"])
    # traced: coordinator -> route_optimizer (the copy) and responder
    records = {r.agent: r for r in sink.of(AgentRunRecord)}
    assert set(records) == {"coordinator", "route_optimizer", "responder"}
    root = records["coordinator"]
    assert records["route_optimizer"].parent_run_id == root.run_id
    assert records["route_optimizer"].engine == "algorithmic"
    assert records["route_optimizer"].applied is False  # a what-if is never applied
    assert records["responder"].parent_run_id == root.run_id
    assert out["agent_runs"][0] == root.run_id


def test_more_fuel_and_a_removed_sam_can_only_help(live):
    before = _fingerprint(live)
    fuel = _ask("what if D2 had 300 fuel?", live)["what_if"]
    assert fuel["changed"]["points"] >= fuel["control"]["points"] - 1e-9
    assert any("D2 fuel from now 300.0 km" in n for n in fuel["notes"])
    sam = _ask("what if SAM2 were removed?", live)["what_if"]
    assert sam["changed"]["points"] >= sam["control"]["points"] - 1e-9
    # T12 lies inside SAM2: without it, it can be planned (worth 9, the copy is solved exactly)
    assert "T12" in sam["diff"]["gained"]
    prio = _ask("what if T11 had priority 10?", live)["what_if"]
    assert any("T11 is already collected" in n for n in prio["notes"])
    assert _fingerprint(live) == before


def test_a_what_if_with_an_error_plans_nothing(live):
    out = _ask("what if D7 had 300 fuel?", live)
    assert out["errors"] and "unknown drone D7" in out["errors"][0]
    assert "what_if" not in out and out["answer"].startswith("Cannot plan this what-if")


def test_what_if_on_a_lost_drone_is_a_clear_error(live):
    state = from_executive(live)
    lost = state.model_copy(
        update={
            "drones": {
                **state.drones,
                "3": state.drones["3"].model_copy(
                    update={"status": "lost", "lost_reason": "disabled"}
                ),
            }
        }
    )
    with pytest.raises(WhatIfError, match="D3 is lost"):
        asyncio.run(
            what_if([{"kind": "set_fuel", "drone": "3", "fuel": 300}], lost, world=live.sim.world)
        )


# ----------------------------------------------------------------------------- stored


def test_the_stored_state_is_the_live_state_it_was_recorded_from(recorded):
    live, url = recorded
    reader = TraceReader(url)
    try:
        stored = from_trace(reader, live.run_id[:8])  # a unique prefix works
        _, world = replay_trace(reader, live.run_id)
    finally:
        reader.close()
    now = from_executive(live)
    assert world.state_hash() == live.sim.world.state_hash()  # the very same world
    assert stored.source == "stored" and stored.run_id == live.run_id
    assert stored.tick == now.tick == TICKS  # re-executed to just after the last tick run
    assert stored.environment == now.environment
    assert stored.collected == now.collected
    assert stored.plan_id == now.plan_id
    for d, drone in now.drones.items():
        s = stored.drones[d]
        assert (s.status, s.route, s.planned_targets, s.collected) == (
            drone.status,
            drone.route,
            drone.planned_targets,
            drone.collected,
        )
        assert s.fuel == pytest.approx(drone.fuel, abs=1e-9)
        assert (s.x, s.y) == pytest.approx((drone.x, drone.y), abs=1e-9)
        assert s.remaining_km == pytest.approx(drone.remaining_km, abs=1e-6)
    assert current_figures(stored) == current_figures(now)


def test_a_what_if_on_a_stored_run_plans_from_the_stored_state(recorded):
    live, url = recorded
    reader = TraceReader(url)
    try:
        stored, world = replay_trace(reader, live.run_id)
    finally:
        reader.close()
    changes = [{"kind": "lose_drone", "drone": "3"}]
    from_store = asyncio.run(what_if(changes, stored, world=world))
    from_live = asyncio.run(
        what_if(changes, from_executive(live), world=live.sim.world, not_planned=live.returning)
    )
    assert from_store.source == "stored"
    # the same remainder problem either way: the same (exactly solved) difference
    assert from_store.changed.points == pytest.approx(from_live.changed.points)
    assert from_store.control.points == pytest.approx(from_live.control.points)
    assert from_store.diff["dropped"] == from_live.diff["dropped"]
