"""A plan as GeoJSON (RFC 7946): one FeatureCollection with each drone's route as a
LineString (the SAM-avoiding path it flies), the airports and targets as Points and the
SAMs as Polygon circles, with their ids, priorities, types and plan figures as properties.
Coordinates are [longitude, latitude], as the RFC orders them, longitudes within
[-180, 180].

A drone that takes off and lands where it is, with no target, has a Point as its route. A
geometry that crosses the antimeridian is cut there (RFC 7946 §3.1.9): a route becomes a
MultiLineString whose parts meet at longitude 180 / -180, a SAM's circle a MultiPolygon
(clipped with shapely). A circle round a pole is closed along the pole's latitude, so that
it stays one valid polygon and not a band round the globe."""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

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
        return [_wrap(lon), lat]

    features: list[dict[str, Any]] = []
    for flight in flights(scenario, solution):
        result = solution.routes[flight.drone]
        features.append(
            _feature(
                *_line([lon_lat(p.x, p.y) for p in flight.waypoints]),
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
        centre = lon_lat(sam.x, sam.y)
        features.append(
            _feature(
                *_polygon(ring, centre[1]), kind="sam", id=sam.id, range_km=sam.range, center=centre
            )
        )
    return {"type": "FeatureCollection", "features": features}


def _wrap(lon: float) -> float:
    """A longitude within [-180, 180]."""
    return lon if -180.0 <= lon <= 180.0 else (lon + 180.0) % 360.0 - 180.0


def _line(points: list[list[float]]) -> tuple[str, Any]:
    """A LineString, or a MultiLineString cut at each antimeridian crossing (a leg whose
    longitudes differ by more than 180 degrees goes the short way, across it); the cut's
    latitude is interpolated along the leg. A route that never leaves its airport (take
    off, land) is the airport's Point: a line needs two distinct positions."""
    if all(p == points[0] for p in points):
        return "Point", points[0]
    parts = [[points[0]]]
    for (lon0, lat0), (lon1, lat1) in zip(points, points[1:]):
        if abs(lon1 - lon0) > 180.0:
            edge = math.copysign(180.0, lon0)  # the side the leg leaves from
            unwrapped = lon1 + 360.0 if lon0 > 0 else lon1 - 360.0
            t = (edge - lon0) / (unwrapped - lon0)
            lat = lat0 + t * (lat1 - lat0)
            parts[-1].append([edge, lat])
            parts.append([[-edge, lat]])
        parts[-1].append([lon1, lat1])
    if len(parts) == 1:
        return "LineString", parts[0]
    return "MultiLineString", parts


def _polygon(ring: list[list[float]], centre_lat: float) -> tuple[str, Any]:
    """A Polygon (counter-clockwise, closed: the RFC's exterior ring), or a MultiPolygon of
    the pieces either side of the antimeridian. The ring is unwrapped into continuous
    longitudes, closed along the pole's latitude if it winds round a pole, and clipped to
    [-180, 180] in three shifts."""
    from shapely import box, unary_union
    from shapely.geometry import Polygon
    from shapely.geometry.polygon import orient

    lon = np.unwrap(np.radians([p[0] for p in ring]))
    lon = np.degrees(lon)
    lat = [p[1] for p in ring]
    coords = list(zip(lon.tolist(), lat))
    winding = lon[-1] - lon[0] + _wrap(float(ring[0][0] - ring[-1][0]))
    if abs(winding) > 180.0:  # round a pole: once round, then close along its latitude
        pole = 90.0 if centre_lat > 0 else -90.0
        end = float(lon[0]) + math.copysign(360.0, winding)
        coords += [(end, lat[0]), (end, pole), (float(lon[0]), pole)]
    shape = Polygon(coords)
    world = box(-180.0, -90.0, 180.0, 90.0)
    clipped = [
        world.intersection(Polygon([(x + shift, y) for x, y in shape.exterior.coords]))
        for shift in (0.0, 360.0, -360.0)
    ]
    merged = unary_union(clipped)  # a pole's cap: the pieces either side of its seam rejoin
    pieces = [
        _ring(orient(part, 1.0))
        for part in getattr(merged, "geoms", [merged])
        if isinstance(part, Polygon) and part.area > 0.0
    ]
    if len(pieces) == 1:
        return "Polygon", [pieces[0]]
    return "MultiPolygon", [[piece] for piece in pieces]


def _ring(polygon: Any) -> list[list[float]]:
    return [[float(x), float(y)] for x, y in polygon.exterior.coords]


def _feature(geometry: str, coordinates: Any, /, **properties: Any) -> dict[str, Any]:
    return {
        "type": "Feature",
        "geometry": {"type": geometry, "coordinates": coordinates},
        "properties": properties,
    }
