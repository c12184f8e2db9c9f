"""How far a geographic mission's km frame can be trusted, and the truth it is checked
against (pyproj.Geod, WGS 84).

The km frame (``planner.geo``) is PROJ's azimuthal equidistant projection around the geo
origin: distances *from the origin* are exact, elsewhere the frame stretches across the
radial direction, by its Tissot scale ``k >= 1`` (0.4 % at 1,000 km from the origin, 1.7 %
at 2,000 km, 3.8 % at 3,000 km). A planner that trusted the frame would graze a far SAM's
true disk. So:

* **SAM covers** (``sam_cover``, ``planning_disks``). Where the frame stretches by at most
  ``S`` around a SAM of range ``r``, its true (geodesic) disk lies inside the frame's disk of
  radius ``r * S``: a geodesic of length ``g`` maps to a curve at most ``S * g`` long. The
  planner avoids that cover (plus its usual margin), ``S`` being bounded from the frame's
  own scale factors (``Proj.get_factors``) around the SAM.
* **Legs** (``densify``). An autopilot flies the geodesic between two waypoints; the
  simulation flies the frame's straight line. Their images part by up to ``k' L^2 / 8`` for
  a leg ``L`` km long (``k'`` the frame's geodesic curvature, 5e-5 per km at the extent
  limit), so exported legs are cut to at most ``MAX_LEG_KM``: there they part by under 5 m.
* **The extent** (``geo_problems``). A geographic mission reaches at most
  ``MAX_GEO_EXTENT_KM`` from its origin: there the frame's distances are off by 5 % and
  every SAM's cover is as much larger than the SAM.
* **The check** (``polyline_geodesic_clearance``). A flown polyline is measured against the
  SAMs' true geodesic disks, both its straight legs in the frame (what the simulation
  flies) and the geodesics between its points (what an autopilot flies); the validator runs
  it on every plan of a geographic mission (``planner.validation``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final, Protocol, assert_never

import numpy as np

from planner.errors import PlannerError
from planner.geo import GeoOrigin, LocalFrame, local_frame

if TYPE_CHECKING:
    from pyproj import Geod, Proj

    from planner.model import Scenario

__all__ = [
    "MAX_GEO_EXTENT_KM",
    "MAX_LEG_KM",
    "Incursion",
    "densify",
    "frame_distortion",
    "geo_problems",
    "planning_disks",
    "polyline_geodesic_clearance",
    "sam_cover",
    "scale_bound",
]

MAX_GEO_EXTENT_KM: Final = 3_400.0  # from the geo origin: the frame's scale is 1.05 there
MAX_LEG_KM: Final = 25.0  # an exported leg; its geodesic stays within 5 m of the frame's line

_RING = 32  # samples round a circle when bounding the frame's scale over a disk
_SAMPLES = 5  # along a leg, to bracket its closest approach to a SAM (it has one minimum)
_GOLDEN_STEPS = 32  # shrink the bracket 2e-7-fold: a few mm on a 25 km leg
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


class _Disk(Protocol):
    """A SAM as the geometry sees it (``planner.model.Sam`` and the edits' SAMs)."""

    @property
    def id(self) -> str: ...
    @property
    def x(self) -> float: ...
    @property
    def y(self) -> float: ...
    @property
    def range(self) -> float: ...


@lru_cache(maxsize=32)
def _proj(lat0: float, lon0: float) -> Proj:
    from pyproj import Proj  # imported here: only geographic missions need PROJ

    return Proj(f"+proj=aeqd +lat_0={lat0!r} +lon_0={lon0!r} +datum=WGS84 +units=km +no_defs")


@lru_cache(maxsize=1)
def _geod() -> Geod:
    from pyproj import Geod

    return Geod(ellps="WGS84")


def scale_bound(origin: GeoOrigin, x: float, y: float, radius: float) -> float:
    """An upper bound (>= 1) of the frame's scale, frame km per true km in the worst
    direction, over the frame's disk of ``radius`` km around ``(x, y)``: the largest Tissot
    semi-major axis sampled on the disk's rim, its half-radius ring, its centre and its
    point farthest from the origin, padded by the largest step between neighbouring rim
    samples (the scale grows smoothly, and outward: the rim holds the maximum)."""
    return _scale_bound(origin.lat0, origin.lon0, float(x), float(y), float(radius))


@lru_cache(maxsize=4096)
def _scale_bound(lat0: float, lon0: float, x: float, y: float, radius: float) -> float:
    frame = local_frame(GeoOrigin(lat0=lat0, lon0=lon0))
    turn = np.linspace(0.0, 2.0 * math.pi, _RING, endpoint=False)
    rho = math.hypot(x, y)
    out_x, out_y = (x / rho, y / rho) if rho > 0 else (1.0, 0.0)
    xs = np.concatenate(
        [x + radius * np.cos(turn), x + 0.5 * radius * np.cos(turn), [x, x + radius * out_x]]
    )
    ys = np.concatenate(
        [y + radius * np.sin(turn), y + 0.5 * radius * np.sin(turn), [y, y + radius * out_y]]
    )
    lat, lon = frame.to_geo_many(xs, ys)
    k = np.asarray(_proj(lat0, lon0).get_factors(lon, lat).tissot_semimajor, dtype=float)
    if not np.all(np.isfinite(k)):
        raise PlannerError(
            f"the km frame has no finite scale within {radius:g} km of ({x:g}, {y:g}):"
            " too far from the geo origin"
        )
    rim = k[:_RING]
    pad = float(np.max(np.abs(rim - np.roll(rim, 1))))
    return max(1.0, float(k.max()) + pad)


def sam_cover(origin: GeoOrigin, x: float, y: float, radius: float) -> float:
    """The radius (km, in the frame) of the frame's disk around ``(x, y)`` that surely holds
    the true geodesic disk of ``radius`` km around the same place: ``radius * S``, ``S``
    bounding the frame's scale over a disk wider than the cover itself."""
    reach = 1.5 * radius + 1.0
    while True:
        cover = radius * scale_bound(origin, x, y, reach)
        if cover <= reach:
            return cover
        reach = 1.5 * cover + 1.0


def planning_disks(
    sams: Iterable[_Disk], origin: GeoOrigin | None
) -> list[tuple[float, float, float]]:
    """``(x, y, radius)`` of each SAM as the planner must treat it: its own disk in a km
    mission, its geodesic cover (``sam_cover``) in a geographic one."""
    if origin is None:
        return [(s.x, s.y, s.range) for s in sams]
    return [(s.x, s.y, sam_cover(origin, s.x, s.y, s.range)) for s in sams]


def frame_distortion(origin: GeoOrigin, extent_km: float = MAX_GEO_EXTENT_KM) -> float:
    """How much the frame stretches at most (0.05 = 5 %) within ``extent_km`` of the origin."""
    return scale_bound(origin, 0.0, 0.0, extent_km) - 1.0


def densify(points: Any, max_km: float = MAX_LEG_KM) -> np.ndarray:
    """``points`` (n, 2) with every straight leg longer than ``max_km`` cut into equal legs
    of at most that length (the new points lie on the legs; the old ones are kept)."""
    pts = np.asarray(points, dtype=float).reshape(-1, 2)
    if len(pts) < 2:
        return pts
    a, b = pts[:-1], pts[1:]
    pieces = np.maximum(1, np.ceil(np.hypot(*(b - a).T) / max_km)).astype(int)
    leg = np.repeat(np.arange(len(a)), pieces)
    step = np.arange(len(leg)) - np.repeat(np.cumsum(pieces) - pieces, pieces) + 1
    t = (step / pieces[leg])[:, None]
    return np.vstack([pts[:1], a[leg] + t * (b[leg] - a[leg])])


# ----- the check ------------------------------------------------------------------------


@dataclass(frozen=True)
class Incursion:
    """The closest a polyline comes to a SAM's true disk: ``clearance_km`` (negative:
    inside, by that much), the SAM, where (lat, lon), and on which kind of leg."""

    clearance_km: float
    sam_id: str | None
    where: tuple[float, float] | None = None
    leg: str = ""


def polyline_geodesic_clearance(
    frame: LocalFrame, polyline: np.ndarray, sams: Iterable[_Disk]
) -> Incursion:
    """The smallest true clearance of ``polyline`` (km, in ``frame``) from the SAMs' true
    geodesic disks (WGS 84, pyproj.Geod): over each straight leg of the frame mapped back to
    the Earth ("frame leg", what the simulation flies) and over the geodesic between each
    two consecutive points ("geodesic leg", what an autopilot flies between waypoints).
    Each leg's closest approach is found by sampling it and refining by golden-section
    search to a few millimetres; legs farther than a SAM's cover are skipped (they
    cannot reach its disk)."""
    pts = np.asarray(polyline, dtype=float).reshape(-1, 2)
    disks = list(sams)
    if not disks or len(pts) == 0:
        return Incursion(math.inf, None)
    a = pts[:-1] if len(pts) > 1 else pts
    b = pts[1:] if len(pts) > 1 else pts
    centre = np.array([(s.x, s.y) for s in disks], dtype=float)
    radius = np.array([s.range for s in disks], dtype=float)
    reach = np.array([sam_cover(frame.origin, s.x, s.y, s.range) for s in disks]) + 1.0
    leg, sam = np.nonzero(_segment_distance(a, b, centre) < reach[None, :])
    if len(leg) == 0:
        return Incursion(math.inf, None)
    clat, clon = frame.to_geo_many(centre[sam, 0], centre[sam, 1])
    geod = _geod()
    alat, alon = frame.to_geo_many(a[leg, 0], a[leg, 1])
    blat, blon = frame.to_geo_many(b[leg, 0], b[leg, 1])
    az, _, length = geod.inv(alon, alat, blon, blat)
    az, length = np.asarray(az), np.asarray(length)

    def frame_leg(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = a[leg, 0, None] + t * (b[leg, 0] - a[leg, 0])[:, None]
        y = a[leg, 1, None] + t * (b[leg, 1] - a[leg, 1])[:, None]
        lat, lon = frame.to_geo_many(x, y)
        return np.asarray(lat), np.asarray(lon)

    def geodesic_leg(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lon0, lat0, azimuth, dist = _flat(
            alon[:, None], alat[:, None], az[:, None], t * length[:, None]
        )
        lon, lat, _ = geod.fwd(lon0, lat0, azimuth, dist)
        return np.asarray(lat).reshape(t.shape), np.asarray(lon).reshape(t.shape)

    worst = Incursion(math.inf, None)
    for name, along in (("frame leg", frame_leg), ("geodesic leg", geodesic_leg)):

        def metres(t: np.ndarray, along: Callable[..., Any] = along) -> np.ndarray:
            lat, lon = along(t)
            lon_c, lat_c, lon_p, lat_p = _flat(clon[:, None], clat[:, None], lon, lat)
            _, _, d = geod.inv(lon_c, lat_c, lon_p, lat_p)
            return np.asarray(d).reshape(t.shape)

        dist, t = _minimise(metres, len(leg))
        gap = dist / 1000.0 - radius[sam]
        i = int(np.argmin(gap))
        if gap[i] < worst.clearance_km:
            lat, lon = along(t[:, None])
            where = (float(lat[i, 0]), float(lon[i, 0]))
            worst = Incursion(float(gap[i]), disks[int(sam[i])].id, where, name)
    return worst


def _flat(*arrays: Any) -> list[np.ndarray]:
    """Broadcast to one shape and flatten (pyproj.Geod wants equal 1-D arrays)."""
    return [np.ascontiguousarray(x, dtype=float).ravel() for x in np.broadcast_arrays(*arrays)]


def _segment_distance(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """(legs, points): the frame distance from each point of ``c`` to each leg ``a``-``b``."""
    ab = b - a
    dd = np.einsum("ij,ij->i", ab, ab)
    safe = np.where(dd > 0.0, dd, 1.0)
    t = np.einsum("lpk,lk->lp", c[None, :, :] - a[:, None, :], ab) / safe[:, None]
    t = np.clip(t, 0.0, 1.0)
    closest = a[:, None, :] + t[..., None] * ab[:, None, :]
    gap = closest - c[None, :, :]
    distance: np.ndarray = np.hypot(gap[..., 0], gap[..., 1])
    return distance


def _minimise(f: Callable[[np.ndarray], np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the smallest ``f(t)`` over ``t`` in [0, 1] and where: ``f`` maps an (n, m)
    array of ``t`` to its (n, m) values. A grid brackets each row's minimum (a leg's
    distance to a point has one minimum: the legs are short against the Earth), golden-
    section search narrows the bracket, and the best value seen is kept."""
    grid = np.linspace(0.0, 1.0, _SAMPLES)
    values = f(np.tile(grid, (n, 1)))
    k = np.argmin(values, axis=1)
    rows = np.arange(n)
    best, best_t = values[rows, k], grid[k]
    lo = grid[np.maximum(k - 1, 0)]
    hi = grid[np.minimum(k + 1, _SAMPLES - 1)]
    c = hi - _GOLDEN * (hi - lo)
    e = lo + _GOLDEN * (hi - lo)
    fc, fe = f(c[:, None])[:, 0], f(e[:, None])[:, 0]
    for _ in range(_GOLDEN_STEPS):
        left = fc < fe  # the minimum is in [lo, e]
        lo = np.where(left, lo, c)
        hi = np.where(left, e, hi)
        probe = np.where(left, hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo))
        fp = f(probe[:, None])[:, 0]
        c, e = np.where(left, probe, e), np.where(left, c, probe)
        fc, fe = np.where(left, fp, fe), np.where(left, fc, fp)
    for t, v in ((c, fc), (e, fe)):
        better = v < best
        best, best_t = np.where(better, v, best), np.where(better, t, best_t)
    return best, best_t


# ----- the extent -----------------------------------------------------------------------


def geo_problems(scenario: Scenario) -> list[str]:
    """What a geographic scenario's frame cannot hold, one ``<JSON path>: <what>`` line
    each: a position (a SAM's whole disk) farther than ``MAX_GEO_EXTENT_KM`` from the
    origin, and an airport or synthetic start inside a SAM's geodesic cover but outside
    its disk (the planner could not take off from it). Empty for a km mission."""
    origin = scenario.geo
    if origin is None:
        return []
    problems: list[str] = []
    limit = MAX_GEO_EXTENT_KM
    for path, x, y, reach in _placed(scenario):
        far = math.hypot(x, y) + reach
        if far > limit:
            what = "the SAM's disk reaches" if reach else "it is"
            problems.append(
                f"{path}: {what} {far:,.0f} km from the geo origin ({origin.lat0:g},"
                f" {origin.lon0:g}); a geographic mission reaches at most {limit:,.0f} km"
                f" from its origin, where the km frame's distances are off by"
                f" {100 * frame_distortion(origin):.1f} %: put the origin in the mission's"
                " middle, or split the mission"
            )
    if problems:
        return problems
    env = scenario.environment
    places = [(f"$.environment.airports[{i}]", a.id, a.x, a.y) for i, a in enumerate(env.airports)]
    places += [
        (f"$.environment.synthetic_starts[{json.dumps(k)}]", k, p.x, p.y)
        for k, p in env.synthetic_starts.items()
    ]
    for sam in env.sams:
        cover = sam_cover(origin, sam.x, sam.y, sam.range)
        for path, place_id, x, y in places:
            d = math.hypot(x - sam.x, y - sam.y)
            if sam.range <= d < cover:
                problems.append(
                    f"{path}: {place_id!r} is {d:.3f} km from SAM {sam.id!r}, inside the"
                    f" {cover:.3f} km the planner keeps clear of it there (its"
                    f" {sam.range:g} km disk, widened by the km frame's"
                    f" {100 * (cover / sam.range - 1):.2f} % stretch so far from the origin):"
                    " move it or the SAM"
                )
    return problems


def _placed(scenario: Scenario) -> Iterator[tuple[str, float, float, float]]:
    """(JSON path, x, y, how far beyond the point it reaches) of every position."""
    from planner.edits import (
        AddSam,
        AddTarget,
        DisableDrone,
        MoveSam,
        MoveTarget,
        RemoveSam,
        RemoveTarget,
        RevealSam,
        SetFuel,
        SetPriority,
    )

    env = scenario.environment
    for i, a in enumerate(env.airports):
        yield f"$.environment.airports[{i}]", a.x, a.y, 0.0
    for i, t in enumerate(env.targets):
        yield f"$.environment.targets[{i}]", t.x, t.y, 0.0
    ranges = {s.id: s.range for s in env.sams}
    for i, s in enumerate(env.sams):
        yield f"$.environment.sams[{i}]", s.x, s.y, s.range
    for k, p in env.synthetic_starts.items():
        yield f"$.environment.synthetic_starts[{json.dumps(k)}]", p.x, p.y, 0.0
    for i, edit in enumerate(scenario.timeline):
        match edit:
            case AddTarget() | MoveTarget():
                yield f"$.timeline[{i}]", edit.x, edit.y, 0.0
            case AddSam():
                ranges[edit.id] = edit.range
                yield f"$.timeline[{i}]", edit.pos[0], edit.pos[1], edit.range
            case MoveSam():
                reach = edit.range if edit.range is not None else ranges.get(edit.id, 0.0)
                yield f"$.timeline[{i}]", edit.pos[0], edit.pos[1], reach
            case (
                RemoveTarget()
                | SetPriority()
                | RemoveSam()
                | RevealSam()
                | DisableDrone()
                | SetFuel()
            ):
                pass  # places nothing
            case _:  # pragma: no cover - the union is closed
                assert_never(edit)
