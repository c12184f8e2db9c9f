"""Flights: waypoints at the right arc lengths, cutting a path, the holding circle."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner.geometry import Path
from planner.mission import compile_mission
from sim.flight import Flight, hold_circle, slice_path
from tests.sim.conftest import efficient_plan


def test_route_flight_puts_each_target_at_its_leg_end(demo):
    mission, solution = efficient_plan(demo)
    for route in solution.routes.values():
        flight = Flight.from_route(mission, route.route)
        if flight is None:
            assert len(set(route.route)) == 1
            continue
        assert [t for t, _ in flight.waypoints] == route.visited_targets
        for target_id, s in flight.waypoints:
            x, y, _ = flight.path.locate(s)
            target = demo.environment.target(target_id)
            assert math.hypot(x - target.x, y - target.y) < 1e-9
        assert flight.length == pytest.approx(route.distance, abs=1e-9)


def test_a_routes_path_is_joined_once_for_its_polyline_and_its_flight(demo):
    mission, solution = efficient_plan(demo)
    route = max(solution.routes.values(), key=lambda r: r.distance)
    nodes = mission.nodes(route.route)
    path = mission.route_path(nodes)
    legs = [mission.paths.path(a, b) for a, b in zip(nodes, nodes[1:])]
    assert path == Path.concat(legs) and mission.route_path(tuple(nodes)) is path
    flight = Flight.from_route(mission, route.route)
    assert flight is not None and flight.path is path
    assert [list(p) for p in path.sample()] == [list(p) for p in route.path]
    # the routes kept are a few plans' worth, however many routes are asked of the mission
    for k in range(4 * len(mission.drones) + 200):
        mission.route_path((nodes[0], *nodes[1:-1], nodes[-1], nodes[-1], *([nodes[-1]] * k)))
    assert len(mission._routes) <= 4 * len(mission.drones) + 64  # noqa: SLF001


def test_slice_path_keeps_the_rest_of_the_geometry(demo):
    mission, solution = efficient_plan(demo)
    route = max(solution.routes.values(), key=lambda r: r.distance)
    path = mission.route_path(mission.nodes(route.route))
    for s0 in np.linspace(0.0, path.length, 37)[1:-1]:
        rest = slice_path(path, float(s0))
        assert rest.length == pytest.approx(path.length - s0, abs=1e-9)
        for u in np.linspace(0.0, rest.length, 11):
            assert rest.locate(float(u))[:2] == pytest.approx(
                path.locate(float(s0 + u))[:2], abs=1e-9
            )
    assert slice_path(path, path.length) is None and slice_path(path, 0.0) is path


@pytest.mark.parametrize("left", [True, False])
def test_hold_circle_starts_here_along_the_heading(left):
    circle = hold_circle(3.0, 4.0, 0.7, 0.5, left)
    x, y, h = circle.locate(0.0)
    assert (x, y) == pytest.approx((3.0, 4.0), abs=1e-12)
    assert math.cos(h - 0.7) == pytest.approx(1.0, abs=1e-12)
    assert circle.length == pytest.approx(math.pi)
    assert circle.locate(circle.length)[:2] == pytest.approx((3.0, 4.0), abs=1e-12)
    quarter = circle.locate(circle.length / 4)  # left turns go counter-clockwise
    cross = math.cos(0.7) * (quarter[1] - 4.0) - math.sin(0.7) * (quarter[0] - 3.0)
    assert (cross > 0) == left


def test_flight_through_the_known_environment_avoids_its_sams(demo):
    env = demo.environment
    flight = Flight.through(env, (10.0, 20.0), ["T2", "A1"])
    mission = compile_mission(demo)
    i, j, k = mission.index["A1"], mission.index["T2"], mission.index["A1"]
    assert flight.length == pytest.approx(mission.dist[i, j] + mission.dist[j, k], abs=1e-9)
    assert flight.waypoints == (("T2", pytest.approx(mission.dist[i, j], abs=1e-9)),)
