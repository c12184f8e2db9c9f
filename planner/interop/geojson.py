"""A plan as GeoJSON (RFC 7946): one FeatureCollection with each drone's route as a
LineString (the SAM-avoiding path it flies), the airports and targets as Points and the
SAMs as Polygon circles, with their ids, priorities, types and plan figures as properties.
Coordinates are [longitude, latitude], as the RFC orders them."""

from __future__ import annotations

import math
from typing import Any, Final

from planner.geo import LocalFrame
from planner.interop._flight import flights
from planner.model import Scenario, Solution

__all__ = ["CIRCLE_VERTICES", "geojson_plan"]

CIRCLE_VERTICES: Final = 72  # a SAM's polygon: a chord every 5 degrees


def geojson_plan(scenario: Scenario, solution: Solution, frame: LocalFrame) -> dict[str, Any]:
    """The FeatureCollection of ``solution`` over ``scenario``: JSON-ready data."""
    env = scenario.environment

    def lon_lat(x: float, y: float) -> list[float]:
        lat, lon = frame.to_geo(x, y)
        return [lon, lat]

    features: list[dict[str, Any]] = []
    for flight in flights(scenario, solution):
        result = solution.routes[flight.drone]
        features.append(
            _feature(
                "LineString",
                [lon_lat(p.x, p.y) for p in flight.waypoints],
                kind="route",
                drone=flight.drone,
                label=flight.label,
                route=flight.route,
                targets=list(result.visited_targets),
                distance_km=result.distance,
                fuel_budget_km=result.fuel_budget,
                points=result.total_points,
            )
        )
    for airport in env.airports:
        features.append(
            _feature(
                "Point",
                lon_lat(airport.x, airport.y),
                kind="airport",
                id=airport.id,
                label=airport.label,
            )
        )
    visited_by = {t: d for d, r in solution.routes.items() for t in r.visited_targets}
    excluded = set(solution.excluded_targets)
    for target in env.targets:
        status = "visited" if target.id in visited_by else "unassigned"
        features.append(
            _feature(
                "Point",
                lon_lat(target.x, target.y),
                kind="target",
                id=target.id,
                priority=target.priority,
                type=target.type,
                status="excluded" if target.id in excluded else status,
                drone=visited_by.get(target.id),
            )
        )
    for sam in env.sams:
        ring = [
            lon_lat(
                sam.x + sam.range * math.cos(2 * math.pi * k / CIRCLE_VERTICES),
                sam.y + sam.range * math.sin(2 * math.pi * k / CIRCLE_VERTICES),
            )
            for k in range(CIRCLE_VERTICES)
        ]
        ring.append(ring[0])  # counter-clockwise and closed: the RFC's exterior ring
        centre = lon_lat(sam.x, sam.y)
        features.append(
            _feature("Polygon", [ring], kind="sam", id=sam.id, range_km=sam.range, center=centre)
        )
    return {"type": "FeatureCollection", "features": features}


def _feature(geometry: str, coordinates: Any, /, **properties: Any) -> dict[str, Any]:
    return {
        "type": "Feature",
        "geometry": {"type": geometry, "coordinates": coordinates},
        "properties": properties,
    }
