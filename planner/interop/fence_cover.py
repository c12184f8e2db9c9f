"""Exclusion polygons (no-fly zones) as disks the SAM-avoiding geometry already handles.

The planner's obstacles are disks (``planner.geometry``), so a polygon is covered by a ring
of disks centred on its boundary: ``n`` centres spaced equally along it and a radius of one
spacing. Every boundary point then lies within half a spacing of a centre (along the
boundary, so at most that far in a straight line), inside an open disk by at least half its
radius; neighbouring disks overlap, and overlapping disks form one obstacle (no
path squeezes between them). A path from outside can therefore never cross the boundary:
the zone is avoided, never flown through. The cover is conservative: it reaches up to one
radius beyond the boundary (the margin the planner keeps comes on top), and the inside of a
large zone is left out of reach rather than filled.

The disks count against the mission's SAMs (``limits.MAX_SAMS``): the spacing is the total
perimeter shared out over the disks left after the circle fences, and never under
``MIN_SPACING_KM``. Each cover is checked with shapely: the ring of disks (as polygons
inscribed in the circles, so inside them) must hold the whole boundary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from shapely import LineString, Point, Polygon, unary_union

from planner.errors import PlannerError
from planner.limits import MAX_SAM_RANGE_KM, MIN_SAM_RANGE_KM

__all__ = ["MIN_DISKS", "MIN_SPACING_KM", "ZoneCover", "cover_zones"]

MIN_SPACING_KM: Final = 0.25  # finer would spend SAMs on a margin the planner adds anyway
MIN_DISKS: Final = 3  # per zone


@dataclass(frozen=True)
class ZoneCover:
    """One zone's ring: its disk centres (km) and their common radius (km)."""

    centres: list[tuple[float, float]]
    radius: float


def cover_zones(zones: list[Polygon], disks: int) -> list[ZoneCover]:
    """A ring of disks for each zone (simple polygons in km), ``disks`` of them at most in
    all; PlannerError when the zones need more (``MIN_DISKS`` each)."""
    if not zones:
        return []
    if disks < MIN_DISKS * len(zones):
        raise PlannerError(
            f"{len(zones)} no-fly zone(s) need at least {MIN_DISKS * len(zones)} disks,"
            f" {max(disks, 0)} are left under the SAM limit"
        )
    total = sum(zone.exterior.length for zone in zones)
    spacing = max(MIN_SPACING_KM, total / (disks - len(zones)))
    covers = []
    for zone in zones:
        ring = zone.exterior
        count = max(MIN_DISKS, math.ceil(ring.length / spacing))
        step = ring.length / count
        radius = min(max(step, MIN_SAM_RANGE_KM), MAX_SAM_RANGE_KM)
        if radius < step:  # a zone too large for the largest SAM at this many disks
            raise PlannerError(
                f"a no-fly zone {ring.length:,.0f} km round needs disks larger than"
                f" {MAX_SAM_RANGE_KM:g} km with the {disks} disks left"
            )
        centres = [_xy(ring.interpolate(k * step)) for k in range(count)]
        _check(ring, centres, radius)
        covers.append(ZoneCover(centres, radius))
    return covers


def _xy(point: Point) -> tuple[float, float]:
    return float(point.x), float(point.y)


def _check(ring: LineString, centres: list[tuple[float, float]], radius: float) -> None:
    """The disks (inscribed polygons: inside the true circles) hold the whole boundary."""
    union = unary_union([Point(c).buffer(radius, quad_segs=32) for c in centres])
    if ring.difference(union).length > 1e-9 * ring.length:
        raise PlannerError("a no-fly zone's ring of disks leaves part of its boundary open")
