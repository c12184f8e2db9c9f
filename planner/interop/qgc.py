"""QGroundControl plan files: a plan out (one ``.plan`` per drone, since a plan file holds
one vehicle's mission), a plan file read in (``read_qgc_plan``; ``interop.importer`` makes
a scenario of it).

Out: each drone's mission is take-off at its start airport, a waypoint at every point of the
SAM-avoiding path it flies (a target's waypoint carries the sim's capture radius as its
acceptance radius, a pass-through point 0), and landing at its end airport; every file
carries the SAMs as exclusion circle geofences (radius in metres) and the airports as rally
points. Altitudes are relative to home (frame 3, ``MAV_FRAME_GLOBAL_RELATIVE_ALT``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError

from planner.errors import PlannerError
from planner.geo import LocalFrame
from planner.interop._flight import Flight, flights
from planner.interop.qgc_format import PlanIn
from planner.model import Scenario, Solution
from planner.scenario_io import json_path

__all__ = [
    "MAV_CMD_NAV_LAND",
    "MAV_CMD_NAV_RETURN_TO_LAUNCH",
    "MAV_CMD_NAV_TAKEOFF",
    "MAV_CMD_NAV_WAYPOINT",
    "PlanSource",
    "QgcPlanError",
    "mission_items",
    "plan_source",
    "qgc_plans",
    "read_qgc_plan",
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
        got = repr(data.get("fileType", "nothing"))
        got = got if len(got) <= 60 else got[:57] + "..."
        raise QgcPlanError(
            source, [f'$.fileType: must be "Plan" (not a QGroundControl plan file), got {got}']
        )
    try:
        return PlanIn.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            loc = [p for p in err["loc"] if p not in ("SimpleItem", "ComplexItem")]
            problems.append(f"{json_path(loc)}: {err['msg']}")
        raise QgcPlanError(source, list(dict.fromkeys(problems))) from None


@dataclass(frozen=True)
class PlanSource:
    """A mission file read for import: the name it is reported by, its plan (a text mission
    is read into the same model, ``interop.wpl``), and where its home and each mission item
    are in the file (``$.mission.items[3]`` in a plan, ``line 5`` in a text mission)."""

    source: str
    plan: PlanIn
    item_at: tuple[str, ...]
    home_at: str = "$.mission.plannedHomePosition"


def plan_source(source: str, plan: PlanIn) -> PlanSource:
    """A ``.plan`` file's ``PlanSource``: its items named by JSON path."""
    where = tuple(f"$.mission.items[{i}]" for i in range(len(plan.mission.items)))
    return PlanSource(source, plan, where)
