"""The QGroundControl plan file format as pydantic models, from its published definition
(QGC developer guide, "Plan File Format": plan version 1, mission version 2, geofence
version 2, rally points version 2) and QGC's own loader (``MissionItem::load``).

Two readings of it:

* ``PlanFile`` -- the documented current format, strictly (no unknown key, exact versions,
  ``SimpleItem`` with its seven params and altitude fields): what ``isr plan --export qgc``
  writes is checked against it.
* ``PlanIn`` -- what QGC itself loads: older files too (mission items with four params and
  a ``coordinate``, geofence and rally point version 1, complex items), keys it does not
  know ignored. ``isr import qgc`` reads through it.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from planner.geo import Latitude, Longitude

__all__ = [
    "GLOBAL_FRAMES",
    "FenceCircle",
    "FencePolygonIn",
    "GeoFence",
    "GeoFenceIn",
    "MissionIn",
    "PlanFile",
    "PlanIn",
    "PlanMission",
    "RallyPoints",
    "RallyPointsIn",
    "SimpleItem",
    "SimpleItemIn",
]

Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]
Param = Number | None  # QGC writes NaN (e.g. "yaw unchanged") as null
Metres = Annotated[float, Strict(), Field(allow_inf_nan=False)]
Coordinate2 = tuple[Latitude, Longitude]
Coordinate3 = tuple[Latitude, Longitude, Metres]
Count = Annotated[int, Strict(), Field(ge=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


# ----- the documented format, strictly --------------------------------------------------


class SimpleItem(_Strict):
    """One MAVLink MISSION_ITEM: ``params`` are param1-4, latitude, longitude, altitude."""

    type: Literal["SimpleItem"]
    AMSLAltAboveTerrain: Number | None
    Altitude: Number
    AltitudeMode: Annotated[int, Strict(), Field(ge=0, le=5)]
    autoContinue: Annotated[bool, Strict()]
    command: Count
    doJumpId: Annotated[int, Strict(), Field(ge=1)]
    frame: Count
    params: tuple[Param, Param, Param, Param, Latitude, Longitude, Number]


class PlanMission(_Strict):
    """The ``mission`` object, version 2."""

    version: Literal[2]
    firmwareType: Count  # MAV_AUTOPILOT
    vehicleType: Count  # MAV_TYPE
    globalPlanAltitudeMode: Annotated[int, Strict(), Field(ge=0, le=5)]
    cruiseSpeed: Annotated[float, Strict(), Field(gt=0, allow_inf_nan=False)]
    hoverSpeed: Annotated[float, Strict(), Field(gt=0, allow_inf_nan=False)]
    plannedHomePosition: Coordinate3
    items: list[SimpleItem] = Field(min_length=1)


class Circle(_Strict):
    """A circle: ``center`` (latitude, longitude) and ``radius`` in metres."""

    center: Coordinate2
    radius: Annotated[float, Strict(), Field(gt=0, allow_inf_nan=False)]


class FenceCircle(_Strict):
    """A circular geofence, version 1; ``inclusion`` false keeps the vehicle out."""

    circle: Circle
    inclusion: Annotated[bool, Strict()]
    version: Literal[1]


class FencePolygon(_Strict):
    """A polygon geofence, version 1 (clockwise latitude, longitude pairs)."""

    polygon: list[Coordinate2] = Field(min_length=3)
    inclusion: Annotated[bool, Strict()]
    version: Literal[1]


class GeoFence(_Strict):
    """The ``geoFence`` object, version 2."""

    version: Literal[2]
    circles: list[FenceCircle]
    polygons: list[FencePolygon]


class RallyPoints(_Strict):
    """The ``rallyPoints`` object, version 2: latitude, longitude, altitude above home."""

    version: Literal[2]
    points: list[Coordinate3]


class PlanFile(_Strict):
    """A ``.plan`` file as the QGroundControl developer guide defines it (version 1)."""

    fileType: Literal["Plan"]
    version: Literal[1]
    groundStation: Annotated[str, Strict(), Field(min_length=1)]
    mission: PlanMission
    geoFence: GeoFence
    rallyPoints: RallyPoints


# ----- what QGroundControl loads --------------------------------------------------------


# MAV_FRAMEs whose x, y are latitude and longitude (global, relative, terrain; int forms)
GLOBAL_FRAMES = frozenset({0, 3, 5, 6, 10, 11})


class SimpleItemIn(_Lenient):
    """A simple item as QGC loads it (``MissionItem::load``): seven params, or (older files)
    four and a ``coordinate`` that QGC appends to them; a latitude or longitude among them
    is bounded (QGC would load latitude 100, then fly nowhere)."""

    type: Literal["SimpleItem"]
    command: Count
    frame: Count
    autoContinue: Annotated[bool, Strict()]
    coordinate: Coordinate3 | None = None
    params: list[Param]
    doJumpId: Annotated[int, Strict()] | None = None

    @field_validator("params")
    @classmethod
    def _seven(cls, params: list[float | None], info: ValidationInfo) -> list[float | None]:
        with_coordinate = "coordinate" in info.data and info.data["coordinate"] is not None
        if len(params) != (4 if with_coordinate else 7):
            raise PydanticCustomError(
                "qgc_params",
                "must hold 7 values (param1-4, latitude, longitude, altitude), or 4 next to a"
                " coordinate, as QGroundControl loads an item; got {count}",
                {"count": len(params)},
            )
        for index, name, bound in ((4, "latitude", 90.0), (5, "longitude", 180.0)):
            value = params[index] if len(params) == 7 else None
            if value is not None and not -bound <= value <= bound:
                raise PydanticCustomError(
                    "qgc_coordinate",
                    "params[{index}] is the {name}: must be from -{bound} to {bound}, got {value}",
                    {"index": index, "name": name, "bound": f"{bound:g}", "value": f"{value:g}"},
                )
        return params

    def position(self) -> tuple[float, float] | None:
        """(latitude, longitude), or None when the item has no place: a command without
        one (latitude and longitude null, or both 0, as QGC writes them) or a frame whose
        x, y are not latitude and longitude."""
        lat: float | None = self.params[4] if len(self.params) == 7 else None
        lon: float | None = self.params[5] if len(self.params) == 7 else None
        if self.coordinate is not None:
            lat, lon = self.coordinate[0], self.coordinate[1]
        if lat is None or lon is None or (lat == 0 and lon == 0):
            return None
        if self.frame not in GLOBAL_FRAMES or not (math.isfinite(lat) and math.isfinite(lon)):
            return None
        return lat, lon


class ComplexItemIn(_Lenient):
    """A survey, corridor or structure scan: kept by type only (not imported)."""

    type: Literal["ComplexItem"]
    complexItemType: Annotated[str, Strict()] = "?"


class MissionIn(_Lenient):
    """The ``mission`` object as QGC loads it."""

    version: Annotated[int, Strict(), Field(ge=1, le=2)] = 2
    cruiseSpeed: Number | None = None
    hoverSpeed: Number | None = None
    plannedHomePosition: Coordinate3
    items: list[Annotated[SimpleItemIn | ComplexItemIn, Field(discriminator="type")]]


class CircleIn(_Lenient):
    """A circle: center and radius (metres)."""

    center: Coordinate2
    radius: Annotated[float, Strict(), Field(gt=0, allow_inf_nan=False)]


class FenceCircleIn(_Lenient):
    """A circular geofence."""

    circle: CircleIn
    inclusion: Annotated[bool, Strict()]


class FencePolygonIn(_Lenient):
    """A polygon geofence: its vertices (latitude, longitude) and whether it keeps the
    vehicle in (``inclusion`` true) or out."""

    polygon: list[Coordinate2]
    inclusion: Annotated[bool, Strict()]


class GeoFenceIn(_Lenient):
    """The ``geoFence`` object (version 1 files hold one ``polygon`` and no circles: QGC
    ignores them, ``GeoFenceController::load``)."""

    version: Annotated[int, Strict(), Field(ge=1, le=2)] = 2
    circles: list[FenceCircleIn] = Field(default_factory=list)
    polygons: list[FencePolygonIn] = Field(default_factory=list)
    polygon: list[Any] = Field(default_factory=list)
    breachReturn: Any = None


class RallyPointsIn(_Lenient):
    """The ``rallyPoints`` object."""

    version: Annotated[int, Strict(), Field(ge=1, le=2)] = 2
    points: list[Coordinate3] = Field(default_factory=list)


class PlanIn(_Lenient):
    """A ``.plan`` file as QGC loads it (``PlanMasterController``: the header's three keys
    and the mission, geofence and rally point objects are required)."""

    fileType: Literal["Plan"]
    version: Literal[1]
    groundStation: Annotated[str, Strict()]
    mission: MissionIn
    geoFence: GeoFenceIn
    rallyPoints: RallyPointsIn
