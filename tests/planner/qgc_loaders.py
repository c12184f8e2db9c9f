"""QGroundControl's mission loaders, transcribed from its C++ sources into test helpers, so
that a test can ask "would QGroundControl open this file, and what would it see?".

Read from mavlink/qgroundcontrol (src/MissionManager, the 4.x/5.x line; the functions named
at each helper) and written here in Python, not copied: same checks, same order, same error
texts where QGC shows one. Only what the project's exports and imports touch is transcribed
(no survey or corridor internals: an unsupported complex item is an error here).

Two QGC behaviours worth knowing, both transcribed faithfully:

* The text loader reads the line after a take-off into the take-off item
  (``MissionController::_loadTextMissionFile`` calls ``TakeoffMissionItem::load(stream)``
  after ``SimpleMissionItem::load(stream)`` already read the take-off's line): the take-off
  command disappears and the next item stands in its place (QGC issue #13167).
* A version-1 geofence or rally point object is ignored, not refused.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "QgcItem",
    "QgcLoadError",
    "QgcMission",
    "qgc_load_plan",
    "qgc_load_text_mission",
]

MAV_CMD_NAV_TAKEOFF = 22
MAV_CMD_NAV_VTOL_TAKEOFF = 84
MAV_CMD_DO_JUMP = 177


class QgcLoadError(Exception):
    """QGroundControl would refuse the file, with this message."""


@dataclass
class QgcItem:
    """One simple mission item as QGC holds it after loading (``MissionItem``)."""

    command: int
    frame: int
    params: list[float]  # param1-7, NaN where the file had null
    auto_continue: bool
    do_jump_id: int = -1


@dataclass
class QgcMission:
    """What QGC ends up with: the planned home, the simple items in order, and the fence
    circles, polygons and rally points it loaded."""

    home: tuple[float, float, float]
    items: list[QgcItem]
    circles: list[dict[str, Any]] = field(default_factory=list)
    polygons: list[dict[str, Any]] = field(default_factory=list)
    rally: list[tuple[float, float, float]] = field(default_factory=list)
    text_fields_ok: bool = True  # every text field converted cleanly (QGC does not check)


# ----- JsonHelper (src/Utilities/JsonHelper.cc) -------------------------------------------

_QT_TYPES = {bool: "Bool", int: "Double", float: "Double", str: "String", list: "Array"}


def _qt_type(value: Any) -> str:
    """QJsonValue::type() of a parsed JSON value."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "Bool"
    if isinstance(value, dict):
        return "Object"
    return _QT_TYPES.get(type(value), "Undefined")


def _validate_keys(obj: dict[str, Any], keys: list[tuple[str, str, bool]]) -> None:
    """JsonHelper::validateKeys: the required keys present, then each present key of its
    type (null passes where a Double is wanted: it stands for NaN)."""
    missing = [key for key, _, required in keys if required and key not in obj]
    if missing:
        raise QgcLoadError(f"The following required keys are missing: {', '.join(missing)}")
    for key, wanted, _ in keys:
        if key in obj:
            got = _qt_type(obj[key])
            if got == "NULL" and wanted == "Double":
                continue
            if got != wanted:
                raise QgcLoadError(f"Incorrect value type - key:type:expected {key}:{got}:{wanted}")


def _nan(value: Any) -> float:
    """JsonHelper::possibleNaNJsonValue: null is NaN, a number is itself."""
    return math.nan if value is None else float(value)


def _load_geo_coordinate(value: Any, altitude_required: bool) -> tuple[float, ...]:
    """JsonHelper::_loadGeoCoordinate (not the GeoJSON order): [lat, lon(, alt)]."""
    if not isinstance(value, list):
        raise QgcLoadError("value for coordinate is not array")
    count = 3 if altitude_required else 2
    if len(value) != count:
        raise QgcLoadError(f"Coordinate array must contain {count} values")
    for v in value:
        if _qt_type(v) not in ("Double", "NULL"):
            raise QgcLoadError("Coordinate array may only contain double values")
    return tuple(_nan(v) for v in value)


