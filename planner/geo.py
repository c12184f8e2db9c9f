"""Geographic missions: a scenario's optional origin, and lat/lon <-> the local km frame.

The planner works in a flat frame of km east (``x``) and north (``y``). A scenario may pin
that frame to the Earth with ``"geo": {"lat0": ..., "lon0": ...}``: the frame is then the
azimuthal equidistant projection of WGS 84 centred on the origin (PROJ's ``aeqd``, through
pyproj), so distances and bearings from the origin are true; elsewhere the frame stretches,
by 0.1 % 500 km out, 1.7 % at 2,000 km and 4.9 % at the 3,400 km a geographic mission may
reach (``planner.geodesy`` bounds it, widens the SAMs the planner avoids by it, and checks
every plan against the true geodesic disks). Anywhere a scenario file gives a position in km
(airports, targets, SAM centres, synthetic starts, the timeline's added or moved targets and
SAMs) it may give ``"lat"`` and ``"lon"`` (degrees) instead, or ``"pos": {"lat", "lon"}``;
:func:`localize` turns them into km before the schema sees the file, naming the JSON path
of anything wrong.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

if TYPE_CHECKING:
    from pyproj import Transformer

__all__ = [
    "MAX_GEO_COORD_KM",
    "GeoOrigin",
    "GeoPlan",
    "Latitude",
    "LocalFrame",
    "Longitude",
    "local_frame",
    "localize",
    "localize_edit",
]

# The box positions live in (``planner.limits.MAX_COORD_KM``), repeated here so that a
# lat/lon too far from the origin is named at its own path, as a lat/lon problem.
MAX_GEO_COORD_KM: Final = 10_000.0

Latitude = Annotated[float, Strict(), Field(ge=-90.0, le=90.0, allow_inf_nan=False)]
Longitude = Annotated[float, Strict(), Field(ge=-180.0, le=180.0, allow_inf_nan=False)]


class GeoOrigin(BaseModel):
    """Where the local frame's (0, 0) is on the Earth (WGS 84 degrees)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lat0: Annotated[float, Strict(), Field(ge=-89.0, le=89.0, allow_inf_nan=False)]
    lon0: Longitude


class GeoPlan(BaseModel):
    """A plan's places in lat/lon (degrees), next to its km: the origin, every node on a
    route (airports, targets, starts) by id, and each drone's flown path."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    origin: GeoOrigin
    nodes: dict[str, tuple[float, float]]
    paths: dict[str, list[tuple[float, float]]]


@dataclass(frozen=True)
class LocalFrame:
    """The scenario's km frame around ``origin``: ``to_local`` and ``to_geo`` invert each
    other to well under a millimetre."""

    origin: GeoOrigin
    _forward: Transformer

    def to_local(self, lat: float, lon: float) -> tuple[float, float]:
        """(lat, lon) in degrees -> (x, y) in km east and north of the origin."""
        x, y = self._forward.transform(lon, lat)
        return float(x), float(y)

    def to_geo(self, x: float, y: float) -> tuple[float, float]:
        """(x, y) in km -> (lat, lon) in degrees."""
        lon, lat = self._forward.transform(x, y, direction="INVERSE")
        return float(lat), float(lon)

    def to_geo_many(self, x: Any, y: Any) -> tuple[Any, Any]:
        """Arrays of x, y (km) -> arrays of (lat, lon) in degrees, of the same shape."""
        lon, lat = self._forward.transform(x, y, direction="INVERSE")
        return lat, lon

    def to_local_many(self, lat: Any, lon: Any) -> tuple[Any, Any]:
        """Arrays of lat, lon (degrees) -> arrays of x, y (km), of the same shape."""
        x, y = self._forward.transform(lon, lat)
        return x, y


def local_frame(origin: GeoOrigin) -> LocalFrame:
    """The frame around ``origin`` (built once per origin: a PROJ transformer costs ~10 ms)."""
    return _frame(origin.lat0, origin.lon0)


@lru_cache(maxsize=32)
def _frame(lat0: float, lon0: float) -> LocalFrame:
    from pyproj import CRS, Transformer  # imported here: only geographic missions need PROJ

    local = CRS.from_proj4(
        f"+proj=aeqd +lat_0={lat0!r} +lon_0={lon0!r} +datum=WGS84 +units=km +no_defs"
    )
    forward = Transformer.from_crs("EPSG:4326", local, always_xy=True)
    return LocalFrame(GeoOrigin(lat0=lat0, lon0=lon0), forward)


# ----- lat/lon positions in a parsed scenario ----------------------------------------------

_SAM_EDITS = {"add_sam", "move_sam"}  # timeline edits whose position is ``pos``
_TARGET_EDITS = {"add_target", "move_target"}  # ... and those whose position is ``x, y``


def localize(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy of parsed scenario JSON with every lat/lon position turned into km, and the
    problems found (one line each, ``<JSON path>: <what>``). Positions already in km pass
    through; ``geo`` is checked here when a position needs it (its own errors otherwise come
    from the schema). ``data`` itself is not changed."""
    places = list(_places(data))
    if not any(_has_geo_keys(obj) for _, obj, _ in places):
        return data, []
    frame: LocalFrame | None = None
    problems: list[str] = []
    geo = data.get("geo")
    if geo is None:
        first = next(path for path, obj, _ in places if _has_geo_keys(obj))
        return data, [
            f"{first}: a lat/lon position needs the scenario's geographic origin,"
            ' "geo": {"lat0": ..., "lon0": ...} (or give x, y in km)'
        ]
    try:
        frame = local_frame(GeoOrigin.model_validate(geo))
    except ValidationError:
        return data, []  # the schema names what is wrong with $.geo; positions wait for it
    out = json.loads(json.dumps(data))  # a deep copy of plain JSON data
    for path, _, key in places:
        obj = _resolve(out, key)
        if _has_geo_keys(obj):
            problems.extend(_convert(path, obj, frame, key))
    return out, problems


