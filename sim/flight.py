"""A drone's flight: the path geometry it follows and the waypoints it collects on the way.

A ``Flight`` is what the simulation flies: a ``planner.geometry.Path`` (straight lines and
arcs, as the planner produces them) and the arc lengths at which planned targets lie. Also
here: the pieces of a path as flat arrays for the numba kernel, cutting a path at an arc
length (``slice_path``), and the holding circle.
"""

from __future__ import annotations

import math
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from planner.errors import PlannerError
from planner.geometry import Arc, Line, Path, SamField
from planner.mission import Mission
from planner.model import Environment

__all__ = ["Flight", "hold_circle", "lay_out", "piece_table", "slice_path"]

# Piece tables made ahead of the tick (``lay_out``), by path: entries hold their path, so
# an id is never reused while its entry lives.
_TABLES_KEPT = 16_384
_tables: OrderedDict[int, tuple[Path, np.ndarray]] = OrderedDict()
_tables_lock = threading.Lock()

# Rows of a flight's piece array (see ``Flight.pieces``).
KIND, AX, AY, BX, BY, SGN, PLEN, PCUM, PHDG = range(9)
N_PIECE_ROWS = 9
LINE, ARC = 0, 1


@dataclass(frozen=True)
class Flight:
    """A path to follow and the targets to collect on it (see the module's docstring)."""

    path: Path
    waypoints: tuple[tuple[str, float], ...] = ()  # (target id, arc length), ascending
    holding: bool = False  # a holding circle: arc length wraps around

    @staticmethod
    def from_route(mission: Mission, route: list[str]) -> Flight | None:
        """The flight of a planned route (node ids); None if it goes nowhere."""
        nodes = mission.nodes(list(route))
        if len(nodes) < 2:
            return None
        legs = [mission.paths.path(a, b) for a, b in zip(nodes, nodes[1:])]
        path = mission.route_path(nodes)  # the legs joined, as the solution's polyline was
        if path.length <= 0.0:
            return None
        targets = mission.is_target  # kept by the mission: a set per route was 1,000 x 5,000
        waypoints = []
        s = 0.0
        for leg, node in zip(legs, nodes[1:]):
            s += leg.length
            if node in targets:
                waypoints.append((mission.node_ids[node], s))
        return Flight(path, tuple(waypoints))

    @staticmethod
    def through(environment: Environment, start: tuple[float, float], ids: list[str]) -> Flight:
        """From ``start`` through the nodes ``ids`` (targets, airports) in order, on the
        shortest paths that avoid ``environment``'s SAMs (pass the *known* environment: a
        drone plans with what is known). Raises PlannerError if a node is unknown or cannot
        be reached."""
        points = [tuple(map(float, start))]
        for node_id in ids:
            pos = environment.position(node_id)
            if pos is None:
                raise PlannerError(f"unknown node {node_id!r}")
            points.append(pos)
        table = SamField([(s.x, s.y, s.range) for s in environment.sams]).all_pairs(
            np.array(points)
        )
        legs = [table.path(k, k + 1) for k in range(len(points) - 1)]
        target_ids = {t.id for t in environment.targets}
        waypoints, s = [], 0.0
        for leg, node_id in zip(legs, ids):
            s += leg.length
            if node_id in target_ids:
                waypoints.append((node_id, s))
        return Flight(Path.concat(legs), tuple(waypoints))

    @property
    def length(self) -> float:
        """The path's length (km)."""
        return self.path.length

    @cached_property
    def pieces(self) -> np.ndarray:
        """(9, p) float64: per piece its kind, geometry, length, start offset and heading.

        Lines: (AX, AY) start, (BX, BY) the vector to the end, PHDG its heading.
        Arcs: (AX, AY) centre, BX radius, BY start angle, SGN +1 (CCW) or -1 (CW).
        PCUM is the path's own cumulative offset, so positions match ``Path.locate``."""
        table = _laid_out(self.path)
        return table if table is not None else piece_table(self.path)

    def remaining_waypoints(self, s: float) -> tuple[tuple[str, float], ...]:
        """The waypoints strictly beyond arc length ``s``."""
        return tuple(w for w in self.waypoints if w[1] > s)


def slice_path(path: Path, s0: float) -> Path | None:
    """The part of ``path`` after arc length ``s0``; None if nothing is left."""
    if s0 <= 0.0:
        return path
    if s0 >= path.length:
        return None
    cum = path.offsets
    i = max(0, bisect_right(cum, s0) - 1)
    u = s0 - cum[i]
    first = path.pieces[i]
    head: Line | Arc
    if isinstance(first, Line):
        x, y, _ = first.locate(u)
        head = Line((x, y), first.end)
    else:
        sign = 1.0 if first.sweep >= 0.0 else -1.0
        turned = sign * u / first.radius if first.radius > 0.0 else 0.0
        head = Arc(first.center, first.radius, first.start_angle + turned, first.sweep - turned)
    pieces = tuple(p for p in (head, *path.pieces[i + 1 :]) if p.length > 0.0)
    if not pieces:
        return None
    return Path(pieces, path.length - s0)


def hold_circle(x: float, y: float, heading: float, radius: float, left: bool) -> Path:
    """A full circle of ``radius`` through (x, y), tangent to ``heading``, turning left
    (counter-clockwise) or right."""
    side = 0.5 * math.pi if left else -0.5 * math.pi
    cx, cy = x + radius * math.cos(heading + side), y + radius * math.sin(heading + side)
    start = math.atan2(y - cy, x - cx)
    sweep = 2.0 * math.pi if left else -2.0 * math.pi
    arc = Arc((cx, cy), radius, start, sweep)
    return Path((arc,), arc.length)


def piece_table(path: Path) -> np.ndarray:
    """``path``'s pieces as ``Flight.pieces`` lays them out (read-only: it may be shared)."""
    pieces = path.pieces
    out = np.zeros((N_PIECE_ROWS, len(pieces)))
    cum = path.offsets
    for i, piece in enumerate(pieces):
        out[PCUM, i] = cum[i]
        out[PLEN, i] = piece.length
        if isinstance(piece, Line):
            (x0, y0), (x1, y1) = piece.start, piece.end
            out[KIND, i] = LINE
            out[AX, i], out[AY, i] = x0, y0
            out[BX, i], out[BY, i] = x1 - x0, y1 - y0
            out[PHDG, i] = math.atan2(y1 - y0, x1 - x0) if piece.length > 0.0 else 0.0
        else:
            out[KIND, i] = ARC
            out[AX, i], out[AY, i] = piece.center
            out[BX, i], out[BY, i] = piece.radius, piece.start_angle
            out[SGN, i] = 1.0 if piece.sweep >= 0.0 else -1.0
    out.flags.writeable = False
    return out


def lay_out(paths: Iterable[Path]) -> None:
    """Make the piece tables of paths about to fly now (a worker thread), so the tick that
    starts their flights (1,000 at once when a swarm is re-tasked) only looks them up."""
    for path in paths:
        table = piece_table(path)
        with _tables_lock:
            _tables[id(path)] = (path, table)
            while len(_tables) > _TABLES_KEPT:
                _tables.popitem(last=False)


def _laid_out(path: Path) -> np.ndarray | None:
    with _tables_lock:
        entry = _tables.get(id(path))
    return entry[1] if entry is not None and entry[0] is path else None
