"""A plan as MAVLink mission item lists, one per drone, through pymavlink's own
``mavwp.MAVWPLoader`` (which writes and reads the "QGC WPL 110" text format that
QGroundControl, Mission Planner and MAVProxy load). Item 0 is the home position (the
format's convention), then the same take-off, path waypoints and landing as the QGC plan,
each with a comment naming its airport or target."""

from __future__ import annotations

from typing import Any

from planner.geo import LocalFrame
from planner.interop._flight import flights
from planner.interop.qgc import MAV_CMD_NAV_WAYPOINT, mission_items
from planner.model import Scenario, Solution

__all__ = ["MAV_FRAME_GLOBAL", "MAV_FRAME_GLOBAL_RELATIVE_ALT", "mavlink_missions"]

MAV_FRAME_GLOBAL = 0
MAV_FRAME_GLOBAL_RELATIVE_ALT = 3


def mavlink_missions(
    scenario: Scenario, solution: Solution, frame: LocalFrame, altitude: float = 100.0
) -> dict[str, Any]:
    """One ``MAVWPLoader`` per routed drone, by drone label (``D1``); ``loader.save(path)``
    writes it."""
    from pymavlink import mavutil, mavwp  # imported here: only this export needs it

    message = mavutil.mavlink.MAVLink_mission_item_message
    accept_m = scenario.sim.capture_radius * 1000.0
    out: dict[str, Any] = {}
    for flight in flights(scenario, solution):
        loader = mavwp.MAVWPLoader()
        items = mission_items(flight, frame, altitude, accept_m)
        _, _, _, lat0, lon0, _ = items[0]
        home = message(
            0, 0, 0, MAV_FRAME_GLOBAL, MAV_CMD_NAV_WAYPOINT, 1, 1, 0, 0, 0, 0, lat0, lon0, 0
        )
        loader.add(home, comment=f"home {flight.waypoints[0].node}")
        for point, (command, p1, p2, lat, lon, alt) in zip(flight.waypoints, items):
            item = message(
                0, 0, 0, MAV_FRAME_GLOBAL_RELATIVE_ALT, command, 0, 1, p1, p2, 0, 0, lat, lon, alt
            )
            loader.add(item, comment=point.kind + (f" {point.node}" if point.node else ""))
        out[flight.label] = loader
    return out
