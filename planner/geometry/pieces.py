"""The pieces a path is made of: straight ``Line`` segments and circular ``Arc`` s.

Both are immutable and answer the same questions: ``start``, ``end``, ``length``,
``reversed()`` and ``locate(s)`` (position and heading at arc length ``s``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Arc", "Line", "Piece", "Point", "wrap_angle"]

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Line:
    """A straight piece from ``start`` to ``end``."""

    start: Point
    end: Point

    @property
    def length(self) -> float:
        """Straight-line length (km)."""
        return math.hypot(self.end[0] - self.start[0], self.end[1] - self.start[1])

    def reversed(self) -> Line:
        """The same segment flown from ``end`` to ``start``."""
        return Line(self.end, self.start)

    def locate(self, s: float) -> tuple[float, float, float]:
        """(x, y, heading) at distance ``s`` from ``start``, clamped to the segment; heading in
        radians from east (0 for a zero-length segment).
        """
        (x0, y0), (x1, y1) = self.start, self.end
        dx, dy = x1 - x0, y1 - y0
        length = math.hypot(dx, dy)
        if length <= 0.0:
            return x0, y0, 0.0
        t = min(max(s / length, 0.0), 1.0)
        return x0 + t * dx, y0 + t * dy, math.atan2(dy, dx)


@dataclass(frozen=True, slots=True)
class Arc:
    """A piece of the circle ``center``/``radius`` from ``start_angle`` turning by ``sweep``.

    Angles in radians; ``sweep > 0`` is counter-clockwise.
    """

    center: Point
    radius: float
    start_angle: float
    sweep: float

    def _point(self, angle: float) -> Point:
        return (
            self.center[0] + self.radius * math.cos(angle),
            self.center[1] + self.radius * math.sin(angle),
        )

    @property
    def start(self) -> Point:
        """Where the arc begins."""
        return self._point(self.start_angle)

    @property
    def end(self) -> Point:
        """Where the arc ends."""
        return self._point(self.start_angle + self.sweep)

    @property
    def end_angle(self) -> float:
        """Angle (radians) of the end point on the circle."""
        return self.start_angle + self.sweep

    @property
    def length(self) -> float:
        """Arc length (km): radius times the absolute sweep."""
        return self.radius * abs(self.sweep)

    def reversed(self) -> Arc:
        """The same arc flown from its end back to its start."""
        return Arc(self.center, self.radius, self.start_angle + self.sweep, -self.sweep)

    def locate(self, s: float) -> tuple[float, float, float]:
        """(x, y, heading) at arc length ``s`` from the start, clamped to the arc; the heading is
        the tangent in the direction of travel.
        """
        sign = 1.0 if self.sweep >= 0.0 else -1.0
        span = min(max(s, 0.0), self.length)
        a = self.start_angle + sign * (span / self.radius if self.radius > 0 else 0.0)
        x, y = self._point(a)
        # Tangent direction: +90 degrees from the radius when turning CCW, -90 when CW.
        return x, y, wrap_angle(a + sign * 0.5 * math.pi)

    def sample_angles(self, max_sagitta: float) -> np.ndarray:
        """Angles from start to end such that every chord's sagitta is <= max_sagitta."""
        if self.radius <= 0.0 or self.sweep == 0.0:
            return np.array([self.start_angle, self.end_angle])
        ratio = min(max_sagitta / self.radius, 1.0)
        # sagitta of a chord spanning angle d is R * (1 - cos(d / 2))
        max_step = 2.0 * math.acos(1.0 - ratio)
        k = max(1, math.ceil(abs(self.sweep) / max_step - 1e-12))
        return self.start_angle + self.sweep * np.linspace(0.0, 1.0, k + 1)


Piece = Line | Arc


def wrap_angle(a: float) -> float:
    """Angle into (-pi, pi]."""
    return math.atan2(math.sin(a), math.cos(a))
