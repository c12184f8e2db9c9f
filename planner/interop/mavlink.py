"""A plan as MAVLink mission item lists, one per drone, in the "QGC WPL 110" text format
that Mission Planner, MAVProxy (pymavlink's ``mavwp``) and QGroundControl load.

Item 0 is the home position (the format's convention), then the same take-off, path
waypoints and landing as the QGC plan. The file holds the items and nothing else: no ``#``
comment lines, since QGroundControl's text loader takes every line after the header for an
item and calls a file with a comment "corrupted" (``MissionController::_loadTextMissionFile``,
``MissionItem::load(QTextStream&)``: exactly 12 tab-separated fields). What each item is (its
airport or target) goes to a CSV beside the file (``WplMission.labels_csv``). Positions are
written with 8 decimals (about a millimetre; pymavlink's own writer keeps 6, 0.1 m).

One QGroundControl quirk stays: its text loader reads the line after a take-off into the
take-off item (QGroundControl issue #13167, open in v5.0.5), so QGroundControl shows such a
file without its take-off command; every waypoint and the landing are kept. Mission Planner
and MAVProxy load the file as written; QGroundControl users load the ``.plan`` export.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any, Final

from planner.geo import LocalFrame
from planner.interop._flight import flights
from planner.interop.qgc import MAV_CMD_NAV_WAYPOINT, mission_items
from planner.model import Scenario, Solution

__all__ = [
    "MAV_FRAME_GLOBAL",
    "MAV_FRAME_GLOBAL_RELATIVE_ALT",
    "WPL_HEADER",
    "WplMission",
    "mavlink_missions",
]

MAV_FRAME_GLOBAL: Final = 0
MAV_FRAME_GLOBAL_RELATIVE_ALT: Final = 3
WPL_HEADER: Final = "QGC WPL 110"
LABEL_COLUMNS: Final = ("seq", "command", "kind", "node", "latitude", "longitude", "altitude_m")


@dataclass(frozen=True)
class WplMission:
    """One drone's mission: pymavlink ``MISSION_ITEM`` messages (home first) and what each
    item is (``home A1``, ``target T3``, ``path``)."""

    items: list[Any]
    kinds: list[tuple[str, str]]  # (kind, airport or target id, "" for a path point)

    def text(self) -> str:
        """The QGC WPL 110 file: the header, then one line of 12 tab-separated fields per
        item (seq, current, frame, command, param1-4, latitude, longitude, altitude,
        autocontinue), ``\\n``-terminated, nothing else."""
        lines = [WPL_HEADER]
        for w in self.items:
            numbers = (w.param1, w.param2, w.param3, w.param4, w.x, w.y, w.z)
            fields = [str(int(v)) for v in (w.seq, w.current, w.frame, w.command)]
            fields += [f"{float(v):.8f}" for v in numbers]
            fields.append(str(int(w.autocontinue)))
            lines.append("\t".join(fields))
        return "\n".join(lines) + "\n"

    def labels_csv(self) -> str:
        """What each item is, one CSV row per item (``LABEL_COLUMNS``): the notes a
        ``#`` comment would have carried, where every tool can read them."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(LABEL_COLUMNS)
        for w, (kind, node) in zip(self.items, self.kinds):
            writer.writerow(
                [w.seq, w.command, kind, node, f"{w.x:.8f}", f"{w.y:.8f}", f"{w.z:.2f}"]
            )
        return out.getvalue()


def mavlink_missions(
    scenario: Scenario, solution: Solution, frame: LocalFrame, altitude: float = 100.0
) -> dict[str, WplMission]:
    """One ``WplMission`` per routed drone, by drone label (``D1``)."""
    from pymavlink import mavutil  # imported here: only this export needs it

    message = mavutil.mavlink.MAVLink_mission_item_message
    accept_m = scenario.sim.capture_radius * 1000.0
    out: dict[str, WplMission] = {}
    for flight in flights(scenario, solution):
        items = mission_items(flight, frame, altitude, accept_m)
        _, _, _, lat0, lon0, _ = items[0]
        home = message(
            0, 0, 0, MAV_FRAME_GLOBAL, MAV_CMD_NAV_WAYPOINT, 1, 1, 0, 0, 0, 0, lat0, lon0, 0
        )
        mission = [home]
        kinds = [("home", flight.waypoints[0].node or "")]
        for seq, (point, (command, p1, p2, lat, lon, alt)) in enumerate(
            zip(flight.waypoints, items), start=1
        ):
            fields = (seq, MAV_FRAME_GLOBAL_RELATIVE_ALT, command, 0, 1, p1, p2, 0, 0)
            mission.append(message(0, 0, *fields, lat, lon, alt))
            kinds.append((point.kind, point.node or ""))
        out[flight.label] = WplMission(mission, kinds)
    return out
