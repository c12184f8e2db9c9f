"""Exact SAM-avoiding shortest paths in the plane.

Contract
--------
* SAMs are disks ``(x, y, true_radius)`` in km. A drone must never enter an open TRUE disk;
  touching a circle is allowed.
* Planning uses buffered disks, ``planning_radius(r) = r + max(MARGIN_ABS, MARGIN_REL * r)``,
  so that a drone following a plan keeps at least that margin away from every true disk.
  Overlapping buffered disks form one obstacle: no path squeezes between them.
* ``SamField.shortest_path(p, q)`` / ``SamField.all_pairs(points)`` return the exact shortest
  path avoiding the open buffered disks: straight tangent segments and arcs of the buffered
  circles, found on a tangent visibility graph with Dijkstra.
* A query point strictly inside a TRUE disk is unreachable (distance ``inf``, except 0 to
  itself). A query point inside a buffer ring but outside every true disk first escapes
  radially to the buffered circle (moving radially away from the centre never enters the
  true disk); if that escape point is inside another buffered disk the point is unreachable.
* ``Path.sample()`` returns a polyline whose points AND chords stay outside every true disk
  (arc chords have sagitta at most half the smallest margin).
* Lengths agree with ``PathTable.dist`` to floating-point rounding (~1e-12 relative), not
  bit for bit: Dijkstra and ``Path`` sum the same pieces in different groupings.

Modules
-------
* ``margins`` -- the safety margins (``MARGIN_ABS``, ``MARGIN_REL``, ``planning_radius``) and
  the geometric tolerances.
* ``pieces`` -- ``Line`` and ``Arc``, the pieces a path is made of.
* ``path`` -- ``Path``, a chain of pieces: length, ``locate``, ``sample``, ``concat``.
* ``sam_field`` -- ``SamField``, the SAMs as obstacles: the static tangent graph (``_static``,
  with the disk grid and the point and segment tests of ``_disks``), each query set's entries
  and the distance rows (``_search``). Every kernel is numba ``nogil``: a thread computing a
  table never holds the GIL, and ``workers`` threads can share the rows.
* ``table`` -- ``PathTable``, all-pairs distances and each leg's geometry, found lazily.
* ``distance_table`` -- ``DistanceTable``, the table of named points kept up to date edit by
  edit (``apply(AddPoint(...))``, ``MoveSam``...): an edit recomputes only the pairs it may
  change (``_incremental``), and the result equals a rebuild from scratch.
"""

from __future__ import annotations

from planner.geometry.distance_table import (
    AddPoint,
    AddSam,
    DistanceTable,
    EditReport,
    MovePoint,
    MoveSam,
    RemovePoint,
    RemoveSam,
    TableEdit,
)
from planner.geometry.margins import MARGIN_ABS, MARGIN_REL, planning_radius
from planner.geometry.path import Path
from planner.geometry.pieces import Arc, Line, Piece, Point
from planner.geometry.sam_field import SamField
from planner.geometry.table import PathTable

__all__ = [
    "MARGIN_ABS",
    "MARGIN_REL",
    "AddPoint",
    "AddSam",
    "Arc",
    "DistanceTable",
    "EditReport",
    "Line",
    "MovePoint",
    "MoveSam",
    "Path",
    "PathTable",
    "Piece",
    "Point",
    "RemovePoint",
    "RemoveSam",
    "SamField",
    "TableEdit",
    "planning_radius",
]
