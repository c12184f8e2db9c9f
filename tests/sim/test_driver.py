"""The driver: stamped inputs at their tick, determinism, pacing that changes nothing."""

from __future__ import annotations

import pytest

from planner.edits import AddTarget, SetFuel, SetPriority
from planner.geometry import Line, Path
from sim import FlyPath, Hold, Sim, run_paced
from sim.errors import SimError
from tests.sim.conftest import efficient_plan, line_world

STEP = 0.005


def straight() -> Path:
    return Path.from_pieces([Line((0.0, 0.0), (40.0, 0.0))])


def test_edits_and_commands_take_effect_exactly_at_their_stamped_tick():
    timeline = [
        {"t": 2.5, "op": "set_fuel", "drone": "1", "fuel": 50.0},  # tick 50
        {"tick": 70, "op": "add_target", "id": "T9", "x": 1, "y": 1, "priority": 2, "type": "A"},
    ]
    sim = Sim(line_world(timeline=timeline))
    stamped = sim.submit(FlyPath(drone="1", path=straight()))  # unstamped: the next tick
    assert stamped.tick == 0
    hold = sim.submit(Hold(drone="1", tick=120))
    priority = sim.submit(SetPriority(id="T9", priority=7.0, t=4.0, source="operator"))
    assert (hold.tick, priority.tick, priority.t) == (120, 80, None)
    assert [type(p).__name__ for p in sim.pending()] == ["FlyPath", "SetPriority", "Hold"]
    seen = {}
    for _ in range(130):
        result = sim.step()
        for event in result.events:
            seen.setdefault(
                event.kind
                + ":"
                + getattr(event, "command", getattr(getattr(event, "edit", None), "op", "")),
                result.tick,
            )
        if result.tick == 49:
            assert sim.world.fuel("1") == pytest.approx(100.0 - 50 * STEP)
        if result.tick == 50:
            assert sim.world.fuel("1") == pytest.approx(50.0 - STEP)  # set, then flown
        if result.tick == 69:
            assert "T9" not in {t.id for t in sim.world.known_environment.targets}
        if result.tick == 70:
            assert "T9" in {t.id for t in sim.world.known_environment.targets}
        if result.tick == 119:
            assert sim.world.status("1") == "flying"
        if result.tick == 120:
            assert sim.world.status("1") == "holding"
    assert seen == {
        "command_applied:fly_path": 0,
        "edit_applied:set_fuel": 50,
        "edit_applied:add_target": 70,
        "edit_applied:set_priority": 80,
        "command_applied:hold": 120,
    }


def test_time_in_seconds_lands_on_the_first_tick_boundary_at_or_after_it():
    sim = Sim(line_world(sim={"tick_hz": 20}))
    assert sim.submit(SetFuel(drone="1", fuel=1.0, t=0.15)).tick == 3  # 3.0000000000000004
    assert sim.submit(SetFuel(drone="1", fuel=1.0, t=0.151)).tick == 4
    assert sim.submit(SetFuel(drone="1", fuel=1.0, t=0.0)).tick == 0


def test_input_stamped_for_a_past_tick_is_rejected_in_the_next_tick():
    sim = Sim(line_world())
    sim.run(10)
    sim.submit(SetFuel(drone="1", fuel=1.0, tick=3, source="operator"))
    sim.submit(Hold(drone="1", tick=5))
    result = sim.step()
    assert [(e.kind, e.tick) for e in result.events] == [
        ("edit_rejected", 10),
        ("command_rejected", 10),
    ]
    assert "stamped for tick 3, but tick 10 is next" in result.events[0].reason
    assert sim.world.fuel("1") == 100.0


def test_same_inputs_give_the_same_state_hash_at_every_tick(scenario_file):
    scenario = scenario_file("popup_sam")
    mission, solution = efficient_plan(scenario)

    def hashes(extra_fuel: float) -> list[str]:
        sim = Sim(scenario, solution, mission=mission, hash_every=1)
        sim.submit(
            AddTarget(id="T20", x=70.0, y=20.0, priority=3, type="C", tick=200, source="operator")
        )
        sim.submit(SetFuel(drone="3", fuel=extra_fuel, tick=9000, source="operator"))
        out = []
        sim.run(on_tick=lambda r: out.append(r.state_hash))
        assert out[-1] == sim.state_hash()
        return out

    first, second = hashes(200.0), hashes(200.0)
    assert len(first) > 30000 and first == second
    other = hashes(150.0)
    assert other[:9000] == first[:9000] and other[9000] != first[9000]


