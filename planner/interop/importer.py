"""A scenario from other tools' mission files (``isr import``): QGroundControl plans
(``qgc.read_qgc_plan``) and text missions (``wpl.read_wpl``), each file one drone.

What becomes what:

* NAV_WAYPOINTs become targets. When some carry an acceptance radius and others none (as
  ``isr plan --export`` writes them), the ones without are path points, not targets. The
  same place twice is one target.
* Homes, rally points and landing points become airports; a take-off and a return to
  launch shape the drone's route (and so its fuel: its mission's length plus
  ``FUEL_RESERVE``, or ``--fuel``).
* Exclusion circles become SAMs; exclusion polygons become no-fly zones, each covered by a
  ring of overlapping SAM disks on its boundary (``fence_cover``): no plan can cross one.
  A waypoint inside a zone is not made a target; a home or landing point inside is a
  problem.
* Everything else is left out, and each such part is named in a note: inclusion fences,
  complex items, other commands, items without a position or in a local frame, a
  version-1 geofence (QGroundControl ignores it too), a breach return point.

The geo origin is the first file's home (its first placed item when the home is unset,
(0, 0)). Every place must lie within ``geodesy.MAX_GEO_EXTENT_KM`` of it. Problems
(``QgcPlanError``: the command exits 2) and notes name the file and the JSON path or the
line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from planner.errors import PlannerError
from planner.geo import GeoOrigin, LocalFrame, local_frame
from planner.geodesy import MAX_GEO_EXTENT_KM
from planner.interop.fence_cover import cover_zones
from planner.interop.qgc import (
    MAV_CMD_NAV_LAND,
    MAV_CMD_NAV_RETURN_TO_LAUNCH,
    MAV_CMD_NAV_TAKEOFF,
    MAV_CMD_NAV_WAYPOINT,
    PlanSource,
    QgcPlanError,
    plan_source,
)
from planner.interop.qgc_format import GLOBAL_FRAMES, ComplexItemIn, PlanIn, SimpleItemIn
from planner.limits import (
    MAX_DRONE_SPEED,
    MAX_FUEL_KM,
    MAX_SAMS,
    MIN_DRONE_SPEED,
    MIN_SAM_RANGE_KM,
)

__all__ = ["FUEL_RESERVE", "SAME_PLACE_M", "QgcImport", "read_mission_file", "scenario_from_qgc"]

# Two points closer than this (m) are one place when importing (a home on a rally point).
SAME_PLACE_M: Final = 1.0
FUEL_RESERVE: Final = 0.25  # an imported drone's fuel: its mission's length plus this share
MAX_ORIGIN_LAT: Final = 89.0  # planner.geo.GeoOrigin
_NAV_LAST: Final = 100  # MAV_CMD_NAV_* are below it: commands that go somewhere


@dataclass
class QgcImport:
    """A scenario built from mission files (JSON-ready, positions in lat/lon around
    ``geo``), and what was left out or changed, one line each."""

    scenario: dict[str, Any]
    notes: list[str] = field(default_factory=list)


class _Places:
    """Named places, one per spot: a point within ``SAME_PLACE_M`` of a known one is it."""

    def __init__(self, frame: LocalFrame, prefix: str):
        self.frame = frame
        self.prefix = prefix
        self.items: list[dict[str, Any]] = []
        self.km: list[tuple[float, float]] = []

    def find(self, lat: float, lon: float) -> str | None:
        x, y = self.frame.to_local(lat, lon)
        for item, (px, py) in zip(self.items, self.km):
            if math.hypot(px - x, py - y) * 1000.0 <= SAME_PLACE_M:
                return str(item["id"])
        return None

    def add(self, lat: float, lon: float, **extra: Any) -> str:
        known = self.find(lat, lon)
        if known is not None:
            return known
        item_id = f"{self.prefix}{len(self.items) + 1}"
        self.items.append({"id": item_id, "lat": lat, "lon": lon, **extra})
        self.km.append(self.frame.to_local(lat, lon))
        return item_id


@dataclass
class _Zones:
    """The no-fly zones (exclusion polygons, km) and the disks that cover them."""

    shapes: list[Any] = field(default_factory=list)  # shapely Polygons
    names: list[str] = field(default_factory=list)  # "NFZ1 ($.geoFence.polygons[1])"
    radii: list[float] = field(default_factory=list)
    disks: list[tuple[float, float, float, int]] = field(default_factory=list)  # x, y, r, zone

    def holding(self, x: float, y: float) -> str | None:
        """Which zone holds (x, y), in the zone itself or in the ring of disks covering its
        boundary, said in words; None when no zone does."""
        from shapely import Point

        point = Point(x, y)
        for name, shape in zip(self.names, self.shapes):
            if shape.covers(point):
                return f"no-fly zone {name}"
        for cx, cy, r, k in self.disks:
            if math.hypot(x - cx, y - cy) < r:
                gap = self.shapes[k].exterior.distance(point) * 1000.0
                return (
                    f"no-fly zone {self.names[k]}'s cover: {gap:.0f} m from the zone, within"
                    f" the {self.radii[k] * 1000:.0f} m disks that ring it"
                )
        return None


def read_mission_file(data: str | bytes, source: str) -> PlanSource:
    """A mission file's contents read as what its first line says it is: a text mission
    (``QGC WPL``, ``interop.wpl``) or a QGroundControl plan (JSON, read strictly:
    ``scenario_io.parse_json``). QgcPlanError or ScenarioError name every problem."""
    from planner.interop.qgc import read_qgc_plan
    from planner.interop.wpl import is_wpl, read_wpl
    from planner.scenario_io import parse_json

    text: str | None = data if isinstance(data, str) else None
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = None  # not UTF-8 text: the JSON reader names what it is
    if text is not None and is_wpl(text):
        return read_wpl(text, source)
    start = text.lstrip("\ufeff \t\r\n")[:20] if text is not None else None
    if start is not None and not start.startswith(("{", "[")):
        what = "the file is empty" if not start else f"it starts with {start!r}"
        raise QgcPlanError(
            source,
            [
                f"$: neither a QGroundControl plan (JSON) nor a text mission (first line"
                f' "QGC WPL 110"): {what}'
            ],
        )
    return plan_source(source, read_qgc_plan(parse_json(data, source), source))


def scenario_from_qgc(
    plans: Sequence[PlanSource | tuple[str, PlanIn]],
    *,
    priority: float = 1.0,
    target_type: str = "A",
    fuel: float | None = None,
) -> QgcImport:
    """A scenario from mission files (one drone each): see the module's docstring for what
    becomes what. ``fuel`` (km) for every drone, else each drone's own mission length plus
    ``FUEL_RESERVE``. QgcPlanError names what cannot be imported."""
    files = [p if isinstance(p, PlanSource) else plan_source(*p) for p in plans]
    if not files:
        raise PlannerError("no plan file to import")
    notes: list[str] = []
    homes = [_home(f, notes) for f in files]
    lat0, lon0 = homes[0]
    if abs(lat0) > MAX_ORIGIN_LAT:
        raise QgcPlanError(
            files[0].source,
            [
                f"{files[0].home_at}: latitude {lat0:g}: the mission's geo origin (the first"
                f" file's home) must lie within {MAX_ORIGIN_LAT:g} degrees of the equator"
            ],
        )
    for f in files:
        _check_reach(f, (lat0, lon0))
    geo = {"lat0": lat0, "lon0": lon0}
    frame = local_frame(GeoOrigin.model_validate(geo))
    sams: list[dict[str, Any]] = []
    zones = _Zones()
    for f in files:
        _fence_sams(f, frame, sams, notes)
    _no_fly_zones(files, frame, sams, zones, notes)
    airports = _Places(frame, "A")
    targets = _Places(frame, "T")
    for f in files:
        for k, point in enumerate(f.plan.rallyPoints.points):
            zone = zones.holding(*frame.to_local(point[0], point[1]))
            if zone is not None:
                notes.append(f"{f.source}: $.rallyPoints.points[{k}]: in {zone}: not imported")
            else:
                airports.add(point[0], point[1])
    drones: dict[str, Any] = {}
    speeds: dict[str, float] = {}
    for n, (f, home) in enumerate(zip(files, homes), start=1):
        drones[str(n)] = _drone(
            f, home, frame, airports, targets, zones, notes, priority, target_type, fuel
        )
        cruise = f.plan.mission.cruiseSpeed
        if cruise is not None and MIN_DRONE_SPEED <= cruise / 1000.0 <= MAX_DRONE_SPEED:
            speeds[str(n)] = cruise / 1000.0
        elif cruise is not None:
            notes.append(
                f"{f.source}: $.mission.cruiseSpeed {cruise:g} m/s is out of range; the"
                " default speed is used"
            )
    scenario: dict[str, Any] = {
        "geo": geo,
        "environment": {"airports": airports.items, "targets": targets.items, "sams": sams},
        "drone_configs": drones,
    }
    if speeds:
        common = next(iter(speeds.values()))
        sim: dict[str, Any] = {"speed": common}
        others = {d: v for d, v in speeds.items() if v != common}
        if others:
            sim["drone_speeds"] = others
        scenario["sim"] = sim
    return QgcImport(scenario, notes)


def _home(f: PlanSource, notes: list[str]) -> tuple[float, float]:
    """The file's home (lat, lon): its planned home, or its first placed item when the home
    is unset ((0, 0), as Mission Planner writes a file made without a vehicle)."""
    lat, lon = f.plan.mission.plannedHomePosition[:2]
    if (lat, lon) != (0.0, 0.0):
        return lat, lon
    for i, item in enumerate(f.plan.mission.items):
        if isinstance(item, SimpleItemIn) and (place := item.position()) is not None:
            notes.append(
                f"{f.source}: {f.home_at}: the home is unset (0, 0); the first placed item,"
                f" {f.item_at[i]}, is taken as home"
            )
            return place
    raise QgcPlanError(
        f.source,
        [
            f"{f.home_at}: the home is unset (0, 0) and no item has a position: nothing places the mission"
        ],
    )


def _check_reach(f: PlanSource, origin: tuple[float, float]) -> None:
    """Every place of ``f`` within ``MAX_GEO_EXTENT_KM`` of ``origin`` (geodesic), or
    QgcPlanError naming each one beyond (before any projection: PROJ's frame is not to be
    trusted there)."""
    from pyproj import Geod

    places: list[tuple[str, float, float, float]] = [
        (f.home_at, *f.plan.mission.plannedHomePosition[:2], 0.0)
    ]
    for i, item in enumerate(f.plan.mission.items):
        if isinstance(item, SimpleItemIn) and (place := item.position()) is not None:
            places.append((f.item_at[i], *place, 0.0))
    for k, point in enumerate(f.plan.rallyPoints.points):
        places.append((f"$.rallyPoints.points[{k}]", point[0], point[1], 0.0))
    for k, circle in enumerate(f.plan.geoFence.circles):
        lat, lon = circle.circle.center
        places.append((f"$.geoFence.circles[{k}]", lat, lon, circle.circle.radius / 1000.0))
    for k, polygon in enumerate(f.plan.geoFence.polygons):
        for v, (lat, lon) in enumerate(polygon.polygon):
            places.append((f"$.geoFence.polygons[{k}].polygon[{v}]", lat, lon, 0.0))
    geod = Geod(ellps="WGS84")
    problems = []
    for where, lat, lon, reach in places:
        if (lat, lon) == (0.0, 0.0) and where == f.home_at:
            continue  # an unset home (_home)
        _, _, metres = geod.inv(origin[1], origin[0], lon, lat)
        far = metres / 1000.0 + reach
        if not far <= MAX_GEO_EXTENT_KM:
            problems.append(
                f"{where}: ({lat:g}, {lon:g}) reaches {far:,.0f} km from the mission's geo"
                f" origin ({origin[0]:g}, {origin[1]:g}, the first file's home); a"
                f" geographic mission reaches at most {MAX_GEO_EXTENT_KM:,.0f} km from it"
            )
    if problems:
        raise QgcPlanError(f.source, problems)


def _fence_sams(
    f: PlanSource, frame: LocalFrame, sams: list[dict[str, Any]], notes: list[str]
) -> None:
    """Exclusion circles to SAMs (one per spot and radius across files), notes for the
    fence parts that are not imported."""
    fence = f.plan.geoFence
    for i, fc in enumerate(fence.circles):
        at = f"{f.source}: $.geoFence.circles[{i}]"
        if fc.inclusion:
            notes.append(f"{at}: an inclusion circle is not imported (SAMs keep drones out)")
            continue
        radius_km = fc.circle.radius / 1000.0
        if radius_km < MIN_SAM_RANGE_KM:
            raise QgcPlanError(
                f.source,
                [
                    f"$.geoFence.circles[{i}].circle.radius: {fc.circle.radius:g} m is smaller"
                    f" than the smallest SAM the planner takes, {MIN_SAM_RANGE_KM * 1000:g} m"
                ],
            )
        lat, lon = fc.circle.center
        x, y = frame.to_local(lat, lon)
        same = any(
            math.hypot(*(a - b for a, b in zip(frame.to_local(s["lat"], s["lon"]), (x, y))))
            * 1000.0
            <= SAME_PLACE_M
            and abs(s["range"] - radius_km) * 1000.0 <= SAME_PLACE_M
            for s in sams
        )
        if not same:
            sams.append({"id": f"SAM{len(sams) + 1}", "lat": lat, "lon": lon, "range": radius_km})
    for i, polygon in enumerate(fence.polygons):
        if polygon.inclusion:
            notes.append(
                f"{f.source}: $.geoFence.polygons[{i}]: an inclusion polygon is not imported"
                " (the planner keeps drones out of zones, not in them)"
            )
    if fence.polygon:
        notes.append(
            f"{f.source}: $.geoFence.polygon: a version-1 geofence is not imported"
            " (QGroundControl ignores it too)"
        )
    if fence.breachReturn is not None:
        notes.append(
            f"{f.source}: $.geoFence.breachReturn: the breach return point is not imported"
        )


def _no_fly_zones(
    files: list[PlanSource],
    frame: LocalFrame,
    sams: list[dict[str, Any]],
    zones: _Zones,
    notes: list[str],
) -> None:
    """Exclusion polygons (one per shape across files) covered by rings of SAM disks."""
    from shapely import Polygon

    found: list[tuple[PlanSource, int, Any]] = []
    for f in files:
        problems = []
        for i, polygon in enumerate(f.plan.geoFence.polygons):
            if polygon.inclusion:
                continue
            at = f"$.geoFence.polygons[{i}].polygon"
            if len(polygon.polygon) < 3:
                problems.append(f"{at}: a polygon needs 3 vertices, got {len(polygon.polygon)}")
                continue
            shape = Polygon([frame.to_local(lat, lon) for lat, lon in polygon.polygon])
            if not shape.is_valid or shape.area <= 0.0:
                problems.append(f"{at}: the polygon crosses itself or has no area")
                continue
            if not any(shape.equals_exact(other, SAME_PLACE_M / 1000.0) for _, _, other in found):
                found.append((f, i, shape))
        if problems:
            raise QgcPlanError(f.source, problems)
    if not found:
        return
    try:
        covers = cover_zones([shape for _, _, shape in found], MAX_SAMS - len(sams))
    except PlannerError as exc:
        f, i, _ = found[0]
        raise QgcPlanError(f.source, [f"$.geoFence.polygons: {exc}"]) from None
    for k, ((f, i, shape), cover) in enumerate(zip(found, covers), start=1):
        name = f"NFZ{k}"
        for j, (x, y) in enumerate(cover.centres, start=1):
            lat, lon = frame.to_geo(x, y)
            sams.append({"id": f"{name}.{j}", "lat": lat, "lon": lon, "range": cover.radius})
            zones.disks.append((x, y, cover.radius, len(zones.shapes)))
        zones.shapes.append(shape)
        zones.names.append(f"{name} ({f.source}: $.geoFence.polygons[{i}])")
        zones.radii.append(cover.radius)
        notes.append(
            f"{f.source}: $.geoFence.polygons[{i}]: exclusion polygon imported as no-fly zone"
            f" {name}: a ring of {len(cover.centres)} SAM disks of {cover.radius:.3f} km radius"
            f" on its boundary (they overlap: no plan crosses it; up to {cover.radius:.3f} km"
            " of extra clearance outside it, its inside out of reach)"
        )


def _drone(
    f: PlanSource,
    home: tuple[float, float],
    frame: LocalFrame,
    airports: _Places,
    targets: _Places,
    zones: _Zones,
    notes: list[str],
    priority: float,
    target_type: str,
    fuel: float | None,
) -> dict[str, Any]:
    """One file's drone: its home and end airports, its targets, its fuel."""
    problems: list[str] = []
    home_km = frame.to_local(*home)
    zone = zones.holding(*home_km)
    if zone is not None:
        problems.append(f"{f.home_at}: the home is in {zone}: no drone could take off from it")
    home_id = airports.add(*home)
    end_id = home_id
    track: list[tuple[float, float]] = [home_km]
    chosen = _targets_of(f, notes)
    for i, item in enumerate(f.plan.mission.items):
        where = f"{f.source}: {f.item_at[i]}"
        if isinstance(item, ComplexItemIn):
            notes.append(f"{where}: complex item {item.complexItemType!r} not imported")
            continue
        if item.command == MAV_CMD_NAV_RETURN_TO_LAUNCH:
            end_id = home_id
            track.append(home_km)
            continue
        place = item.position()
        if place is None:
            _note_unplaced(where, item, notes)
            continue
        here = frame.to_local(*place)
        track.append(here)
        zone = zones.holding(*here)
        if item.command == MAV_CMD_NAV_LAND:
            if zone is not None:
                problems.append(f"{f.item_at[i]}: the landing point is in {zone}")
            end_id = airports.add(*place)
        elif item.command == MAV_CMD_NAV_TAKEOFF:
            continue  # the take-off climbs out of the home: part of the route
        elif i in chosen and zone is not None:
            notes.append(f"{where}: a waypoint in {zone}: not imported as a target")
        elif i in chosen:
            known = targets.find(*place)
            if known is not None:
                notes.append(f"{where}: the same place as target {known}: one target")
            else:
                targets.add(*place, priority=priority, type=target_type)
        elif item.command != MAV_CMD_NAV_WAYPOINT:  # path points are counted by _targets_of
            notes.append(f"{where}: command {item.command} not imported (its place is flown)")
    if problems:
        raise QgcPlanError(f.source, problems)
    if track[-1] != home_km and end_id == home_id:
        track.append(home_km)
    length = sum(math.dist(a, b) for a, b in zip(track, track[1:]))
    if fuel is None:
        wanted = math.ceil(length * (1 + FUEL_RESERVE))
        if wanted > MAX_FUEL_KM:
            notes.append(
                f"{f.source}: the mission is {length:,.0f} km long; its drone's fuel is capped"
                f" at {MAX_FUEL_KM:,.0f} km"
            )
        budget: float = max(1, min(wanted, MAX_FUEL_KM))
    else:
        budget = fuel
    drone: dict[str, Any] = {"fuelBudget": budget, "home_airport": home_id}
    if end_id != home_id:
        drone["end_airport"] = end_id
    return {**drone, "accessibleTargets": "ALL"}


