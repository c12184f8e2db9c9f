"""QGroundControl plan files: a plan out (one ``.plan`` per drone, since a plan file holds
one vehicle's mission), a scenario in.

Out: each drone's mission is take-off at its start airport, a waypoint at every point of the
SAM-avoiding path it flies (a target's waypoint carries the sim's capture radius as its
acceptance radius, a pass-through point 0), and landing at its end airport; every file
carries the SAMs as exclusion circle geofences (radius in metres) and the airports as rally
points. Altitudes are relative to home (frame 3, ``MAV_FRAME_GLOBAL_RELATIVE_ALT``).

In: waypoints become targets (when some waypoints carry an acceptance radius and others
none, as the export writes them, the ones without are path points and are skipped),
exclusion circles SAMs, rally points, homes and landing points airports; the geo origin is
the first file's planned home position; each file is one drone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import ValidationError

from planner.errors import PlannerError
from planner.geo import GeoOrigin, LocalFrame, local_frame
from planner.interop._flight import Flight, flights
from planner.interop.qgc_format import ComplexItemIn, PlanIn, SimpleItemIn
from planner.limits import MAX_DRONE_SPEED, MAX_FUEL_KM, MIN_DRONE_SPEED, MIN_SAM_RANGE_KM
from planner.model import Scenario, Solution
from planner.scenario import json_path

__all__ = [
    "MAV_CMD_NAV_LAND",
    "MAV_CMD_NAV_RETURN_TO_LAUNCH",
    "MAV_CMD_NAV_TAKEOFF",
    "MAV_CMD_NAV_WAYPOINT",
    "QgcImport",
    "QgcPlanError",
    "mission_items",
    "qgc_plans",
    "read_qgc_plan",
    "scenario_from_qgc",
]

MAV_CMD_NAV_WAYPOINT: Final = 16
MAV_CMD_NAV_RETURN_TO_LAUNCH: Final = 20
MAV_CMD_NAV_LAND: Final = 21
MAV_CMD_NAV_TAKEOFF: Final = 22
MAV_FRAME_GLOBAL_RELATIVE_ALT: Final = 3
ALTITUDE_MODE_RELATIVE: Final = 1  # QGC's AltMode: relative to home
MAV_AUTOPILOT_PX4: Final = 12
MAV_TYPE_FIXED_WING: Final = 1
GROUND_STATION: Final = "isr-mission"
# Two points closer than this (m) are one place when importing (a home on a rally point).
SAME_PLACE_M: Final = 1.0
FUEL_RESERVE: Final = 0.25  # an imported drone's fuel: its mission's length plus this share


class QgcPlanError(PlannerError):
    """A file that is not a QGroundControl plan this system can read; ``problems`` holds
    one line per problem, ``<JSON path>: <what>``."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        super().__init__(f"{source}: " + "; ".join(problems))


# ----- out ------------------------------------------------------------------------------


def mission_items(
    flight: Flight, frame: LocalFrame, altitude: float, accept_m: float
) -> list[tuple[int, float, float, float, float, float]]:
    """(command, param1, param2, latitude, longitude, altitude) per waypoint of ``flight``:
    take-off, waypoints (a target's with acceptance radius ``accept_m``), landing."""
    items = []
    for point in flight.waypoints:
        lat, lon = frame.to_geo(point.x, point.y)
        if point.kind == "takeoff":
            items.append((MAV_CMD_NAV_TAKEOFF, 0.0, 0.0, lat, lon, altitude))
        elif point.kind == "land":
            items.append((MAV_CMD_NAV_LAND, 0.0, 0.0, lat, lon, 0.0))
        else:
            radius = accept_m if point.kind == "target" else 0.0
            items.append((MAV_CMD_NAV_WAYPOINT, 0.0, radius, lat, lon, altitude))
    return items