def _load_geo_coordinate_array(value: Any, altitude_required: bool) -> list[tuple[float, ...]]:
    """JsonHelper::loadGeoCoordinateArray."""
    if not isinstance(value, list):
        raise QgcLoadError("value for coordinate array is not array")
    return [_load_geo_coordinate(v, altitude_required) for v in value]


def _to_int(value: Any) -> int:
    """QJsonValue::toInt: a double that is a whole number, else 0."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value) if float(value).is_integer() else 0
    return 0


# ----- the .plan file ---------------------------------------------------------------------


def qgc_load_plan(text: str) -> QgcMission:
    """PlanMasterController::_loadPlanJson (src/MissionManager/PlanMasterController.cc) and
    the loaders it calls; QgcLoadError with QGC's message where QGC refuses the file."""
    try:
        doc = json.loads(text)  # JsonHelper::isJsonFile
    except json.JSONDecodeError as exc:
        raise QgcLoadError(str(exc)) from None
    if not isinstance(doc, dict):
        raise QgcLoadError("Root of json file is not object")
    # JsonHelper::validateExternalQGCJsonFile, then validateInternalQGCJsonFile
    _validate_keys(doc, [("groundStation", "String", True)])
    _validate_keys(doc, [("fileType", "String", True), ("version", "Double", True)])
    if doc["fileType"] != "Plan":
        raise QgcLoadError(f"Incorrect file type key expected:Plan actual:{doc['fileType']}")
    version = _to_int(doc["version"])
    if version < 1:
        raise QgcLoadError(f"File version {version} is no longer supported")
    if version > 1:
        raise QgcLoadError(f"File version {version} is newer than current supported version 1")
    _validate_keys(
        doc,
        [
            ("mission", "Object", True),
            ("geoFence", "Object", True),
            ("rallyPoints", "Object", True),
        ],
    )
    mission = _load_mission_v2(doc["mission"])
    mission.circles, mission.polygons = _load_geofence(doc["geoFence"])
    mission.rally = _load_rally_points(doc["rallyPoints"])
    return mission


def _load_mission_v2(json_: dict[str, Any]) -> QgcMission:
    """MissionController::_loadJsonMissionFileV2 (src/MissionManager/MissionController.cc)."""
    _validate_keys(
        json_,
        [
            ("plannedHomePosition", "Array", True),
            ("items", "Array", True),
            ("firmwareType", "Double", True),
            ("vehicleType", "Double", False),
            ("cruiseSpeed", "Double", False),
            ("hoverSpeed", "Double", False),
            ("globalPlanAltitudeMode", "Double", False),
        ],
    )
    home = _load_geo_coordinate(json_["plannedHomePosition"], altitude_required=True)
    items: list[QgcItem] = []
    for i, value in enumerate(json_["items"]):
        if not isinstance(value, dict):
            raise QgcLoadError(f"Mission item {i} is not an object")
        _validate_keys(value, [("type", "String", True)])
        if value["type"] == "SimpleItem":
            items.append(_load_simple_item(value))
        elif value["type"] == "ComplexItem":
            _validate_keys(value, [("complexItemType", "String", True)])
            raise QgcLoadError(f"complex item {value['complexItemType']} is not transcribed")
        else:
            raise QgcLoadError(f"Unknown item type: {value['type']}")
    # the DO_JUMP fix-up: each jump's target doJumpId must exist
    for item in items:
        if item.command == MAV_CMD_DO_JUMP:
            target = int(item.params[0]) if math.isfinite(item.params[0]) else -1
            if not any(other.do_jump_id == target for other in items):
                raise QgcLoadError(f"Could not find doJumpId: {target}")
    return QgcMission((home[0], home[1], home[2]), items)


