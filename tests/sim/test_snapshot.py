"""What a tick shows: the telemetry decoded from the fleet's arrays, plain and JSON-ready."""

from __future__ import annotations

import json

import pytest

from sim import Disable, DroneTelemetry, FleetView, Sim
from sim._kernels import FUEL, HDG, STATUS_NAMES, S, X, Y
from tests.sim.conftest import efficient_plan, line_world


def decoded_by_hand(view: FleetView) -> dict[str, dict[str, object]]:
    """The executive's decoding before the API existed: the reference."""
    F = view.fleet
    return {
        d: {
            "x": float(F[X, i]),
            "y": float(F[Y, i]),
            "heading": float(F[HDG, i]),
            "fuel": float(F[FUEL, i]),
            "s": float(F[S, i]),
            "status": STATUS_NAMES[int(view.status[i])],
            "points": float(view.points[i]),
        }
        for i, d in enumerate(view.ids)
    }


def test_telemetry_is_the_arrays_decoded_per_drone_in_fleet_order(demo):
    mission, solution = efficient_plan(demo)
    sim = Sim(demo, solution, mission=mission)
    seen_status: set[str] = set()
    for result in (sim.step() for _ in range(4000)):
        telemetry = result.fleet.telemetry()
        assert telemetry == decoded_by_hand(result.fleet)
        assert list(telemetry) == list(result.fleet.ids)
        seen_status.update(t["status"] for t in telemetry.values())
    assert {"flying"} <= seen_status
    last = sim.step().fleet
    for drone_id, t in last.telemetry().items():
        assert list(t) == ["x", "y", "heading", "fuel", "s", "status", "points"]
        assert all(type(t[k]) is float for k in ("x", "y", "heading", "fuel", "s", "points"))
        assert t["status"] == last.status_of(drone_id)
        state = last.snapshot().drones[drone_id]
        assert (t["x"], t["y"], t["fuel"], t["points"]) == (
            state.x,
            state.y,
            state.fuel_left,
            state.points,
        )


def test_telemetry_serialises_as_it_is_and_names_every_status():
    sim = Sim(
        line_world(
            drones={
                "1": {"fuelBudget": 100.0, "home_airport": "A1"},
                "2": {"fuelBudget": 100.0, "home_airport": "A2"},
            }
        ),
        {"1": ["A1", "A2"]},
    )
    sim.submit(Disable(drone="2", tick=0))
    first = sim.step().fleet.telemetry()
    assert (first["1"]["status"], first["2"]["status"]) == ("flying", "lost")
    assert first["1"]["x"] == pytest.approx(0.005) and first["1"]["fuel"] == pytest.approx(99.995)
    frame: dict[str, DroneTelemetry] = json.loads(json.dumps(first))
    assert frame == first
    sim.run()
    assert sim.world.fleet_view(sim.tick - 1).telemetry()["1"]["status"] == "landed"
