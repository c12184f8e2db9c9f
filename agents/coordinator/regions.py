"""Regions in words: "north", "south-east", "the centre", as parts of the mission's area.

Regions are relative to the bounding box of the known airports and targets: north / south /
east / west are the halves beyond the box's middle line (a target on the line belongs to
both), north-east etc. the quarters, centre the middle third on both axes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["REGIONS", "Box", "Point", "region_box", "region_targets", "regions_in"]

REGIONS = (
    "north",
    "south",
    "east",
    "west",
    "north-east",
    "north-west",
    "south-east",
    "south-west",
    "centre",
)

Point = tuple[float, float]
Box = tuple[float, float, float, float]  # (x0, y0, x1, y1)

_REGION_RE = re.compile(
    r"\b(?:(north|south)[\s-]*(east|west)(?:ern)?|(north|south)(east|west)(?:ern)?|"
    r"(north|south|east|west)(?:ern)?|(cent(?:re|er|ral)|middle))\b",
    re.I,
)


def regions_in(clause: str) -> list[str]:
    """The regions a clause names (one of ``REGIONS`` each), in order, once each."""
    found = []
    for m in _REGION_RE.finditer(clause):
        if m.group(1) or m.group(3):
            ns, ew = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            name = f"{ns.lower()}-{ew.lower()}"
        elif m.group(5):
            name = m.group(5).lower()
        else:
            name = "centre"
        if name not in found:
            found.append(name)
    return found


@dataclass(frozen=True)
class _Box:
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def mid(self) -> Point:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2


def region_box(points: Iterable[Point]) -> Box:
    """(x0, y0, x1, y1): the bounding box regions are relative to."""
    pts = list(points)
    if not pts:
        return (0.0, 0.0, 0.0, 0.0)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return (min(xs), min(ys), max(xs), max(ys))


def _in_region(region: str, x: float, y: float, box: _Box) -> bool:
    mx, my = box.mid
    if region == "centre":
        w, h = box.x1 - box.x0, box.y1 - box.y0
        return (
            box.x0 + w / 3 <= x <= box.x0 + 2 * w / 3 and box.y0 + h / 3 <= y <= box.y0 + 2 * h / 3
        )
    ok = True
    for part in region.split("-"):
        ok &= {"north": y >= my, "south": y <= my, "east": x >= mx, "west": x <= mx}[part]
    return ok


def region_targets(region: str, targets: Mapping[str, Point | None], box: Box) -> list[str]:
    """The targets (id -> position) inside ``region`` of ``box``, in the given order."""
    b = _Box(*box)
    return [t for t, p in targets.items() if p is not None and _in_region(region, p[0], p[1], b)]