def _load_simple_item(json_: dict[str, Any]) -> QgcItem:
    """MissionItem::load(const QJsonObject&, ...) (src/MissionManager/MissionItem.cc): its
    V1 -> V2 (param1-4 keys into params) and V2 -> V3 (coordinate appended to params)
    conversions, the key checks, seven params, the first four double or null; then
    SimpleMissionItem::load's altitude keys, all three or none."""
    item = dict(json_)
    if "params" not in item:  # _convertJsonV1ToV2
        _validate_keys(
            item,
            [("type", "String", True)] + [(f"param{k}", "Double", True) for k in range(1, 5)],
        )
        item["params"] = [float(item.pop(f"param{k}")) for k in range(1, 5)]
        if item["type"] == "missionItem":
            item["type"] = "SimpleItem"
    if "coordinate" in item:  # _convertJsonV2ToV3
        _validate_keys(item, [("coordinate", "Array", True)])
        coordinate = _load_geo_coordinate(item.pop("coordinate"), altitude_required=True)
        params = item["params"] if isinstance(item["params"], list) else []
        item["params"] = [*params, *coordinate]
    _validate_keys(
        item,
        [
            ("type", "String", True),
            ("frame", "Double", True),
            ("command", "Double", True),
            ("params", "Array", True),
            ("autoContinue", "Bool", True),
            ("doJumpId", "Double", False),
        ],
    )
    if item["type"] != "SimpleItem":
        raise QgcLoadError(f"Type found: {item['type']} must be: SimpleItem")
    params = item["params"]
    if len(params) != 7:
        raise QgcLoadError("params key must contains 7 values")
    for k in range(4):
        if _qt_type(params[k]) not in ("Double", "NULL"):
            raise QgcLoadError(f"Param {k + 1} incorrect type, must be double or null")
    keys = ("AltitudeMode", "Altitude", "AMSLAltAboveTerrain")
    if any(k in item for k in keys):  # SimpleMissionItem::load, for items with a position
        _validate_keys(item, [(k, "Double", True) for k in keys])
    return QgcItem(
        command=_to_int(item["command"]),
        frame=_to_int(item["frame"]),
        params=[_nan(p) if _qt_type(p) in ("Double", "NULL") else 0.0 for p in params],
        auto_continue=bool(item["autoContinue"]),
        do_jump_id=_to_int(item["doJumpId"]) if "doJumpId" in item else -1,
    )


