"""The world's physics: fuel, SAM kills, detection, capture, holding, and belief vs truth."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.edits import (
    AddSam,
    AddTarget,
    DisableDrone,
    MoveSam,
    MoveTarget,
    RemoveTarget,
    RevealSam,
    SetFuel,
)
from planner.geometry import Line, Path
from planner.mission import compile_mission
from planner.model import SimConfig
from sim import FlyPath, Hold, ResumeFlight, ReturnToBase, Sim
from sim.flight import hold_circle
from tests.factory import greedy_routes, random_scenario
from tests.sim.conftest import efficient_plan, line_world

STEP = 0.005  # km per tick at 0.1 km/s and 20 Hz


def straight(x0=0.0, x1=40.0) -> Path:
    return Path.from_pieces([Line((x0, 0.0), (x1, 0.0))])


def run_collect(sim: Sim, until: int | None = None):
    events, truth = [], []

    def keep(result):
        events.extend(result.events)
        truth.extend(result.truth_events)

    sim.run(until, on_tick=keep)
    return events, truth


# ----- fuel and plans ---------------------------------------------------------------------


def test_completed_plan_burns_exactly_its_path_length(demo):
    mission, solution = efficient_plan(demo)
    sim = Sim(demo, solution, mission=mission)
    events, _ = run_collect(sim)
    flown = [d for d, r in solution.routes.items() if len(set(r.route)) > 1]
    assert flown, "the demo plan flies someone"
    for drone_id in flown:
        route = solution.routes[drone_id]
        length = mission.route_path(mission.nodes(route.route)).length
        assert sim.world.status(drone_id) == "landed"
        burnt = demo.drone_configs[drone_id].fuel_budget - sim.world.fuel(drone_id)
        assert burnt == pytest.approx(length, abs=1e-6 * max(1.0, length))
        assert route.distance == pytest.approx(length, abs=1e-9)
    landed = {e.drone: e.airport for e in events if e.kind == "drone_landed"}
    assert landed == {d: solution.routes[d].route[-1] for d in flown}
    collected = {e.target for e in events if e.kind == "target_collected"}
    assert collected == {t for r in solution.routes.values() for t in r.visited_targets}
    assert sum(e.points for e in events if e.kind == "target_collected") == solution.total_points


@pytest.mark.parametrize("seed", range(4))
def test_planned_flights_never_enter_a_sam_and_burn_their_length(seed):
    rng = np.random.default_rng(seed)
    scenario = random_scenario(rng, n_targets=8, n_sams=3, n_drones=3)
    # Faster drones, fewer ticks: exactness does not depend on the step.
    scenario = scenario.model_copy(update={"sim": SimConfig(speed=0.4)})
    mission = compile_mission(scenario)
    routes = {
        spec.id: mission.ids(r)
        for spec, r in ((mission.drone(d), r) for d, r in greedy_routes(mission).items())
    }
    sim = Sim(scenario, routes, mission=mission)
    centres = np.array([s.pos for s in scenario.environment.sams])
    radii = np.array([s.range for s in scenario.environment.sams])
    closest = [math.inf]

    def watch(result):
        pos = result.fleet.positions
        gaps = np.hypot(
            pos[:, None, 0] - centres[None, :, 0], pos[:, None, 1] - centres[None, :, 1]
        )
        closest[0] = min(closest[0], float((gaps - radii[None, :]).min()))
        assert not any(e.kind == "drone_lost" for e in result.events), result.events

    sim.run(on_tick=watch)
    assert closest[0] > 0.0  # never inside (the plan keeps a margin)
    for drone_id, route in routes.items():
        length = mission.route_path(mission.nodes(route)).length
        if length > 0:
            assert sim.world.status(drone_id) == "landed"
            burnt = scenario.drone_configs[drone_id].fuel_budget - sim.world.fuel(drone_id)
            assert burnt == pytest.approx(length, abs=1e-6 * max(1.0, length))


def test_positions_follow_the_path_geometry(demo):
    mission, solution = efficient_plan(demo)
    drone_id = next(d for d, r in solution.routes.items() if len(set(r.route)) > 1)
    path = mission.route_path(mission.nodes(solution.routes[drone_id].route))
    sim = Sim(demo, solution, mission=mission)
    for _ in range(3000):
        sim.step()
        x, y, heading = sim.world.position(drone_id)
        ex, ey, eh = path.locate(sim.world.progress(drone_id))
        assert (x, y) == pytest.approx((ex, ey), abs=1e-9)
        assert math.cos(heading - eh) == pytest.approx(1.0, abs=1e-9)


def test_no_fuel_in_the_air_is_lost_and_exact_fuel_lands():
    scenario = line_world(
        drones={
            "1": {"fuelBudget": 10.0, "home_airport": "A1"},
            "2": {"fuelBudget": 40.0, "home_airport": "A1"},
        }
    )
    sim = Sim(scenario)
    for drone in ("1", "2"):
        sim.submit(FlyPath(drone=drone, path=straight(), tick=0))
    events, _ = run_collect(sim)
    lost = [e for e in events if e.kind == "drone_lost"]
    assert [(e.drone, e.reason) for e in lost] == [("1", "fuel")]
    assert lost[0].tick == round(10.0 / STEP) - 1
    assert lost[0].pos[0] == pytest.approx(10.0, abs=1e-9)
    assert sim.world.status("2") == "landed" and sim.world.fuel("2") == pytest.approx(0.0, abs=1e-9)


# ----- SAMs -------------------------------------------------------------------------------


def test_drone_flown_straight_through_a_sam_is_lost_at_the_right_tick():
    # Entry at x = 20 - 2.0025 = 17.9975: the first swept segment past it ends at 18.0,
    # after tick 3599 (ticks count from 0, each flies 0.005 km).
    scenario = line_world(sams=[{"id": "S1", "pos": [20, 0], "range": 2.0025}])
    sim = Sim(scenario)
    sim.submit(FlyPath(drone="1", path=straight(), tick=0))
    sim.run(3599)
    assert sim.world.status("1") == "flying"
    result = sim.step()
    assert result.tick == 3599
    (lost,) = [e for e in result.events if e.kind == "drone_lost"]
    assert (lost.drone, lost.reason, lost.sam) == ("1", "sam", "S1")
    assert lost.pos[0] == pytest.approx(18.0, abs=1e-9)
    assert sim.world.status("1") == "lost"
    sim.run(3700)  # a lost drone stays where it fell and burns nothing
    assert sim.world.position("1")[0] == pytest.approx(18.0, abs=1e-9)
    assert sim.world.fuel("1") == pytest.approx(100.0 - 18.0, abs=1e-9)


def test_touching_a_sam_circle_is_not_entering_it():
    scenario = line_world(sams=[{"id": "S1", "pos": [20, 2.0], "range": 2.0}])
    sim = Sim(scenario)
    sim.submit(FlyPath(drone="1", path=straight(), tick=0))
    sim.run()
    assert sim.world.status("1") == "landed"


def test_hidden_sam_detected_once_at_first_tick_in_sensor_range():
    # Sensor range 1 km: detection when the drone is within 3.0025 km of the centre,
    # x >= 16.9975, i.e. after tick 3399; then the drone flies on into it (no replanning).
    hidden = {"t": 0, "op": "add_sam", "id": "H1", "pos": [20, 0], "range": 2.0025, "hidden": True}
    scenario = line_world(timeline=[hidden], sim={"sensor_range": 1.0})
    sim = Sim(scenario)
    sim.submit(FlyPath(drone="1", path=straight(), tick=0))
    sim.run(3399)
    assert [s.id for s in sim.world.known_environment.sams] == []
    assert [s.id for s in sim.world.truth_environment.sams] == ["H1"]
    result = sim.step()
    (detected,) = [e for e in result.events if e.kind == "sam_detected"]
    assert (detected.tick, detected.drone, detected.sam) == (3399, "1", "H1")
    assert detected.pos == (20.0, 0.0) and detected.range == 2.0025
    assert [s.id for s in sim.world.known_environment.sams] == ["H1"]
    assert detected.as_edit().source == "sensor"
    events, _ = run_collect(sim)
    assert not [e for e in events if e.kind == "sam_detected"]  # once
    assert [s.id for s in sim.world.known_environment.sams] == ["H1"]  # from then on
    (lost,) = [e for e in events if e.kind == "drone_lost"]
    assert (lost.tick, lost.sam) == (3599, "H1")


def test_truth_never_leaks_into_what_the_executive_sees():
    visible = {"id": "S0", "pos": [20, 30], "range": 3}
    timeline = [
        {"t": 0, "op": "add_sam", "id": "H1", "pos": [30, 0], "range": 2, "hidden": True},
        {"t": 10, "op": "move_sam", "id": "H1", "pos": [30, 0.5]},
        {"t": 20, "op": "add_sam", "id": "H2", "pos": [10, 30], "range": 1, "hidden": True},
    ]
    scenario = line_world(sams=[visible], timeline=timeline, sim={"sensor_range": 2.0})
    sim = Sim(scenario)
    sim.submit(FlyPath(drone="1", path=straight(), tick=0))
    seen_before: list[str] = []
    truth: list = []
    while not sim.done:
        result = sim.step()
        truth.extend(result.truth_events)
        detected = any(e.kind == "sam_detected" for e in result.events)
        if not detected and "H1" not in {s.id for s in sim.world.known_environment.sams}:
            seen_before.append(json.dumps([e.model_dump(mode="json") for e in result.events]))
            seen_before.append(result.snapshot().model_dump_json())
            seen_before.append(sim.world.known_environment.model_dump_json())
    assert seen_before and not any("H1" in text or "H2" in text for text in seen_before)
    # The truth-only channel has the hidden edits, for the trace store.
    assert [e.edit.id for e in truth] == ["H1", "H1", "H2"]
    known = {s.id: s for s in sim.world.known_environment.sams}
    truth_sams = {s.id: s for s in sim.world.truth_environment.sams}
    assert set(known) == {"S0", "H1"} and set(truth_sams) == {"S0", "H1", "H2"}
    assert known["H1"] == truth_sams["H1"]  # detected as it truly is (moved)
    # Targets and airports are the same in both.
    assert sim.world.known_environment.airports == sim.world.truth_environment.airports


def test_known_sam_edits_reach_both_environments():
    sim = Sim(
        line_world(
            sams=[{"id": "S0", "pos": [20, 30], "range": 3}],
            timeline=[
                {"t": 0, "op": "add_sam", "id": "H", "pos": [20, -30], "range": 3, "hidden": True}
            ],
        )
    )
    sim.submit(MoveSam(id="S0", pos=(21.0, 31.0), source="operator", tick=0))
    sim.submit(RevealSam(id="H", source="operator", tick=1))
    first = sim.step()
    assert [e.kind for e in first.events] == ["edit_applied"]
    assert sim.world.known_environment.sams[0].pos == (21.0, 31.0)
    second = sim.step()
    assert [e.edit.op for e in second.events] == ["reveal_sam"]
    assert {s.id for s in sim.world.known_environment.sams} == {"S0", "H"}


def test_a_view_after_an_edit_is_the_validated_world_reusing_what_did_not_change():
    # The views are constructed from state the edits validated, and keep the models of
    # slots that did not change: the same as validating the whole environment again.
    world = line_world(
        sams=[{"id": "S0", "pos": [20, 30], "range": 3}],
        targets=[
            {"id": f"T{k}", "x": 5 * k, "y": 10, "priority": k + 1, "type": "A"} for k in range(4)
        ],
    )
    sim = Sim(world)
    before = sim.world.known_environment
    sim.submit(MoveTarget(id="T1", x=7.5, y=12.0, source="operator", tick=0))
    sim.submit(AddSam(id="S1", pos=(40.0, -20.0), range=2.0, source="operator", tick=0))
    sim.step()
    after = sim.world.known_environment
    assert type(after).model_validate(after.model_dump()) == after  # valid, and the same
    assert after.targets[0] is before.targets[0] and after.sams[0] is before.sams[0]
    assert after.targets[1] is not before.targets[1] and (
        after.targets[1].x,
        after.targets[1].y,
    ) == (7.5, 12.0)
    assert [s.id for s in after.sams] == ["S0", "S1"]


# ----- targets ----------------------------------------------------------------------------


def test_targets_passed_within_capture_radius_are_collected_if_sensors_fit():
    targets = [
        {"id": "TA", "x": 10, "y": 0.4, "priority": 3, "type": "A"},  # within 0.5: collected
        {"id": "TB", "x": 20, "y": 0.3, "priority": 5, "type": "B"},  # wrong sensor
        {"id": "TC", "x": 30, "y": 0.6, "priority": 7, "type": "A"},  # too far
    ]
    drones = {"1": {"fuelBudget": 100.0, "home_airport": "A1", "accessibleTargets": ["A"]}}
    sim = Sim(line_world(targets=targets, drones=drones))
    sim.submit(FlyPath(drone="1", path=straight(), tick=0))
    events, _ = run_collect(sim)
    (got,) = [e for e in events if e.kind == "target_collected"]
    assert (got.target, got.points, got.planned) == ("TA", 3.0, False)
    # First tick whose swept segment comes within 0.5 km: x >= 10 - 0.3 = 9.7.
    assert got.tick == math.ceil(9.7 / STEP) - 1


def test_planned_waypoint_collected_when_reached_or_missed_with_a_reason():
    targets = [
        {"id": "T1", "x": 10, "y": 0, "priority": 3, "type": "A"},
        {"id": "T2", "x": 20, "y": 0, "priority": 5, "type": "A"},
        {"id": "T3", "x": 30, "y": 0, "priority": 7, "type": "A"},
    ]
    sim = Sim(line_world(targets=targets), {"1": ["A1", "T1", "T2", "T3", "A2"]})
    sim.submit(RemoveTarget(id="T2", tick=100, source="operator"))
    sim.submit(AddTarget(id="T4", x=25.0, y=0.2, priority=9, type="A", tick=100))
    sim.submit(MoveTarget(id="T3", x=30.0, y=5.0, tick=100))
    events, _ = run_collect(sim)
    got = [(e.target, e.planned, e.tick) for e in events if e.kind == "target_collected"]
    assert got[0] == ("T1", True, round(10 / STEP) - 1)  # at the waypoint, not 0.5 km early
    assert ("T4", False) in [(t, p) for t, p, _ in got]
    missed = {e.target: e.reason for e in events if e.kind == "target_missed"}
    assert missed == {"T2": "removed", "T3": "moved"}


# ----- holding, resuming, returning -------------------------------------------------------


def test_hold_and_resume_orbit_back_then_finish_the_flight():
    sim = Sim(
        line_world(
            targets=[{"id": "T1", "x": 30, "y": 0, "priority": 4, "type": "A"}],
            sim={"hold_radius": 0.5},
        ),
        {"1": ["A1", "T1", "A2"]},
    )
    sim.submit(Hold(drone="1", tick=1000))
    sim.submit(ResumeFlight(drone="1", tick=1700))
    sim.run(1000)
    assert sim.world.status("1") == "flying"
    held = sim.step()
    assert [e.kind for e in held.events] == ["command_applied"] and held.tick == 1000
    assert sim.world.status("1") == "holding"
    fuel_at_hold = sim.world.fuel("1")
    sim.run(1700)
    assert sim.world.fuel("1") == pytest.approx(
        fuel_at_hold - 699 * STEP, abs=1e-9
    )  # holding burns
    events, _ = run_collect(sim)
    assert [e.target for e in events if e.kind == "target_collected"] == ["T1"]
    assert sim.world.status("1") == "landed"
    # It left the line at the hold and came back to the same point: whole orbits only.
    extra = (100.0 - sim.world.fuel("1")) - 40.0
    orbits = extra / (2 * math.pi * 0.5)
    assert orbits == pytest.approx(round(orbits), abs=1e-6) and round(orbits) >= 1


def test_path_ending_away_from_an_airport_holds_until_fuel_runs_out():
    sim = Sim(line_world(drones={"1": {"fuelBudget": 12.0, "home_airport": "A1"}}))
    sim.submit(FlyPath(drone="1", path=straight(0, 10), tick=0))
    events, _ = run_collect(sim)
    kinds = [e.kind for e in events]
    assert kinds == ["command_applied", "drone_holding", "drone_lost"]
    assert events[1].reason == "end_of_path" and events[2].reason == "fuel"
    assert events[2].tick == pytest.approx(12.0 / STEP - 1, abs=1)


def test_return_to_base_avoids_known_sams_and_lands():
    sam = {"id": "S1", "pos": [20, 0], "range": 3}
    sim = Sim(line_world(sams=[sam]))
    # Fly out north of the SAM, then ask to go home: the way back goes around S1.
    out = Path.from_pieces([Line((0.0, 0.0), (0.0, 10.0)), Line((0.0, 10.0), (40.0, 10.0))])
    sim.submit(FlyPath(drone="1", path=out, tick=0))
    sim.submit(ReturnToBase(drone="1", airport="A2", tick=2))
    sim.submit(ReturnToBase(drone="1", tick=4000))
    events, _ = run_collect(sim)
    applied = [e for e in events if e.kind == "command_applied"]
    assert [e.command for e in applied] == ["fly_path", "return_to_base", "return_to_base"]
    assert sim.world.status("1") == "landed"
    assert [e.airport for e in events if e.kind == "drone_landed"] == ["A1"]
    assert not [e for e in events if e.kind == "drone_lost"]


# ----- rejected inputs --------------------------------------------------------------------


def test_bad_edits_and_commands_are_rejected_with_reasons_not_raised():
    sim = Sim(
        line_world(
            targets=[{"id": "T1", "x": 10, "y": 5, "priority": 1, "type": "A"}],
            drones={
                "1": {"fuelBudget": 100.0, "home_airport": "A1"},
                "2": {"fuelBudget": 100.0, "home_airport": "A2"},
            },
        )
    )
    bad = [
        RemoveTarget(id="T9", source="operator", tick=0),
        MoveSam(id="nope", pos=(1.0, 1.0), tick=0),
        AddTarget(id="T1", x=1.0, y=1.0, priority=1, type="A", tick=0),
        AddTarget(id="A2", x=1.0, y=1.0, priority=1, type="A", tick=0),
        DisableDrone(drone="9", tick=0),
        SetFuel(drone="2", fuel=5.0, tick=0),  # fine: applied
        DisableDrone(drone="2", tick=0),
        SetFuel(drone="2", fuel=5.0, tick=0),  # drone 2 is lost now
        AddSam(id="S1", pos=(50.0, 50.0), range=1.0, tick=0),
        AddSam(id="S1", pos=(60.0, 50.0), range=1.0, tick=0),
        RevealSam(id="S1", tick=0),
    ]
    commands = [
        FlyPath(drone="1", path=straight(5, 40), tick=0),
        Hold(drone="1", tick=0),
        ResumeFlight(drone="1", tick=0),
        ReturnToBase(drone="1", tick=0),
        ReturnToBase(drone="1", airport="A9", tick=0),
        Hold(drone="7", tick=0),
        Hold(drone="2", tick=0),
        FlyPath(drone="1", path=Path.point((0.0, 0.0)), tick=0),
        FlyPath(drone="1", path=straight(), waypoints=(("T9", 3.0),), tick=0),
        FlyPath(drone="1", path=straight(), waypoints=(("T1", 50.0),), tick=0),
    ]
    for item in bad + commands:
        sim.submit(item)
    result = sim.step()
    outcomes = [(e.kind, getattr(e, "reason", None)) for e in result.events]
    kinds = [k for k, _ in outcomes]
    assert kinds == [
        "edit_rejected",
        "edit_rejected",
        "edit_rejected",
        "edit_rejected",
        "edit_rejected",
        "edit_applied",
        "edit_applied",
        "drone_lost",
        "edit_rejected",
        "edit_applied",
        "edit_rejected",
        "edit_rejected",
        "command_rejected",
        "command_rejected",
        "command_rejected",
        "command_rejected",
        "command_rejected",
        "command_rejected",
        "command_rejected",
        "command_rejected",
        "command_rejected",
        "command_rejected",
    ]
    reasons = [r for _, r in outcomes if r]
    assert "no target 'T9'" in reasons and "no SAM 'nope'" in reasons
    assert "target 'T1' already exists" in reasons and "drone 2 is already lost" in reasons
    assert "SAM 'S1' is already known" in reasons and "SAM 'S1' already exists" in reasons
    assert any(
        r.startswith("the path starts at (5.000000, 0.000000), 5 km from the drone")
        for r in reasons
    )
    assert "the drone is parked, not flying" in reasons and "the drone is not holding" in reasons
    assert "the drone is already at A1" in reasons and "no airport 'A9'" in reasons
    assert "no drone '7'" in reasons and "the drone is lost" in reasons
    assert "waypoint 'T9' is not a target" in reasons
    assert any("arc lengths must be ascending" in r for r in reasons)
    sim.run(10)  # and the world goes on
    assert sim.tick == 10


@settings(max_examples=25, deadline=None)
@given(
    sams=st.lists(
        st.tuples(
            st.floats(-5.0, 10.0),
            st.sampled_from([-1.0, 1.0]),
            st.floats(3.0, 9.0),
            st.floats(0.5, 2.0),
        ),
        max_size=6,
    )
)
def test_a_hold_turns_to_the_side_farther_from_the_known_sams(sams):
    """The side of a hold, chosen on arrays (a pause holds a whole swarm on one tick), is
    the one the clearance to every known SAM, worked out one SAM at a time, picks."""
    listed = [
        {"id": f"S{k}", "pos": [x, side * y], "range": r} for k, (x, side, y, r) in enumerate(sams)
    ]
    sim = Sim(line_world(sams=listed, sim={"hold_radius": 0.5}), {"1": ["A1", "A2"]})
    sim.submit(Hold(drone="1", tick=400))
    sim.run(401)
    x, y, heading = 2.0, 0.0, 0.0  # where the drone held, flying east
    assert sim.world.status("1") == "holding"
    best = None
    for left in (True, False):
        circle = hold_circle(x, y, heading, 0.5, left)
        cx, cy = circle.pieces[0].center
        clearance = min(
            (math.hypot(cx - s["pos"][0], cy - s["pos"][1]) - 0.5 - s["range"] for s in listed),
            default=math.inf,
        )
        if best is None or clearance > best[0]:
            best = (clearance, (cx, cy))
    held = sim.world.flight("1").path.pieces[0].center
    assert held == pytest.approx(best[1], abs=1e-9)