def _note_unplaced(where: str, item: SimpleItemIn, notes: list[str]) -> None:
    """Name an item without a place, unless its role needs none (take-off, land where the
    vehicle is: ArduPilot writes both with latitude and longitude 0)."""
    command = item.command
    if item.frame not in GLOBAL_FRAMES and command < _NAV_LAST:
        notes.append(
            f"{where}: frame {item.frame} gives no latitude and longitude: command {command}"
            " not imported"
        )
    elif command == MAV_CMD_NAV_WAYPOINT:
        notes.append(
            f"{where}: a waypoint without a position (latitude, longitude 0 or null): not imported"
        )
    elif command == MAV_CMD_NAV_LAND:
        notes.append(
            f"{where}: a landing without a position: the drone is imported as returning home"
        )
    elif command != MAV_CMD_NAV_TAKEOFF:
        notes.append(f"{where}: command {command} not imported")


def _targets_of(f: PlanSource, notes: list[str]) -> set[int]:
    """Indices of the items that become targets: placed NAV_WAYPOINTs, less the export's
    path points (acceptance radius 0 where others have one)."""
    radii = {
        i: (item.params[1] or 0.0)
        for i, item in enumerate(f.plan.mission.items)
        if isinstance(item, SimpleItemIn)
        and item.command == MAV_CMD_NAV_WAYPOINT
        and item.position() is not None
    }
    marked = any(r > 0 for r in radii.values())
    chosen = {i for i, r in radii.items() if r > 0 or not marked}
    if marked and len(chosen) < len(radii):
        notes.append(
            f"{f.source}: {len(radii) - len(chosen)} waypoint(s) without an acceptance radius"
            " taken as path points, not targets"
        )
    return chosen