def qgc_plans(
    scenario: Scenario, solution: Solution, frame: LocalFrame, altitude: float = 100.0
) -> dict[str, dict[str, Any]]:
    """One QGC plan per routed drone, by drone label (``D1``): JSON-ready data."""
    env = scenario.environment
    circles = []
    for sam in env.sams:
        lat, lon = frame.to_geo(sam.x, sam.y)
        circles.append(
            {
                "circle": {"center": [lat, lon], "radius": sam.range * 1000.0},
                "inclusion": False,
                "version": 1,
            }
        )
    rally = [[*frame.to_geo(a.x, a.y), altitude] for a in env.airports]
    accept_m = scenario.sim.capture_radius * 1000.0
    plans = {}
    for flight in flights(scenario, solution):
        items = []
        for seq, (command, p1, p2, lat, lon, alt) in enumerate(
            mission_items(flight, frame, altitude, accept_m), start=1
        ):
            items.append(
                {
                    "AMSLAltAboveTerrain": None,
                    "Altitude": alt,
                    "AltitudeMode": ALTITUDE_MODE_RELATIVE,
                    "autoContinue": True,
                    "command": command,
                    "doJumpId": seq,
                    "frame": MAV_FRAME_GLOBAL_RELATIVE_ALT,
                    "params": [p1, p2, 0.0, None, lat, lon, alt],
                    "type": "SimpleItem",
                }
            )
        home = flight.waypoints[0]
        speed = flight.speed * 1000.0  # m/s
        plans[flight.label] = {
            "fileType": "Plan",
            "geoFence": {"circles": circles, "polygons": [], "version": 2},
            "groundStation": GROUND_STATION,
            "mission": {
                "cruiseSpeed": speed,
                "firmwareType": MAV_AUTOPILOT_PX4,
                "globalPlanAltitudeMode": ALTITUDE_MODE_RELATIVE,
                "hoverSpeed": speed,
                "items": items,
                "plannedHomePosition": [*frame.to_geo(home.x, home.y), 0.0],
                "vehicleType": MAV_TYPE_FIXED_WING,
                "version": 2,
            },
            "rallyPoints": {"points": rally, "version": 2},
            "version": 1,
        }
    return plans


# ----- in -------------------------------------------------------------------------------


def read_qgc_plan(data: Any, source: str) -> PlanIn:
    """A parsed ``.plan`` file, checked as QGC loads one; QgcPlanError naming each problem
    by JSON path (``$.mission.items[3].params``) otherwise."""
    if not isinstance(data, dict):
        raise QgcPlanError(source, [f"$: a plan file is a JSON object, got {type(data).__name__}"])
    if data.get("fileType") != "Plan":
        got = data.get("fileType", "nothing")
        raise QgcPlanError(
            source, [f'$.fileType: must be "Plan" (not a QGroundControl plan file), got {got!r}']
        )
    try:
        return PlanIn.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            loc = [p for p in err["loc"] if p not in ("SimpleItem", "ComplexItem")]
            problems.append(f"{json_path(loc)}: {err['msg']}")
        raise QgcPlanError(source, list(dict.fromkeys(problems))) from None


@dataclass
class QgcImport:
    """A scenario built from plan files (JSON-ready, positions in lat/lon around ``geo``),
    and what was left out, one line each."""

    scenario: dict[str, Any]
    notes: list[str] = field(default_factory=list)


class _Places:
    """Named places, one per spot: a point within ``SAME_PLACE_M`` of a known one is it."""

    def __init__(self, frame: LocalFrame, prefix: str):
        self.frame = frame
        self.prefix = prefix
        self.items: list[dict[str, Any]] = []
        self._km: list[tuple[float, float]] = []

    def find(self, lat: float, lon: float) -> str | None:
        x, y = self.frame.to_local(lat, lon)
        for item, (px, py) in zip(self.items, self._km):
            if math.hypot(px - x, py - y) * 1000.0 <= SAME_PLACE_M:
                return str(item["id"])
        return None

    def add(self, lat: float, lon: float, **extra: Any) -> str:
        known = self.find(lat, lon)
        if known is not None:
            return known
        item_id = f"{self.prefix}{len(self.items) + 1}"
        self.items.append({"id": item_id, "lat": lat, "lon": lon, **extra})
        self._km.append(self.frame.to_local(lat, lon))
        return item_id