def localize_edit(
    edit: dict[str, Any], origin: GeoOrigin | None, path: str = "$"
) -> tuple[dict[str, Any], list[str]]:
    """One edit object (a live edit, posted or sent on the bus) with a lat/lon position
    turned into km by the conversion :func:`localize` applies to the timeline's edits, and
    the problems (``<JSON path>: <what>``, ``path`` being the edit's own). A lat/lon for a
    mission without an origin is a problem at its path; ``edit`` itself is not changed."""
    op = edit.get("op")
    if not isinstance(op, str) or op not in _SAM_EDITS | _TARGET_EDITS or not _has_geo_keys(edit):
        return edit, []  # the edit's own parser names a bad op
    if origin is None:
        key = "lat" if "lat" in edit else "lon" if "lon" in edit else "pos"  # pos: {lat, lon}
        return edit, [
            f"{path}.{key}: a lat/lon position needs the mission's geographic origin"
            " (this mission has none): give the position in km"
        ]
    out = json.loads(json.dumps(edit))  # a deep copy of plain JSON data
    return out, _convert(path, out, local_frame(origin), ())


def _has_geo_keys(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    pos = obj.get("pos")
    return (
        "lat" in obj or "lon" in obj or (isinstance(pos, dict) and ("lat" in pos or "lon" in pos))
    )


def _places(data: dict[str, Any]) -> Any:
    """(JSON path, object, key path from the root) of every object that holds a position."""
    env = data.get("environment")
    if isinstance(env, dict):
        for kind in ("airports", "targets", "sams"):
            items = env.get(kind)
            if isinstance(items, list):
                for i, obj in enumerate(items):
                    yield f"$.environment.{kind}[{i}]", obj, ("environment", kind, i)
        starts = env.get("synthetic_starts")
        if isinstance(starts, dict):
            for name, obj in starts.items():
                at = f"$.environment.synthetic_starts[{json.dumps(str(name))}]"
                yield at, obj, ("environment", "synthetic_starts", name)
    timeline = data.get("timeline")
    if isinstance(timeline, list):
        for i, obj in enumerate(timeline):
            op = obj.get("op") if isinstance(obj, dict) else None
            if isinstance(op, str) and op in _SAM_EDITS | _TARGET_EDITS:  # else the schema says
                yield f"$.timeline[{i}]", obj, ("timeline", i)


def _resolve(root: Any, key: tuple[Any, ...]) -> Any:
    for part in key:
        root = root[part]
    return root


def _is_sam(key: tuple[Any, ...], obj: dict[str, Any]) -> bool:
    return key[:2] == ("environment", "sams") or obj.get("op") in _SAM_EDITS


def _convert(path: str, obj: dict[str, Any], frame: LocalFrame, key: tuple[Any, ...]) -> list[str]:
    """Replace ``lat``/``lon`` in ``obj`` (or in its ``pos`` object) by km, in place."""
    sam = _is_sam(key, obj)
    holder, at = obj, path
    if isinstance(obj.get("pos"), dict):  # "pos": {"lat": ..., "lon": ...}
        holder, at = obj["pos"], f"{path}.pos"
    km_keys = ("pos", "x", "y") if holder is obj else ("lat", "lon", "x", "y")
    if any(k in obj for k in km_keys):
        return [f"{path}: give the position once, as lat/lon, as x/y or as pos, not several"]
    problems = []
    values: dict[str, float] = {}
    for name, bound in (("lat", 90.0), ("lon", 180.0)):
        value = holder.get(name)
        if name not in holder:
            problems.append(f"{at}: lat and lon go together: {name} is missing")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            problems.append(f"{at}.{name}: must be a number (degrees), got {json.dumps(value)}")
        elif not (math.isfinite(value) and -bound <= value <= bound):
            problems.append(
                f"{at}.{name}: must be from -{bound:g} to {bound:g} degrees, got {value!r}"
            )
        else:
            values[name] = float(value)
    extra = [] if holder is obj else [k for k in holder if k not in ("lat", "lon")]
    if extra:
        problems.append(f"{at}: a position object holds lat and lon only, got {', '.join(extra)}")
    if problems:
        return problems
    x, y = frame.to_local(values["lat"], values["lon"])
    if not (abs(x) <= MAX_GEO_COORD_KM and abs(y) <= MAX_GEO_COORD_KM):
        return [
            f"{at}: ({values['lat']:g}, {values['lon']:g}) is ({x:,.0f}, {y:,.0f}) km from the"
            f" geo origin, at most {MAX_GEO_COORD_KM:,.0f} km east or north"
        ]
    for name in ("lat", "lon", "pos"):
        obj.pop(name, None)
    if sam:  # each kind in its seed form: SAMs by pos, the rest by x, y
        obj["pos"] = [x, y]
    else:
        obj["x"], obj["y"] = x, y
    return []
