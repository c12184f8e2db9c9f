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

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict

from planner.geo import Latitude, Longitude

__all__ = [
    "FenceCircle",
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


class SimpleItemIn(_Lenient):
    """A simple item as QGC loads it: seven params, or (older files) four and a
    ``coordinate``."""

    type: Literal["SimpleItem"]
    command: Count
    frame: Count
    autoContinue: Annotated[bool, Strict()]
    params: list[Param] = Field(min_length=4, max_length=7)
    coordinate: Coordinate3 | None = None
    doJumpId: Annotated[int, Strict()] | None = None

    def position(self) -> tuple[float | None, float | None]:
        """(latitude, longitude), either None when the item has no position."""
        if self.coordinate is not None:
            return self.coordinate[0], self.coordinate[1]
        if len(self.params) == 7:
            return self.params[4], self.params[5]
        return None, None


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


class GeoFenceIn(_Lenient):
    """The ``geoFence`` object (version 1 files hold one ``polygon`` and no circles)."""

    version: Annotated[int, Strict(), Field(ge=1, le=2)] = 2
    circles: list[FenceCircleIn] = Field(default_factory=list)
    polygons: list[dict[str, Any]] = Field(default_factory=list)
    polygon: list[Any] = Field(default_factory=list)


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