def scenario_from_qgc(
    plans: list[tuple[str, PlanIn]],
    *,
    priority: float = 1.0,
    target_type: str = "A",
    fuel: float | None = None,
) -> QgcImport:
    """A scenario from plan files (``(source, plan)``, one drone each): see the module's
    docstring for what becomes what. ``fuel`` (km) for every drone, else each drone's own
    mission length plus ``FUEL_RESERVE``."""
    if not plans:
        raise PlannerError("no plan file to import")
    home0 = plans[0][1].mission.plannedHomePosition
    geo = {"lat0": home0[0], "lon0": home0[1]}
    frame = local_frame(GeoOrigin.model_validate(geo))
    airports = _Places(frame, "A")
    targets = _Places(frame, "T")
    sams: list[dict[str, Any]] = []
    notes: list[str] = []
    for _, plan in plans:
        for point in plan.rallyPoints.points:
            airports.add(point[0], point[1])
    drones: dict[str, Any] = {}
    speeds: dict[str, float] = {}
    for n, (source, plan) in enumerate(plans, start=1):
        _fence_sams(source, plan, frame, sams, notes)
        home = plan.mission.plannedHomePosition
        home_id = airports.add(home[0], home[1])
        end_id = home_id
        track: list[tuple[float, float]] = [frame.to_local(home[0], home[1])]
        waypoints = _waypoints(source, plan, notes)
        for i, item in enumerate(plan.mission.items):
            if not isinstance(item, SimpleItemIn):
                continue
            lat, lon = item.position()
            if item.command == MAV_CMD_NAV_RETURN_TO_LAUNCH:
                end_id = home_id
                track.append(frame.to_local(home[0], home[1]))
                continue
            if lat is None or lon is None or (lat == 0 and lon == 0):
                continue  # a command without a place (speed, camera...)
            track.append(frame.to_local(lat, lon))
            if item.command == MAV_CMD_NAV_LAND:
                end_id = airports.add(lat, lon)
            elif i in waypoints:
                targets.add(lat, lon, priority=priority, type=target_type)
        if track[-1] != frame.to_local(home[0], home[1]) and end_id == home_id:
            track.append(frame.to_local(home[0], home[1]))
        length = sum(math.dist(a, b) for a, b in zip(track, track[1:]))
        budget = (
            fuel if fuel is not None else min(math.ceil(length * (1 + FUEL_RESERVE)), MAX_FUEL_KM)
        )
        drone: dict[str, Any] = {"fuelBudget": max(budget, 1), "home_airport": home_id}
        if end_id != home_id:
            drone["end_airport"] = end_id
        drones[str(n)] = {**drone, "accessibleTargets": "ALL"}
        cruise = plan.mission.cruiseSpeed
        if cruise is not None and MIN_DRONE_SPEED <= cruise / 1000.0 <= MAX_DRONE_SPEED:
            speeds[str(n)] = cruise / 1000.0
        elif cruise is not None:
            notes.append(
                f"{source}: $.mission.cruiseSpeed {cruise:g} m/s is out of range; the default speed is used"
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


def _fence_sams(
    source: str, plan: PlanIn, frame: LocalFrame, sams: list[dict[str, Any]], notes: list[str]
) -> None:
    """Exclusion circles to SAMs (one per spot and radius across files), notes for the rest."""
    fence = plan.geoFence
    for i, fc in enumerate(fence.circles):
        at = f"{source}: $.geoFence.circles[{i}]"
        if fc.inclusion:
            notes.append(f"{at}: an inclusion circle is not imported (SAMs keep drones out)")
            continue
        radius_km = fc.circle.radius / 1000.0
        if radius_km < MIN_SAM_RANGE_KM:
            raise QgcPlanError(
                source,
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
    polygons = len(fence.polygons) + (1 if fence.polygon else 0)
    if polygons:
        notes.append(f"{source}: {polygons} polygon geofence(s) not imported (SAMs are circles)")


def _waypoints(source: str, plan: PlanIn, notes: list[str]) -> set[int]:
    """Indices of the items that become targets: NAV_WAYPOINTs, less the export's path
    points (acceptance radius 0 where others have one)."""
    simple = [
        (i, item)
        for i, item in enumerate(plan.mission.items)
        if isinstance(item, SimpleItemIn) and item.command == MAV_CMD_NAV_WAYPOINT
    ]
    radii = {i: (item.params[1] or 0.0) if len(item.params) > 1 else 0.0 for i, item in simple}
    marked = any(r > 0 for r in radii.values())
    chosen = {i for i, r in radii.items() if r > 0 or not marked}
    if marked and len(chosen) < len(radii):
        notes.append(
            f"{source}: {len(radii) - len(chosen)} waypoint(s) without an acceptance radius"
            " taken as path points, not targets"
        )
    for i, item in enumerate(plan.mission.items):
        if isinstance(item, ComplexItemIn):
            notes.append(
                f"{source}: $.mission.items[{i}]: complex item {item.complexItemType!r} not imported"
            )
        elif isinstance(item, SimpleItemIn) and item.command not in (
            MAV_CMD_NAV_WAYPOINT,
            MAV_CMD_NAV_TAKEOFF,
            MAV_CMD_NAV_LAND,
            MAV_CMD_NAV_RETURN_TO_LAUNCH,
        ):
            notes.append(f"{source}: $.mission.items[{i}]: command {item.command} not imported")
    return chosen