def _load_geofence(json_: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """GeoFenceController::load (src/MissionManager/GeoFenceController.cc), with
    QGCFencePolygon/QGCMapPolygon::loadFromJson and QGCFenceCircle/QGCMapCircle::loadFromJson."""
    if "version" not in json_ or _to_int(json_["version"]) == 1:
        return [], []  # version 1 or older: ignored
    _validate_keys(
        json_,
        [
            ("version", "Double", True),
            ("circles", "Array", True),
            ("polygons", "Array", True),
            ("breachReturn", "Array", False),
        ],
    )
    if _to_int(json_["version"]) != 2:
        raise QgcLoadError("GeoFence supports version 2")
    polygons = []
    for value in json_["polygons"]:
        if not isinstance(value, dict):
            raise QgcLoadError("GeoFence polygon not stored as object")
        _validate_keys(value, [("version", "Double", True), ("inclusion", "Bool", True)])
        if _to_int(value["version"]) != 1:
            raise QgcLoadError("GeoFence Polygon only supports version 1")
        _validate_keys(value, [("polygon", "Array", True)])  # QGCMapPolygon, required
        vertices = _load_geo_coordinate_array(value["polygon"], altitude_required=False)
        polygons.append({"polygon": vertices, "inclusion": value["inclusion"]})
    circles = []
    for value in json_["circles"]:
        if not isinstance(value, dict):
            raise QgcLoadError("GeoFence circle not stored as object")
        _validate_keys(value, [("version", "Double", True), ("inclusion", "Bool", True)])
        if _to_int(value["version"]) != 1:
            raise QgcLoadError("GeoFence Circle only supports version 1")
        _validate_keys(value, [("circle", "Object", True)])
        circle = value["circle"]
        _validate_keys(circle, [("center", "Array", True), ("radius", "Double", True)])
        center = _load_geo_coordinate(circle["center"], altitude_required=False)
        circles.append(
            {"center": center, "radius": _nan(circle["radius"]), "inclusion": value["inclusion"]}
        )
    if "breachReturn" in json_:
        _load_geo_coordinate(json_["breachReturn"], altitude_required=True)
    return circles, polygons


def _load_rally_points(json_: dict[str, Any]) -> list[tuple[float, float, float]]:
    """RallyPointController::load (src/MissionManager/RallyPointController.cc)."""
    if "version" in json_ and _to_int(json_["version"]) == 1:
        return []  # version 1: ignored
    _validate_keys(json_, [("version", "Double", True), ("points", "Array", True)])
    if _to_int(json_["version"]) != 2:
        raise QgcLoadError("Rally Points supports version 2")
    points = _load_geo_coordinate_array(json_["points"], altitude_required=True)
    return [(p[0], p[1], p[2]) for p in points]


# ----- the text mission -------------------------------------------------------------------


def qgc_load_text_mission(text: str) -> QgcMission:
    """MissionController::_loadTextMissionFile with SimpleMissionItem::load(QTextStream&) and
    MissionItem::load(QTextStream&) (src/MissionManager/): the header split on single
    spaces must be exactly "QGC WPL 110" (home in the first item) or "QGC WPL 120"; then
    every line until the end, split on tabs, must have exactly 12 fields, else "The
    mission file is corrupted." Fields are converted as QString::toInt/toDouble do (0 on
    failure, which QGC does not report: ``text_fields_ok`` says whether any did). A take-off
    line makes QGC read the following line into the take-off item (QGC issue #13167)."""
    lines = _qt_read_lines(text)
    header = lines[0].split(" ") if lines else [""]
    if not (len(header) == 3 and header[:2] == ["QGC", "WPL"] and header[2] in ("110", "120")):
        raise QgcLoadError(
            "The mission file is not compatible with this version of QGroundControl."
        )
    home_in_file = header[2] == "110"
    rest = iter(lines[1:])
    ok = True
    home: tuple[float, float, float] = (math.nan, math.nan, math.nan)
    items: list[QgcItem] = []
    first = True
    for line in rest:
        item, fine = _text_item(line)
        ok = ok and fine
        if first and home_in_file:
            home = (item.params[4], item.params[5], item.params[6])
        else:
            if item.command in (MAV_CMD_NAV_TAKEOFF, MAV_CMD_NAV_VTOL_TAKEOFF):
                following = next(rest, "")  # TakeoffMissionItem::load(stream): the next line
                taken, fine = _text_item(following, required=False)
                ok = ok and fine
                item = taken if taken is not None else QgcItem(0, 0, [0.0] * 7, True)
            items.append(item)
        first = False
    return QgcMission(home, items, text_fields_ok=ok)


def _qt_read_lines(text: str) -> list[str]:
    """QTextStream::readLine until atEnd: lines split at "\\n", a "\\r\\n" ending taken whole;
    a final line break does not make an extra, empty line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _text_item(line: str, required: bool = True) -> tuple[Any, bool]:
    """MissionItem::load(QTextStream&): 12 tab-separated fields or failure."""
    fields = line.split("\t")
    if len(fields) != 12:
        if required:
            raise QgcLoadError("The mission file is corrupted.")
        return None, True
    ints, ok_ints = zip(*(_qt_to_int(fields[k]) for k in (0, 1, 2, 3, 11)))
    numbers, ok_numbers = zip(*(_qt_to_double(fields[k]) for k in range(4, 11)))
    item = QgcItem(
        command=ints[3],
        frame=ints[2],
        params=list(numbers),
        auto_continue=ints[4] == 1,
    )
    return item, all(ok_ints) and all(ok_numbers)


def _qt_to_int(text: str) -> tuple[int, bool]:
    """QString::toInt: optional sign and decimal digits, surrounding whitespace allowed."""
    try:
        return int(text.strip(), 10), True
    except ValueError:
        return 0, False


def _qt_to_double(text: str) -> tuple[float, bool]:
    """QString::toDouble (C locale): a decimal or exponent number, inf and nan included."""
    try:
        return float(text.strip()), True
    except ValueError:
        return 0.0, False
