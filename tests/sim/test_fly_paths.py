"""A tick's run of ``fly_path`` commands begins its flights at once
(``sim._apply_command.apply_fly_paths``): the same events, in the same order, and the same
world afterwards as applying them one by one, rejections and a drone named twice included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.geometry import Line, Path
from sim import FlyPath, Sim
from tests.sim.conftest import line_world

AIRPORTS = [{"id": f"A{k}", "x": 4.0 * k, "y": 0.0} for k in range(4)]
TARGETS = [
    {"id": f"T{k}", "x": 4.0 * k + 2.0, "y": 1.5, "priority": 1, "type": "A"} for k in range(4)
]
DRONES = {
    str(d): {"fuelBudget": 200.0, "home_airport": f"A{d}", "accessibleTargets": "ALL"}
    for d in range(4)
}

# (drone, what the command is): a route to a target then an airport, one that starts
# elsewhere, one with a waypoint that is no target, one ending away from any airport
_commands = st.lists(
    st.tuples(
        st.sampled_from(["0", "1", "2", "3", "9"]),
        st.sampled_from(["route", "bad_start", "no_target", "open_end"]),
        st.integers(0, 3),
        st.integers(0, 3),
    ),
    min_size=1,
    max_size=10,
)


def _command(drone: str, kind: str, target: int, airport: int, tick: int) -> FlyPath:
    home = (4.0 * int(drone), 0.0) if drone != "9" else (0.0, 0.0)
    start = (home[0] + 1.0, home[1]) if kind == "bad_start" else home
    via = (4.0 * target + 2.0, 1.5)
    end = (4.0 * airport + (1.0 if kind == "open_end" else 0.0), 0.0)
    first, second = Line(start, via), Line(via, end)
    path = Path.from_pieces([first, second])
    waypoint = "X" if kind == "no_target" else f"T{target}"
    return FlyPath(drone=drone, path=path, waypoints=((waypoint, first.length),), tick=tick)


def _world():
    return line_world(
        airports=AIRPORTS,
        targets=TARGETS,
        drones=DRONES,
        sim={"tick_hz": 20, "speed": 1.0},
    )


def _said(events) -> list[tuple]:
    return [(type(e).__name__, e.model_dump_json()) for e in events]


@settings(max_examples=60, deadline=None)
@given(commands=_commands)
def test_a_run_of_fly_paths_is_what_one_by_one_would_be(commands) -> None:
    together, alone = Sim(_world()), Sim(_world())
    together.step()
    alone.step()
    made = [_command(*c, tick=1) for c in commands]
    for command in made:
        together.submit(command)
    events = together.step().events
    one_by_one = [e for command in made for e in alone.world.apply_command(command)]
    one_by_one += alone.world.advance()
    assert _said(events) == _said(one_by_one)
    for tick in range(400):  # the flights flown: the same positions, collections, landings
        assert _said(together.step().events) == _said(alone.step().events)
        if tick % 20 == 0:
            assert together.world.state_hash() == alone.world.state_hash()
    assert together.world.state_hash() == alone.world.state_hash()


def test_the_fleets_fuel_and_flights_at_once_are_what_the_accessors_say():
    # the safety check reads these for ~780 airborne drones at once (World.flight_fuel)
    from executive.loop.homing import AT_KM
    from sim import Hold
    from sim._fleet import AIRPORT_TOLERANCE

    assert AIRPORT_TOLERANCE == AT_KM  # the sim's end airport is the safety layer's
    sim = Sim(_world())
    sim.step()
    sim.submit(_command("0", "route", 1, 2, tick=1))  # lands at A2
    sim.submit(_command("1", "open_end", 2, 3, tick=1))  # ends away from an airport
    sim.submit(_command("2", "route", 0, 0, tick=1))  # back home, then held
    sim.submit(Hold(drone="2", tick=5))
    for _ in range(40):
        sim.step()
    world = sim.world
    fuel, left, lands = world.flight_fuel()
    for i, drone_id in enumerate(world.drone_ids):
        flight = world.flight(drone_id)
        assert fuel[i] == world.fuel(drone_id)
        status = world.status(drone_id)
        if flight is not None:
            assert left[i] == flight.length - world.progress(drone_id)
        ends = flight is not None and any(
            abs(flight.path.end[0] - a["x"]) + abs(flight.path.end[1] - a["y"]) == 0.0
            for a in AIRPORTS
        )
        assert lands[i] == (status == "flying" and ends), drone_id
    assert lands.tolist() == [True, False, False, False]  # "2" holds, "3" is parked