def test_pacing_never_changes_results(demo):
    mission, solution = efficient_plan(demo)

    class FakeClock:
        def __init__(self, step_cost: float):
            self.t, self.slept, self.step_cost = 0.0, 0.0, step_cost

        def now(self):
            self.t += self.step_cost / 2  # each step is bracketed by two now() calls
            return self.t

        def sleep(self, seconds):
            assert seconds >= 0
            self.slept += seconds
            self.t += seconds

    results = {}
    for label, speed, cost in (
        ("max", None, 1e-5),
        ("x1", 1.0, 1e-5),
        ("x50", 50.0, 1e-5),
        ("slow", 1000.0, 1e-3),
    ):
        sim = Sim(demo, solution, mission=mission)
        clock = FakeClock(cost)
        report = run_paced(sim, speed, until=4000, clock=clock)
        results[label] = (sim.state_hash(), report, clock)
    assert len({h for h, _, _ in results.values()}) == 1
    _, real_time, clock = results["x1"]
    assert real_time.ticks == 4000 and real_time.sim_seconds == pytest.approx(200.0)
    assert real_time.wall_seconds == pytest.approx(200.0, rel=1e-3) and real_time.overruns == 0
    assert results["x50"][1].wall_seconds == pytest.approx(4.0, rel=1e-2)
    assert results["max"][2].slept == 0.0
    slow = results["slow"][1]  # 1000x real time is a 50 us period; a step costs ~1 ms here
    assert slow.overruns == 4000 and slow.worst_overrun > 0


def test_run_paced_rejects_a_bad_speed():
    with pytest.raises(SimError):
        run_paced(Sim(line_world()), 0.0)


def test_step_returns_a_light_view_and_a_snapshot_on_request(demo):
    mission, solution = efficient_plan(demo)
    sim = Sim(demo, solution, mission=mission, hash_every=10)
    results = [sim.step() for _ in range(20)]
    assert [r.tick for r in results] == list(range(20))
    assert results[-1].time == pytest.approx(1.0)
    assert [r.state_hash is not None for r in results].count(True) == 2
    early, late = results[0].snapshot(), results[-1].snapshot()
    flying = [d for d, s in late.drones.items() if s.status == "flying"]
    assert flying and all(late.drones[d].distance_flown == pytest.approx(20 * STEP) for d in flying)
    assert all(
        early.drones[d].distance_flown == pytest.approx(STEP) for d in flying
    )  # frozen copies
    assert sim.snapshot() == late
    with pytest.raises(AttributeError):  # frozen
        results[0].fleet.tick = 3


def test_timeline_without_a_time_is_refused_at_build():
    from planner.edits import SetFuel as _SetFuel
    from planner.model import Scenario

    scenario = line_world()
    broken = Scenario.model_construct(
        **{**dict(scenario), "timeline": [_SetFuel(drone="1", fuel=3.0)]}
    )
    with pytest.raises(SimError):
        Sim(broken)


def test_a_flight_cut_at_a_predicted_checkpoint_is_accepted_there(demo):
    """The executive's cut: predict where a drone will be at tick k, plan from there, stamp
    the new flight for tick k; the sim takes it without a gap."""
    from sim.flight import Flight

    mission, solution = efficient_plan(demo)
    drone_id = next(d for d, r in solution.routes.items() if len(r.visited_targets) > 2)
    sim = Sim(demo, solution, mission=mission)
    sim.run(1000)
    cut = sim.tick + 1234
    x, y, _, _ = sim.world.checkpoint(drone_id, cut)
    rest = solution.routes[drone_id].route[-2:]  # skip ahead: the last target, then home
    flight = Flight.through(sim.world.known_environment, (x, y), rest)
    sim.submit(FlyPath(drone=drone_id, path=flight.path, waypoints=flight.waypoints, tick=cut))
    sim.run(cut)
    assert sim.world.position(drone_id)[:2] == pytest.approx((x, y), abs=1e-9)
    result = sim.step()
    assert [(e.kind, e.tick) for e in result.events] == [("command_applied", cut)]
    events = []
    sim.run(on_tick=lambda r: events.extend(r.events))
    assert [e.target for e in events if e.kind == "target_collected" and e.drone == drone_id] == [
        rest[0]
    ]
    assert sim.world.status(drone_id) == "landed"


def test_the_warmup_loads_every_flight_kernel_a_world_of_another_size_uses(demo):
    """``sim.driver.warmup`` (run before a paced run's tick 0) leaves nothing for the first
    tick to compile: a world of another size, re-tasked mid-run, dispatches to the same
    signatures."""
    from sim import _kernels as K
    from sim.driver import warmup

    warmup()
    kernels = (K.tick_kernel, K.tick_kernel_held, K.any_airborne)
    loaded = [len(k.signatures) for k in kernels]
    assert all(loaded)
    mission, plan = efficient_plan(demo)
    sim = Sim(demo, plan, mission=mission)
    sim.run(until=30)
    drone = next(iter(plan.routes))
    sim.submit(Hold(drone=drone, tick=sim.tick))
    sim.run(until=40)
    sim.world.active()
    assert [len(k.signatures) for k in kernels] == loaded
