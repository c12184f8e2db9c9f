"""Missions and plans to and from the formats drone tools read: QGroundControl plan files
(``qgc``), GeoJSON (``geojson``) and MAVLink mission item lists (``mavlink``).

Every export works on a scenario, a plan of it (``Solution``) and the scenario's geographic
frame (``planner.geo``): the waypoints are the SAM-avoiding path each drone flies
(``flights``), not only its targets. Nothing here writes a file: the formats are built as
data (or a pymavlink loader) and the CLI writes them.
"""

from __future__ import annotations

from planner.interop._flight import Flight, Waypoint, flights, geo_solution, mission_frame

__all__ = ["Flight", "Waypoint", "flights", "geo_solution", "mission_frame"]
