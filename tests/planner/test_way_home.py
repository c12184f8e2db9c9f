"""The way home with one more SAM on it (planner.way_home), on hand-made geometry: a drone whose
only way home is a corridor through a wall of SAMs, which one more SAM of the size seen closes;
and the same drone in open ground, where one more SAM only costs the way round it."""

from __future__ import annotations

from planner.mission import compile_mission
from planner.scenario import parse_scenario
from planner.solution import build_solution
from planner.way_home import HomeCheck, WayHome, guard_routes, guard_solution

R = 5.0  # every SAM's range (km): the largest known, the size of the one more


def _scenario(sams: list[tuple[float, float]], fuel: float):
    return parse_scenario(
        {
            "environment": {
                "airports": [{"id": "A1", "x": 0.0, "y": 0.0}],
                "targets": [
                    {"id": "T1", "x": 40.0, "y": 0.0, "priority": 5, "type": "A"},
                    {"id": "T2", "x": 40.0, "y": 6.0, "priority": 5, "type": "A"},
                ],
                "sams": [
                    {"id": f"S{i}", "pos": [x, y], "range": R} for i, (x, y) in enumerate(sams)
                ],
            },
            "drone_configs": {
                "1": {"fuelBudget": fuel, "home_airport": "A1", "accessibleTargets": "ALL"}
            },
            "sim": {"speed": 0.1, "sensor_range": 10.0},
        }
    )


# A wall of overlapping SAMs at x = 20 from y = +-8 to +-120, with a 6 km corridor at y = 0
# (planning margins make it a little narrower): the only short way between the airport and
# the targets. One more SAM of range 5 in it merges with both sides and closes it.
WALL = [(20.0, s * (8.0 + 8.0 * k)) for s in (1, -1) for k in range(15)]
FAR = [(0.0, 80.0)]  # open ground: one SAM far away, the size seen


def test_a_corridor_one_more_sam_closes_fails_the_check_and_the_route_ends_before_it():
    mission = compile_mission(_scenario(WALL, fuel=100.0))
    way_home = WayHome(mission)
    t1 = mission.index["T1"]
    plain = float(mission.dist[t1, mission.index["A1"]])
    assert plain < 45.0  # through the corridor
    # closed, the way round the wall is more than 200 km longer
    assert way_home.needed(t1) > plain + 200.0
    a1 = mission.index["A1"]
    route = [a1, t1, mission.index["T2"], a1]
    assert mission.route_length(route) < 100.0 - 1.0  # the plan fits its fuel and reserve
    routes, cuts = guard_routes(mission, {"1": route}, {"1": 100.0}, HomeCheck(1.0), way_home)
    assert routes["1"] == [a1, a1]  # nothing beyond the corridor: it stays home
    (cut,) = cuts
    assert cut.drone == "1" and cut.at == "T1" and cut.dropped == ("T1", "T2")
    assert "way home" in cut.reason and "T1" in cut.reason


def test_in_open_ground_one_more_sam_costs_the_way_round_it_and_a_route_with_that_passes():
    mission = compile_mission(_scenario(FAR, fuel=100.0))
    # open ground: only the full check (the new SAM next to the ends of the way) prices it
    assert WayHome(mission).needed(mission.index["T1"]) == float(
        mission.dist[mission.index["T1"], mission.index["A1"]]
    )
    way_home = WayHome(mission, ends=True)
    full = HomeCheck(1.0, ends=True)
    t1, a1 = mission.index["T1"], mission.index["A1"]
    plain = float(mission.dist[t1, a1])
    extra = way_home.needed(t1) - plain
    # the way round a disk of range 5 across a straight way: more than nothing, less than
    # half its circle
    assert 0.5 < extra < 3.14 * R
    route = [a1, t1, a1]
    enough = mission.route_length(route) + extra + 1.0 + 1e-6
    solution = build_solution(mission, {"1": route})
    kept, cuts = guard_solution(mission, solution, {"1": enough}, full)
    assert not cuts and kept is solution
    short = enough - 0.5  # half a km short of the way round one more SAM: T1 is dropped
    repaired, cuts = guard_solution(mission, solution, {"1": short}, full)
    assert [c.dropped for c in cuts] == [("T1",)]
    assert repaired.routes["1"].route == ["A1", "A1"]
    assert repaired.total_points == 0


def test_no_sam_seen_yet_means_the_plain_way_home():
    scenario = _scenario([], fuel=100.0)
    mission = compile_mission(scenario)
    t1, a1 = mission.index["T1"], mission.index["A1"]
    assert WayHome(mission, ends=True).needed(t1) == float(mission.dist[t1, a1])
